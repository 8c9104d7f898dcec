/**
 * Scenarios every wire format must pass, against a loopback server speaking it: full runs,
 * streams, rate limits and refusals, failures mid-stream, cut streams, errors sent with
 * HTTP 200, both timeouts, masked credentials.
 */
import { Agent, ChatModel, type Json, Message } from "@agentfx/core"
import { expect } from "@effect/vitest"
import { Cause, type Duration, Effect, Exit, Fiber, Option, Result, Schedule, Stream, Tracer } from "effect"
import { TestClock } from "effect/testing"
import type * as Http from "node:http"
import { collect, generate, request, streaming, weatherAgent } from "./fixtures.js"
import { framed, type ModelOptions, stream, streamedAnswer, type WireFormat } from "./formats.js"
import { eventually, hang, hangAfter, json, loopback, type Recorded, sleepsUntil } from "./loopback.js"

const noRetry = { schedule: Schedule.recurs(0) }

/** The stream's parts until it ends, and its error if it fails. */
const partsAndError = (req: ChatModel.ChatRequest = request()) =>
  Effect.flatMap(ChatModel.ChatModel, (m) =>
    m.stream(req).pipe(
      Stream.result,
      Stream.runCollect,
      Effect.map((items) => {
        const parts = items.flatMap((item) => (Result.isSuccess(item) ? [item.success] : []))
        const error = items.flatMap((item) => (Result.isFailure(item) ? [item.failure] : []))[0]
        return { parts, error }
      })
    ))

/** The server refuses the first request with `tooMany` (a 429 asking for 150 ms); the run waits that long, retries, completes. */
export const rateLimitedThenCompletes = (
  format: WireFormat,
  tooMany: (res: Http.ServerResponse) => void
): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res, index) =>
      index === 0 ? tooMany(res) : index === 1 ? format.callWeather(res) : format.answer(res)
    )
    const exit = yield* Agent.run(yield* weatherAgent, { input: "Weather in Oslo?" }).pipe(Effect.provide(format.model(server.url)))
    expect(exit._tag === "Completed" && exit.text).toBe("It is sunny in Oslo.")
    expect(server.requests).toHaveLength(3)
    expect(server.requests[1]!.body).toEqual(server.requests[0]!.body)
    expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(145)
  }).pipe(Effect.scoped)

/** The server answers `refuse` (a 400); the run fails with that `ModelError`, after one request. */
export const refused = (
  format: WireFormat,
  refuse: (res: Http.ServerResponse) => void,
  message: (url: string) => string
): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => refuse(res))
    const error = yield* Agent.run(yield* weatherAgent, { input: "Weather?" }).pipe(
      Effect.provide(format.model(server.url)),
      Effect.flip
    )
    expect(error._tag === "ModelError" && [error.reason, error.status, error.isTransient, error.message]).toEqual([
      "invalid-request",
      400,
      false,
      message(server.url)
    ])
    expect(server.requests).toHaveLength(1)
  }).pipe(Effect.scoped)

/** The server never answers; interrupting the run closes the connection the server sees. */
export const abortedWhenInterrupted = (format: WireFormat): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => hang(res))
    const fiber = yield* Agent.run(yield* weatherAgent, { input: "Weather?" }).pipe(
      Effect.provide(format.model(server.url)),
      Effect.forkChild
    )
    yield* eventually(() => server.requests.length === 1)
    yield* Fiber.interrupt(fiber)
    expect(Exit.hasInterrupts(yield* Fiber.await(fiber))).toBe(true)
    yield* eventually(() => server.aborted.length === 1)
    expect(server.aborted).toEqual([0])
  }).pipe(Effect.scoped)

const sunnyText: ChatModel.ChatResponse = {
  text: "It is sunny in Oslo.",
  toolCalls: [],
  finishReason: "stop",
  usage: { inputTokens: 30, outputTokens: 7, totalTokens: 37 }
}

/** The plain answer as `format`'s adapter gives it, with what it tells telemetry. */
const sunny = (format: WireFormat): ChatModel.ChatResponse => ({
  ...sunnyText,
  provider: format.telemetry.provider,
  providerFinishReasons: format.telemetry.answer
})

/**
 * The server streams "It is sunny " + "in Oslo." (30 input, 7 output tokens); the adapter
 * emits the two text deltas, then exactly one `Done`. Returns what the server received.
 */
export const streamsTextThenDone = (format: WireFormat): Effect.Effect<ReadonlyArray<Recorded>, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback(stream(format, streamedAnswer(format)))
    const parts = yield* collect().pipe(Effect.provide(format.model(server.url)))
    expect(parts).toEqual([
      { _tag: "TextDelta", text: "It is sunny " },
      { _tag: "TextDelta", text: "in Oslo." },
      { _tag: "Done", response: sunny(format) }
    ])
    return server.requests
  }).pipe(Effect.scoped)

/**
 * The model calls get_weather(Oslo) (20 + 5 tokens), then answers (30 + 7 tokens): the run
 * completes with the answer and the summed usage. Returns what the server received.
 */
export const weatherRunCompletes = (format: WireFormat): Effect.Effect<ReadonlyArray<Recorded>, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res, index) => (index === 0 ? format.callWeather(res) : format.answer(res)))
    const exit = yield* Agent.run(yield* weatherAgent, { input: "Weather in Oslo?" }).pipe(Effect.provide(format.model(server.url)))
    expect(exit._tag === "Completed" && [exit.text, exit.usage]).toEqual([
      "It is sunny in Oslo.",
      { inputTokens: 50, outputTokens: 12, totalTokens: 62 }
    ])
    expect(server.requests).toHaveLength(2)
    return server.requests
  }).pipe(Effect.scoped)

/** Three calls with the weather tool and tool choice `none`, `required`, `{ tool: "get_weather" }`: what the server received for each. */
export const toolChoicesSent = (format: WireFormat): Effect.Effect<ReadonlyArray<unknown>, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => format.answer(res))
    const tools = (yield* weatherAgent).toolDefinitions
    const choices: ReadonlyArray<ChatModel.ToolChoice> = ["none", "required", { tool: "get_weather" }]
    yield* Effect.forEach(choices, (toolChoice) => generate(request({ tools, toolChoice }))).pipe(
      Effect.provide(format.model(server.url))
    )
    return server.requests.map((r) => r.body.tool_choice)
  }).pipe(Effect.scoped)

/**
 * The server fails mid-stream for a transient reason before any text: the error carries the
 * server's message and class; retried, the call streams the answer.
 */
export const transientMidStreamRetried = (format: WireFormat): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const failing = [...format.streamed.before, format.transientEvent.event]
    const server = yield* loopback((req, res, index) => stream(format, index < 2 ? failing : streamedAnswer(format))(req, res, index))
    const { error, parts } = yield* partsAndError().pipe(Effect.provide(format.model(server.url, { retry: noRetry })))
    expect(parts).toEqual([])
    expect(error !== undefined && [error.reason, error.isTransient, error.message]).toEqual([
      "unavailable",
      true,
      `${format.provider(server.url)} failed mid-stream (${format.transientEvent.code}): ${format.transientEvent.message}`
    ])
    const retried = yield* collect().pipe(Effect.provide(format.model(server.url)))
    expect(retried.at(-1)).toEqual({ _tag: "Done", response: sunny(format) })
    expect(server.requests).toHaveLength(3)
  }).pipe(Effect.scoped)

/** The same failure after text was emitted: not retried, the stream fails with the server's message and class. */
export const transientAfterTextFails = (format: WireFormat): Effect.Effect<ChatModel.ModelError, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback(stream(format, [...format.streamed.before, format.streamed.deltas[0], format.transientEvent.event]))
    const { error, parts } = yield* partsAndError().pipe(Effect.provide(format.model(server.url)))
    expect(parts).toEqual([{ _tag: "TextDelta", text: "It is sunny " }])
    expect(error !== undefined && [error.reason, error.isTransient, error.message]).toEqual([
      "unavailable",
      true,
      `${format.provider(server.url)} failed mid-stream (${format.transientEvent.code}): ${format.transientEvent.message}`
    ])
    expect(server.requests).toHaveLength(1)
    return error!
  }).pipe(Effect.scoped)

/** The connection ends before the answer's last event: `invalid-response`, never an answer; a run fails with it. */
export const cutStreamIsInvalid = (format: WireFormat): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback(stream(format, [...format.streamed.before, ...format.streamed.deltas]))
    const model = format.model(server.url, { retry: noRetry })
    const { error, parts } = yield* partsAndError().pipe(Effect.provide(model))
    expect(parts.map((part) => part._tag)).toEqual(["TextDelta", "TextDelta"])
    expect(error !== undefined && [error.reason, error.message]).toEqual(["invalid-response", expect.stringContaining("the connection was cut")])
    const failed = yield* Agent.run(yield* weatherAgent, { input: "Weather?" }).pipe(Effect.provide(streaming(model)), Effect.flip)
    expect(failed._tag === "ModelError" && failed.reason).toBe("invalid-response")
  }).pipe(Effect.scoped)

/** A 200 whose body is an error envelope: the server's message and class, for `generate` and for `stream`. */
export const errorWith200 = (format: WireFormat): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => json(res, format.errorWith200.body))
    const model = format.model(server.url, { retry: noRetry })
    const generated = yield* generate().pipe(Effect.provide(model), Effect.flip)
    const streamed = (yield* partsAndError().pipe(Effect.provide(model))).error
    for (const error of [generated, streamed]) {
      expect(error !== undefined && [error.reason, error.isTransient, error.message]).toEqual([
        "unavailable",
        true,
        expect.stringContaining(`answered HTTP 200 with an error (${format.errorWith200.code}): ${format.errorWith200.message}`)
      ])
    }
  }).pipe(Effect.scoped)

/**
 * Under the `TestClock`: a server that sends its headers and then nothing fails the stream
 * after exactly `idleTimeout`, with a transient error; the request is aborted.
 */
export const idleTimeout = (format: WireFormat): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => hangAfter(res, framed(format, format.streamed.before)))
    const model = format.model(server.url, { retry: noRetry, idleTimeout: "30 seconds", requestTimeout: "10 minutes" })
    const fiber = yield* Effect.forkChild(partsAndError().pipe(Effect.provide(model)))
    yield* eventually(() => sleepsUntil(30_000))
    yield* TestClock.adjust("29999 millis")
    expect(fiber.pollUnsafe()).toBeUndefined()
    yield* TestClock.adjust("1 millis")
    const { error, parts } = yield* Fiber.join(fiber)
    expect(parts).toEqual([])
    expect(error !== undefined && [error.reason, error.isTransient, error.message]).toEqual([
      "unavailable",
      true,
      expect.stringMatching(/ sent nothing for 30s \(idleTimeout\)\.$/)
    ])
    yield* eventually(() => server.aborted.length === 1)
  }).pipe(Effect.scoped)

/**
 * Under the `TestClock`: a server that never answers fails `generate` after exactly
 * `requestTimeout`; retried like any transient error, the second attempt gets the full time again.
 */
export const requestTimeout = (format: WireFormat): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res, index) => (index === 0 ? hang(res) : format.answer(res)))
    const retry = { schedule: Schedule.spaced("1 second").pipe(Schedule.upTo({ times: 1 })) }
    const fiber = yield* Effect.forkChild(generate().pipe(Effect.provide(format.model(server.url, { retry, requestTimeout: "1 minute" })), Effect.result))
    yield* eventually(() => server.requests.length === 1)
    yield* TestClock.adjust("59999 millis")
    expect(fiber.pollUnsafe()).toBeUndefined()
    yield* TestClock.adjust("1 millis")
    yield* eventually(() => server.aborted.length === 1)
    yield* TestClock.adjust("1 second")
    const result = yield* Fiber.join(fiber)
    expect(result).toEqual(Result.succeed(sunny(format)))
    expect(server.requests).toHaveLength(2)
  }).pipe(Effect.scoped)

/** The timeout's error when retries are off: its message and class. */
export const requestTimeoutError = (format: WireFormat): Effect.Effect<ChatModel.ModelError, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => hang(res))
    const fiber = yield* Effect.forkChild(generate().pipe(Effect.provide(format.model(server.url, { retry: noRetry, requestTimeout: "90 seconds" })), Effect.flip))
    yield* eventually(() => server.requests.length === 1)
    yield* TestClock.adjust("90 seconds")
    const error = yield* Fiber.join(fiber)
    expect([error.reason, error.isTransient, error.message]).toEqual([
      "unavailable",
      true,
      expect.stringMatching(/ did not finish within 1m 30s \(requestTimeout\)\.$/)
    ])
    return error
  }).pipe(Effect.scoped)

/** A timeout that is not a positive duration fails each call with an `invalid-request` naming it, before any request. */
export const invalidTimeouts = (format: WireFormat): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => format.answer(res))
    const model = format.model(server.url, { idleTimeout: 0, requestTimeout: -5 })
    const generated = yield* generate().pipe(Effect.provide(model), Effect.flip)
    const streamed = (yield* partsAndError().pipe(Effect.provide(model))).error
    for (const error of [generated, streamed]) {
      expect(error !== undefined && [error.reason, error.message]).toEqual([
        "invalid-request",
        expect.stringContaining(
          "idleTimeout must be a positive duration (Duration.infinity disables it), got 0; requestTimeout must be a positive duration (Duration.infinity disables it), got -5."
        )
      ])
    }
    // longer than a timer can wait (it would never fire), and a maxRetryAfter that is no duration (a cast away)
    const beyond = format.model(server.url, { idleTimeout: "25 days", retry: { maxRetryAfter: "abc" as Duration.Input } })
    const refused = yield* generate().pipe(Effect.provide(beyond), Effect.flip)
    expect([refused.reason, refused.message]).toEqual([
      "invalid-request",
      expect.stringContaining(
        "idleTimeout 25 days is longer than a timer can wait (2147483647 ms, about 24.8 days): it would never fire (Duration.infinity disables it); retry.maxRetryAfter must be a duration of zero or more, got abc."
      )
    ])
    expect(server.requests).toHaveLength(0)
  }).pipe(Effect.scoped)

/**
 * A server error that echoes the API key, the request's `Authorization`/`x-api-key`
 * header and a base URL with credentials: none of it reaches the `ModelError`.
 */
export const credentialsMasked = (format: WireFormat, key = "sk-live-0123456789abcdef"): Effect.Effect<string, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((req, res) =>
      json(res, {
        error: {
          message: `Incorrect API key provided: ${key}. Sent headers: authorization: ${String(req.headers.authorization ?? "none")}, x-api-key: ${
            String(req.headers["x-api-key"] ?? "none")
          }; see http://admin:hunter2secret@127.0.0.1/v1`,
          type: "invalid_request_error"
        }
      }, 401)
    )
    const error = yield* generate().pipe(Effect.provide(format.model(server.url, { apiKey: key })), Effect.flip)
    expect(error.reason).toBe("unauthorized")
    for (const secret of [key, "hunter2secret", "admin:"]) expect(error.message).not.toContain(secret)
    expect(error.message).toContain("Incorrect API key provided: ***.")
    expect(error.message).toContain("http://***@127.0.0.1/v1")
    return error.message
  }).pipe(Effect.scoped)

const withUser = (url: string) => url.replace("http://", "http://proxy:s3cret-pass@")

/** Credentials in the base URL are sent as `Authorization: Basic` (`fetch` refuses them in URLs) and masked in messages. */
export const urlCredentials = (format: WireFormat, options?: ModelOptions): Effect.Effect<ReadonlyArray<Recorded>, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res, index) => (index === 0 ? json(res, { error: "bad gateway" }, 502) : format.answer(res)))
    const model = format.model(server.url, { ...options, baseUrl: withUser, retry: noRetry })
    const failed = yield* generate().pipe(Effect.provide(model), Effect.flip)
    expect(failed.message).toBe(`${format.provider(server.url)} answered HTTP 502: bad gateway.`)
    yield* generate().pipe(Effect.provide(model))
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      `Basic ${Buffer.from("proxy:s3cret-pass").toString("base64")}`,
      `Basic ${Buffer.from("proxy:s3cret-pass").toString("base64")}`
    ])
    return server.requests
  }).pipe(Effect.scoped)

/** Credentials in the base URL and an `Authorization` API key: each call fails with an `invalid-request`, nothing is sent. */
export const urlCredentialsWithKey = (format: WireFormat): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => format.answer(res))
    const error = yield* generate().pipe(Effect.provide(format.model(server.url, { baseUrl: withUser })), Effect.flip)
    expect([error.reason, error.message]).toEqual([
      "invalid-request",
      `${format.provider(server.url)}: the base URL carries credentials and an API key is set as well; give one of them.`
    ])
    expect(server.requests).toHaveLength(0)
  }).pipe(Effect.scoped)

/** A blank API key: each call fails with an `invalid-request` naming it, nothing is sent. */
export const blankKey = (format: WireFormat): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => format.answer(res))
    for (const key of ["", "  "]) {
      const error = yield* generate().pipe(Effect.provide(format.model(server.url, { apiKey: key })), Effect.flip)
      expect([error.reason, error.message]).toEqual([
        "invalid-request",
        `${format.provider(server.url)}: the API key is blank; give the key (a blank key counts as unset).`
      ])
    }
    expect(server.requests).toHaveLength(0)
  }).pipe(Effect.scoped)

/** A tracer that records every span: its name, its attributes, and how it ended. */
export const recordingTracer = () => {
  const spans: Array<{ readonly name: string; readonly attributes: Map<string, unknown>; exit?: Exit.Exit<unknown, unknown> }> = []
  const tracer = Tracer.make({
    span: ({ annotations, kind, links, name, parent, startTime }) => {
      const record: (typeof spans)[number] = { name, attributes: new Map() }
      spans.push(record)
      return {
        _tag: "Span",
        name,
        spanId: `span-${spans.length}`,
        traceId: "trace-1",
        parent,
        annotations,
        status: { _tag: "Started", startTime },
        attributes: record.attributes,
        links,
        sampled: true,
        kind,
        end: (_endTime, exit) => void (record.exit = exit),
        attribute: (key, value) => void record.attributes.set(key, value),
        event: () => undefined,
        addLinks: () => undefined
      }
    }
  })
  return { spans, tracer }
}

/**
 * Spans of a failed call (the adapter's and the HTTP client's) against a server that echoes
 * the key and the `Authorization` header it got; `credentials` says what is configured: the
 * API key, credentials in the base URL, or both. No attribute and no recorded error holds
 * the key, the URL's password or the Basic token. Returns the adapter span's attributes.
 */
export const spansMasked = (format: WireFormat, credentials: "key" | "url" | "both"): Effect.Effect<Map<string, unknown>, unknown> =>
  Effect.gen(function*() {
    const key = "sk-live-0123456789abcdef"
    const server = yield* loopback((req, res) =>
      json(res, {
        error: { message: `Incorrect API key provided: ${key}; got ${String(req.headers.authorization)}`, type: "invalid_request_error" }
      }, 401)
    )
    const { spans, tracer } = recordingTracer()
    const options: ModelOptions = {
      ...(credentials === "url" ? { apiKey: null } : { apiKey: key }),
      ...(credentials === "key" ? {} : { baseUrl: withUser })
    }
    const error = yield* generate().pipe(Effect.provide(format.model(server.url, options)), Effect.flip, Effect.withTracer(tracer))
    expect(error.reason).toBe("unauthorized")
    const recorded = JSON.stringify(spans.map((span) => ({
      name: span.name,
      attributes: Object.fromEntries(span.attributes),
      error: span.exit !== undefined && Exit.isFailure(span.exit) ? Cause.pretty(span.exit.cause) : undefined
    })))
    const secrets = [
      ...(credentials === "url" ? [] : [key]),
      ...(credentials === "key" ? [] : ["s3cret-pass", Buffer.from("proxy:s3cret-pass").toString("base64")])
    ]
    for (const secret of secrets) expect(recorded).not.toContain(secret)
    expect(spans.map((span) => span.name)).toEqual(expect.arrayContaining([expect.stringMatching(/\.generate$/), "POST"]))
    return spans.find((span) => span.name.endsWith(".generate"))!.attributes
  }).pipe(Effect.scoped)

/** A tool call in the history nested deeper than `JSON.stringify` can go: an `invalid-request`, no request, no defect. */
export const unencodableHistory = (format: WireFormat): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => format.answer(res))
    let deep: Json.JsonValue = "Oslo"
    for (let i = 0; i < 20_000; i++) deep = [deep]
    const history = [Message.user("Weather?"), Message.assistant("", [{ id: "call_deep", name: "get_weather", args: deep }])]
    const exit = yield* generate(request({ messages: history })).pipe(Effect.provide(format.model(server.url, { retry: noRetry })), Effect.exit)
    expect(Exit.isFailure(exit) && !Cause.hasDies(exit.cause)).toBe(true)
    const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : Option.none()
    expect(Option.getOrUndefined(Option.map(error, (e) => [e.reason, e.message]))).toEqual([
      "invalid-request",
      `could not encode the request to ${format.provider(server.url)}: RangeError: Maximum call stack size exceeded`
    ])
    expect(server.requests).toHaveLength(0)
  }).pipe(Effect.scoped)
