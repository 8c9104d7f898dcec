/**
 * Servers whose reasoning tokens are in their total only (docs/decisions/026), over loopback
 * in their own shapes: the output counts them, streamed and not.
 */
import type { ChatModel } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { collect, generate } from "./fixtures.js"
import { chatCompletions, responses, type WireFormat } from "./formats.js"
import { json, loopback, sse } from "./loopback.js"
import * as Recorded from "./recordings/reasoningUsage.js"

const cases: ReadonlyArray<readonly [string, WireFormat, unknown, ReadonlyArray<unknown>, ChatModel.Usage]> = [
  ["xAI's Chat Completions", chatCompletions, Recorded.xaiCompletion, Recorded.xaiStream, { inputTokens: 32, outputTokens: 103, totalTokens: 135 }],
  ["Gemini's OpenAI-compatible API", chatCompletions, Recorded.geminiCompletion, Recorded.geminiStream, { inputTokens: 30, outputTokens: 382, totalTokens: 412 }],
  ["xAI's Responses API", responses, Recorded.xaiResponse("completed"), Recorded.xaiResponseStream, { inputTokens: 11, outputTokens: 313, totalTokens: 324 }]
]

describe("usage with reasoning tokens outside the output count", () => {
  for (const [name, format, body, events, usage] of cases) {
    it.live(`${name}: the output is total − input, the total the server's (generate and stream)`, () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res, index) => (index === 0 ? json(res, body) : sse(res, events, { named: format.named })))
        const model = format.model(server.url, { retry: { schedule: Schedule.recurs(0) } })
        const generated = yield* generate().pipe(Effect.provide(model))
        const done = (yield* collect().pipe(Effect.provide(model))).at(-1)
        expect([generated.text, generated.usage]).toEqual(["It is sunny in Oslo.", usage])
        expect(done?._tag === "Done" && [done.response.text, done.response.usage]).toEqual(["It is sunny in Oslo.", usage])
      }).pipe(Effect.scoped))
  }
})
