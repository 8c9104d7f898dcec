/**
 * A hostile or careless server, in each wire format: what it sends must end the call as an
 * answer or a typed `ModelError`, quoting the server without a piece of a credential in it.
 */
import { Agent, type ChatModel, Decision, Tool } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schedule, Schema } from "effect"
import { TestClock } from "effect/testing"
import type * as Http from "node:http"
import { collect, generate } from "./fixtures.js"
import {
  all,
  anthropic,
  anthropicMessage,
  chatCompletions,
  completion,
  framed,
  responses,
  responsesMessage,
  streamedAnswer,
  type WireFormat
} from "./formats.js"
import { eventually, json, loopback, sleepsUntil } from "./loopback.js"
import * as Recorded from "./recordings/responses.js"

const noRetry = { schedule: Schedule.recurs(0) }

/** A key with no character a cut could fall beside: every cut inside it leaves a prefix. */
const key = "sk-live-9f8e7d6c5b4a39281706"

/** Answers with `body` as `contentType`, HTTP 200. */
const raw = (body: string, contentType: string) => (res: Http.ServerResponse) => {
  res.writeHead(200, { "content-type": contentType })
  res.end(body)
}

/** The error of one call (streamed or not) against `handler`, the adapter configured with `key`. */
const failure = (format: WireFormat, streamed: boolean, handler: (res: Http.ServerResponse) => void) =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => handler(res))
    const model = format.model(server.url, { apiKey: key, retry: noRetry })
    const call: Effect.Effect<unknown, ChatModel.ModelError, ChatModel.ChatModel> = streamed ? collect() : generate()
    return yield* call.pipe(Effect.provide(model), Effect.flip)
  }).pipe(Effect.scoped)

/**
 * Places where a message quotes the start of what the server sent, each with `pad`
 * characters before the echoed key: with pads around the quote's length, some cut falls
 * inside the key.
 */
const quoted: ReadonlyArray<{ readonly what: string; readonly streamed: boolean; readonly body: (pad: string) => string; readonly type: string }> = [
  { what: "a body that is not JSON", streamed: false, body: (pad) => `${pad} bad key ${key}`, type: "application/json" },
  { what: "a stream event that is not JSON", streamed: true, body: (pad) => `data: ${pad} bad key ${key}\n\n`, type: "text/event-stream" },
  { what: "JSON that is not an answer", streamed: false, body: (pad) => JSON.stringify({ note: `${pad} bad key ${key}` }), type: "application/json" },
  { what: "JSON where events were asked for", streamed: true, body: (pad) => JSON.stringify({ note: `${pad} bad key ${key}` }), type: "application/json" },
  {
    what: "an error envelope without a message",
    streamed: false,
    body: (pad) => JSON.stringify({ error: { code: "denied", detail: `${pad} bad key ${key}` } }),
    type: "application/json"
  }
]

/**
 * A non-streamed answer "hi" whose input count is `1e400` (JSON that `JSON.parse` reads as
 * `Infinity`) and whose output count is -5, in each format.
 */
const absurdUsage = (format: WireFormat, call?: { readonly id: string; readonly name: string; readonly args: object }) => {
  const body = format === chatCompletions
    ? completion(
      call === undefined
        ? { content: "hi" }
        : { tool_calls: [{ id: call.id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.args) } }] },
      call === undefined ? "stop" : "tool_calls",
      { prompt_tokens: 111_111, completion_tokens: 222_222 }
    )
    : format === responses
    ? Recorded.envelope({ status: "completed", output: [responsesMessage("hi")], usage: Recorded.usage(111_111, 222_222) })
    : anthropicMessage([{ type: "text", text: "hi" }], "end_turn", 111_111, 222_222)
  return JSON.stringify(body).replace("111111", "1e400").replace("222222", "-5")
}

/** A tool a person must approve: the run pauses with a checkpoint. */
const send = Tool.make("send", {
  description: "Sends a note",
  parameters: Schema.Struct({ to: Schema.String }),
  success: Schema.String,
  needsApproval: true,
  handler: ({ to }) => Effect.succeed(`sent to ${to}`)
})

describe("hostile server: token counts", () => {
  for (const format of [chatCompletions, responses, anthropic]) {
    it.live(`${format.name}: a count that is infinite or negative is not a count — 0, as if not sent`, () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res) => raw(absurdUsage(format), "application/json")(res))
        const response = yield* generate().pipe(Effect.provide(format.model(server.url, { retry: noRetry })))
        expect([response.text, response.usage]).toEqual(["hi", { inputTokens: 0, outputTokens: 0, totalTokens: 0 }])
      }).pipe(Effect.scoped))
  }

  it.live("Anthropic, streamed: a count that is no count keeps the last good one", () =>
    Effect.gen(function*() {
      const events = framed(anthropic, streamedAnswer(anthropic)).replace("\"output_tokens\":7", "\"output_tokens\":-5")
      const server = yield* loopback((_req, res) => raw(events, "text/event-stream")(res))
      const parts = yield* collect().pipe(Effect.provide(anthropic.model(server.url, { retry: noRetry })))
      const done = parts.at(-1)
      expect(done?._tag === "Done" && done.response.usage).toEqual({ inputTokens: 30, outputTokens: 1, totalTokens: 31 })
    }).pipe(Effect.scoped))

  it.live("a run paused after an answer counting 1e400 tokens resumes from its checkpoint stored as JSON", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) =>
        index === 0
          ? raw(absurdUsage(chatCompletions, { id: "call_1", name: "send", args: { to: "Ada" } }), "application/json")(res)
          : json(res, completion({ content: "Sent." }, "stop"))
      )
      const agent = Agent.make({ tools: [send] })
      const model = chatCompletions.model(server.url, { retry: noRetry })
      const paused = yield* Agent.run(agent, { input: "Send Ada a note" }).pipe(Effect.provide(model))
      if (paused._tag !== "Paused") throw new Error(`expected a pause, got ${paused._tag}`)
      const stored: unknown = JSON.parse(JSON.stringify(paused.checkpoint))
      const resumed = yield* Agent.resume(agent, stored, Decision.approveAll()).pipe(Effect.provide(model))
      expect([resumed._tag, resumed._tag === "Completed" && resumed.text]).toEqual(["Completed", "Sent."])
    }).pipe(Effect.scoped))
})

/**
 * Answers 200 with `start`, then 64 KiB pieces of `x` with no line ending — 40 MiB in all, more
 * than the adapters read of one answer — then nothing, the connection held open.
 */
const endless = (contentType: string, start: string) => (res: Http.ServerResponse) => {
  res.writeHead(200, { "content-type": contentType })
  res.write(start)
  const piece = "x".repeat(64 * 1024)
  let sent = 0
  const pump = () => {
    while (sent < 40 * 1024 * 1024 && !res.destroyed) {
      sent += piece.length
      if (!res.write(piece)) return void res.once("drain", pump)
    }
  }
  pump()
}

/** A body declared `content-encoding: <encoding>` that is not encoded so. */
const undecodable = (contentType: string, encoding: string) => (res: Http.ServerResponse) => {
  res.writeHead(200, { "content-type": contentType, "content-encoding": encoding })
  res.end(Buffer.from("this is not compressed at all, but the header says so"))
}

/** Bodies that stall after their start, and how the stream fails: the status's error (its body unread), or the idle timeout. */
const stalls: ReadonlyArray<readonly [number, string, ChatModel.ModelError["reason"], string]> = [
  [401, "{\"error\": {\"message\": \"bad ke", "unauthorized", "answered HTTP 401. Check the API key."],
  [200, "{\"choices\": [", "unavailable", "sent nothing for 30s (idleTimeout)."]
]

for (const format of all) {
  describe(`hostile server: ${format.name}`, () => {
    it.live("an event stream whose lines end in a lone CR (WHATWG allows it): the answer", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res) => raw(framed(format, streamedAnswer(format)).replace(/\n/g, "\r"), "text/event-stream")(res))
        const parts = yield* collect().pipe(Effect.provide(format.model(server.url, { retry: noRetry })))
        expect(parts.map((part) => (part._tag === "TextDelta" ? part.text : part.response.text))).toEqual([
          "It is sunny ",
          "in Oslo.",
          "It is sunny in Oslo."
        ])
      }).pipe(Effect.scoped))

    for (const [status, start, reason, ending] of stalls) {
      it.effect(`a stream answered HTTP ${status} with a JSON body that stalls: idleTimeout bounds it (${reason}), as it bounds events`, () =>
        Effect.gen(function*() {
          const server = yield* loopback((_req, res) => {
            res.writeHead(status, { "content-type": "application/json" })
            res.write(start)
          })
          const model = format.model(server.url, { retry: noRetry, idleTimeout: "30 seconds", requestTimeout: "10 minutes" })
          const fiber = yield* Effect.forkChild(collect().pipe(Effect.provide(model), Effect.flip))
          yield* eventually(() => sleepsUntil(30_000))
          yield* TestClock.adjust("29999 millis")
          expect(fiber.pollUnsafe()).toBeUndefined()
          yield* TestClock.adjust("1 millis")
          const error = yield* Fiber.join(fiber)
          expect([error.reason, error.message.endsWith(ending)]).toEqual([reason, true])
          yield* eventually(() => server.aborted.length === 1)
        }).pipe(Effect.scoped))
    }

    it.live("an answer that never ends — a body, or an event's line — is refused once it passes 16 Mi characters, its request aborted", () =>
      Effect.gen(function*() {
        const cases = [
          { streamed: false, handler: endless("application/json", "{\"note\": \""), what: "a body" },
          { streamed: true, handler: endless("text/event-stream", "data: "), what: "a stream event" }
        ]
        for (const { handler, streamed, what } of cases) {
          const server = yield* loopback((_req, res) => handler(res))
          const model = format.model(server.url, { retry: noRetry, requestTimeout: "20 seconds" })
          const call: Effect.Effect<unknown, ChatModel.ModelError, ChatModel.ChatModel> = streamed ? collect() : generate()
          const error = yield* call.pipe(Effect.provide(model), Effect.flip)
          expect([error.reason, error.message]).toEqual([
            "invalid-response",
            `${format.provider(server.url)} sent ${what} longer than 16777216 characters (the adapters' limit); it was not read further.`
          ])
          yield* eventually(() => server.aborted.length === 1)
        }
      }).pipe(Effect.scoped), 30_000)

    it.live("a body that cannot be decompressed (content-encoding gzip or br, and not that): invalid-response, not retried as a broken connection", () =>
      Effect.gen(function*() {
        const cases = [["gzip", "incorrect header check"], ["br", "Decompression failed"]] as const
        for (const [encoding, problem] of cases) {
          for (const streamed of [false, true]) {
            const server = yield* loopback((_req, res) => undecodable(streamed ? "text/event-stream" : "application/json", encoding)(res))
            const call: Effect.Effect<unknown, ChatModel.ModelError, ChatModel.ChatModel> = streamed ? collect() : generate()
            const error = yield* call.pipe(Effect.provide(format.model(server.url)), Effect.flip)
            expect([encoding, streamed, error.reason, error.message, server.requests.length]).toEqual([
              encoding,
              streamed,
              "invalid-response",
              `${format.provider(server.url)} sent a body that cannot be decompressed (content-encoding: ${encoding}): ${problem}`,
              1
            ])
          }
        }
      }).pipe(Effect.scoped))

    it.live("a streamed call answered with an HTML page (a proxy's, HTTP 200): invalid-response quoting it, never a cut stream", () =>
      Effect.gen(function*() {
        const page = "<html>\n<body>\n\n<h1>Blocked by the proxy's policy</h1>\n\n</body>\n</html>\n"
        const server = yield* loopback((_req, res) => raw(page, "text/html; charset=utf-8")(res))
        const error = yield* collect().pipe(Effect.provide(format.model(server.url, { retry: noRetry })), Effect.flip)
        expect([error.reason, error.message]).toEqual([
          "invalid-response",
          `${format.provider(server.url)} sent an HTML page where an event stream was asked for: ${page.trim()}`
        ])
      }).pipe(Effect.scoped))

    it.live("an event named error whose data names its own type: the server's error, never a cut stream", () =>
      Effect.gen(function*() {
        const failing = `${framed(format, format.streamed.before)}event: error\ndata: {"type":"overloaded_error","message":"Overloaded"}\n\n`
        const server = yield* loopback((_req, res) => raw(failing, "text/event-stream")(res))
        const error = yield* collect().pipe(Effect.provide(format.model(server.url, { retry: noRetry })), Effect.flip)
        expect([error.reason, error.message]).toEqual([
          "unavailable",
          `${format.provider(server.url)} failed mid-stream (overloaded_error): Overloaded`
        ])
      }).pipe(Effect.scoped))

    it.live("a redirect to another host is refused, never followed: the API key's header never leaves for it", () =>
      Effect.gen(function*() {
        const elsewhere = yield* loopback((_req, res) => format.answer(res))
        for (const streamed of [false, true]) {
          const error = yield* failure(format, streamed, (res) => {
            res.writeHead(302, { location: `${elsewhere.url.replace("127.0.0.1", "localhost")}/v1/steal` })
            res.end()
          })
          expect([error.reason, error.message]).toEqual([
            "invalid-request",
            expect.stringContaining(`answered HTTP 302, a redirect to http://localhost:`)
          ])
          expect(error.message).toContain("redirects are not followed")
        }
        expect(elsewhere.requests).toEqual([])
      }).pipe(Effect.scoped))

    it.live("a key echoed where a quote is cut: never a piece of it in the message", () =>
      Effect.gen(function*() {
        for (const site of quoted) {
          for (const pad of [150, 170, 180, 185, 190, 250, 270, 280, 285, 290]) {
            const error = yield* failure(format, site.streamed, raw(site.body("x".repeat(pad)), site.type))
            expect([site.what, pad, error.message.includes(key.slice(0, 4))]).toEqual([site.what, pad, false])
          }
        }
      }))
  })
}

describe("hostile configuration", () => {
  it.live("a URL password holding a % that starts no escape (50%off) is the password as written, sent as Basic credentials — never a URIError", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => chatCompletions.answer(res))
      const model = chatCompletions.model(server.url, { apiKey: null, retry: noRetry, baseUrl: (url) => url.replace("//", "//proxyuser:50%off@") })
      const response = yield* generate().pipe(Effect.provide(model))
      expect(response.text).toBe("It is sunny in Oslo.")
      expect(server.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from("proxyuser:50%off").toString("base64")}`)
    }).pipe(Effect.scoped))
})
