/**
 * The fault suite: every adapter that speaks HTTP, driven through `Agent.run` (plain and
 * streamed) against servers that fail the ways servers do. Every run must end as
 * `Completed` or `Paused`, or fail with a typed `ModelError` — never a defect, never an
 * interruption, never a cut answer taken as whole. Timeouts run on real time here, with
 * generous bounds; the scenarios pin them exactly on the `TestClock`.
 */
import { Agent, type AgentExit, ChatModel } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, type Duration, Effect, Exit, Schedule } from "effect"
import type * as Http from "node:http"
import { streaming, weatherAgent } from "./fixtures.js"
import { unwritable } from "../src/internal/wireJson.js"
import { all, framed, streamedAnswer, type WireFormat } from "./formats.js"
import { hang, hangAfter, json, loopback, sse } from "./loopback.js"
import { recordingTracer } from "./scenarios.js"

interface Outcome {
  readonly tag: AgentExit.AgentExit["_tag"] | ChatModel.ModelError["reason"]
  readonly text?: string
  readonly message?: string
  readonly requests: number
  /** The body of the last request, as JSON. */
  readonly lastRequest: string
}

/** Generous, so that a loaded machine passes; the timeout tests set tight ones. */
const generous = { idleTimeout: "5 seconds", requestTimeout: "10 seconds" } as const
const tight = { idleTimeout: "250 millis", requestTimeout: "400 millis" } as const
const retryTwice = { schedule: Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: 2 })), maxRetryAfter: "2 seconds" } as const

/** One run of the weather agent against `handler`, plain or streamed: its outcome, checked to be typed. */
const run = (
  format: WireFormat,
  streamed: boolean,
  handler: (res: Http.ServerResponse, index: number) => void,
  timeouts: { readonly idleTimeout: Duration.Input; readonly requestTimeout: Duration.Input } = generous
) =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res, index) => handler(res, index))
    const model = format.model(server.url, { ...timeouts, retry: retryTwice })
    const started = performance.now()
    const exit = yield* Effect.exit(Agent.run(yield* weatherAgent, { input: "Weather in Oslo?" }).pipe(
      Effect.provide(streamed ? streaming(model) : model)
    ))
    expect(performance.now() - started).toBeLessThan(20_000)
    const lastRequest = JSON.stringify(server.requests.at(-1)?.body)
    if (Exit.isSuccess(exit)) {
      return { tag: exit.value._tag, text: exit.value._tag === "Completed" ? exit.value.text : undefined, requests: server.requests.length, lastRequest } as Outcome
    }
    expect(Cause.hasDies(exit.cause) || Cause.hasInterrupts(exit.cause)).toBe(false)
    const failure = Cause.findErrorOption(exit.cause)
    expect(failure._tag === "Some" && failure.value._tag).toBe("ModelError")
    const error = failure._tag === "Some" && failure.value instanceof ChatModel.ModelError ? failure.value : undefined
    return { tag: error!.reason, message: error!.message, requests: server.requests.length, lastRequest } as Outcome
  }).pipe(Effect.scoped)

/** Answers with `events` in the format's framing. */
const send = (format: WireFormat, res: Http.ServerResponse, events: ReadonlyArray<unknown>) => sse(res, events, { named: format.named })

/** The answer a format streams or sends, depending on the request. */
const answer = (format: WireFormat, streamed: boolean, res: Http.ServerResponse) =>
  streamed ? send(format, res, streamedAnswer(format)) : format.answer(res)

/** Arguments nested `levels` deep, as JSON text: `{"city":{"city":…"Oslo"…}}`. */
const deepArguments = (levels: number) => `${"{\"city\":".repeat(levels)}"Oslo"${"}".repeat(levels)}`

/** What the model is told of a call whose arguments nest too deep (core's admit, the default limit). */
const tooDeep = "Not run: its arguments nest deeper than 64 levels (the agent's limit); send smaller arguments"

for (const format of all) {
  describe(`fault suite: ${format.name}`, () => {
    for (const streamed of [false, true]) {
      const mode = streamed ? "streamed" : "plain"

      it.live(`${mode}: a server that never answers — unavailable (requestTimeout) after the retries`, () =>
        Effect.map(run(format, streamed, (res) => hang(res), tight), (outcome) => {
          expect([outcome.tag, outcome.requests]).toEqual(["unavailable", 3])
          expect(outcome.message).toMatch(/did not finish within 400ms \(requestTimeout\)\.$/)
        }))

      it.live(`${mode}: headers, then nothing — unavailable (a timeout) after the retries`, () =>
        Effect.map(run(
          format,
          streamed,
          (res) => hangAfter(res, streamed ? framed(format, format.streamed.before) : ""),
          // streamed: the request timeout far from the idle one, so that a slow machine cannot swap them
          streamed ? { idleTimeout: "250 millis", requestTimeout: "5 seconds" } : tight
        ), (outcome) => {
          expect([outcome.tag, outcome.requests]).toEqual(["unavailable", 3])
          expect(outcome.message).toMatch(streamed ? /sent nothing for 250ms \(idleTimeout\)\.$/ : /\(requestTimeout\)\.$/)
        }))

      it.live(`${mode}: the connection closes mid-answer — never an answer`, () =>
        Effect.map(
          run(format, streamed, (res) => {
            res.writeHead(200, { "content-type": streamed ? "text/event-stream" : "application/json" })
            res.end(streamed ? framed(format, [...format.streamed.before, ...format.streamed.deltas]) : "{\"id\":\"cut")
          }),
          (outcome) => {
            expect([outcome.tag, outcome.requests]).toEqual(["invalid-response", 1])
            expect(outcome.message).toContain(streamed ? "the connection was cut" : "sent a body that is not JSON")
          }
        ))

      it.live(`${mode}: the socket is destroyed mid-answer — network after the retries`, () =>
        Effect.map(
          run(format, streamed, (res) => {
            res.writeHead(200, { "content-type": streamed ? "text/event-stream" : "application/json" })
            // the socket goes once the part is flushed: the client has the headers and the part, then nothing
            res.write(streamed ? framed(format, format.streamed.before) : "{\"id\":", () => res.destroy())
          }),
          (outcome) => {
            expect([outcome.tag, outcome.requests]).toEqual(["network", 3])
            expect(outcome.message).toContain("broke while reading its answer")
          }
        ))

      it.live(`${mode}: malformed event stream or body — invalid-response`, () =>
        Effect.map(
          run(format, streamed, (res) => {
            res.writeHead(200, { "content-type": streamed ? "text/event-stream" : "application/json" })
            res.end(streamed ? "data: {\"choices\": [\n\n<html>502 Bad Gateway</html>\n\n" : "<html>502 Bad Gateway</html>")
          }),
          (outcome) => expect([outcome.tag, outcome.requests]).toEqual(["invalid-response", 1])
        ))

      it.live(`${mode}: HTTP 200 with an error body — the server's error, retried as it says`, () =>
        Effect.map(run(format, streamed, (res) => json(res, format.errorWith200.body)), (outcome) => {
          expect([outcome.tag, outcome.requests]).toEqual(["unavailable", 3])
          expect(outcome.message).toContain(format.errorWith200.message)
        }))

      it.live(`${mode}: 429 with Retry-After, then the answer — Completed`, () =>
        Effect.map(
          run(format, streamed, (res, index) =>
            index === 0 ? json(res, { error: { message: "slow down", type: "rate_limit_error" } }, 429, { "retry-after": "0.1" }) : answer(format, streamed, res)),
          (outcome) => expect([outcome.tag, outcome.text, outcome.requests]).toEqual(["Completed", "It is sunny in Oslo.", 2])
        ))

      it.live(`${mode}: a 400 quoting a 1 MB message, a 500 with 2 MB of text — the error quotes at most 1,000 characters`, () =>
        Effect.gen(function*() {
          const quoted = yield* run(format, streamed, (res) => json(res, { error: { message: "too long ".repeat(120_000), type: "invalid_request_error" } }, 400))
          // past the first 64 KiB the body is not read: its start is quoted
          expect([quoted.tag, quoted.message!.length <= 1_001, quoted.message!.endsWith("…")]).toEqual(["invalid-request", true, true])
          expect(quoted.message).toMatch(/answered HTTP 400: .*too long too long/)
          const text = yield* run(format, streamed, (res) => {
            res.writeHead(500, { "content-type": "text/plain" })
            res.end("x".repeat(2 * 1024 * 1024))
          })
          expect([text.tag, text.message!.length <= 1_001, text.message!.endsWith("xxx…")]).toEqual(["unavailable", true, true])
        }))

      it.live(`${mode}: a model call that fails still names its model and provider on its span`, () =>
        Effect.gen(function*() {
          const server = yield* loopback((_req, res) => json(res, { error: { message: "no such model", type: "invalid_request_error" } }, 400))
          const { spans, tracer } = recordingTracer()
          const model = format.model(server.url, { ...generous, retry: retryTwice })
          const exit = yield* Effect.exit(Agent.run(yield* weatherAgent, { input: "Weather in Oslo?" }).pipe(
            Effect.provide(streamed ? streaming(model) : model),
            Effect.withTracer(tracer)
          ))
          expect(Exit.isFailure(exit)).toBe(true)
          const span = spans.find((s) => s.name === "agentfx.model")
          expect([span?.attributes.get("gen_ai.request.model"), span?.attributes.get("gen_ai.provider.name")])
            .toEqual([format.modelName, format.telemetry.provider])
        }).pipe(Effect.scoped))

      it.live(`${mode}: 503 with a Retry-After beyond maxRetryAfter — unavailable at once`, () =>
        Effect.map(
          run(format, streamed, (res) => json(res, { error: { message: "down for maintenance", type: "server_error" } }, 503, { "retry-after": "3600" })),
          (outcome) => {
            expect([outcome.tag, outcome.requests]).toEqual(["unavailable", 1])
            expect(outcome.message).toContain("answered HTTP 503: down for maintenance.")
          }
        ))

      it.live(`${mode}: a transient error event mid-stream, then the answer — Completed`, () =>
        Effect.map(
          run(format, streamed, (res, index) =>
            index === 0 && streamed
              ? send(format, res, [...format.streamed.before, format.transientEvent.event])
              : answer(format, streamed, res)),
          (outcome) => expect([outcome.tag, outcome.text, outcome.requests]).toEqual(["Completed", "It is sunny in Oslo.", streamed ? 2 : 1])
        ))

      it.live(`${mode}: a body nested 10,000 levels deep that is not an answer — invalid-response`, () =>
        Effect.map(
          run(format, streamed, (res) => {
            res.writeHead(200, { "content-type": "application/json" })
            res.end(`{"status":${deepArguments(10_000)}}`)
          }),
          (outcome) => {
            expect([outcome.tag, outcome.requests]).toEqual(["invalid-response", 1])
            // Chat Completions' schema names the fields it misses; the others quote the body, which is too deep to write
            expect(outcome.message).toContain(
              streamed || format.name !== "Chat Completions" ? `: ${unwritable}` : "sent a response that is not Chat Completions: "
            )
          }
        ))

      it.live(`${mode}: a tool call 10,000 levels deep — refused with the depth limit, then Completed`, () =>
        Effect.map(
          run(format, streamed, (res, index) => {
            if (index > 0) return answer(format, streamed, res)
            res.writeHead(200, { "content-type": streamed ? "text/event-stream" : "application/json" })
            res.end(format.rawCall(deepArguments(10_000), streamed))
          }),
          (outcome) => {
            expect([outcome.tag, outcome.text, outcome.requests]).toEqual(["Completed", "It is sunny in Oslo.", 2])
            expect(outcome.lastRequest).toContain(tooDeep)
          }
        ))
    }
  })
}
