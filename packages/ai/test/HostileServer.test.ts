/**
 * A hostile or careless server, in each wire format: what it sends must end the call as an
 * answer or a typed `ModelError`, quoting the server without a piece of a credential in it.
 */
import type { ChatModel } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import type * as Http from "node:http"
import { collect, generate } from "./fixtures.js"
import { all, framed, streamedAnswer, type WireFormat } from "./formats.js"
import { loopback } from "./loopback.js"

const noRetry = { schedule: Schedule.stop }

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
    return yield* (streamed ? collect() : generate()).pipe(Effect.provide(model), Effect.flip)
  }).pipe(Effect.scoped) as Effect.Effect<ChatModel.ModelError, unknown>

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
