import { ChatModel, type Json, Message } from "@agentfx/core"
import { AiError, LanguageModel, type Response } from "effect/ai"
import { FetchHttpClient } from "effect/http"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Layer, Option, Redacted, Schedule, Stream } from "effect"
import { TestClock } from "effect/testing"
import { AiChatModel } from "../src/index.js"
import { allSettings, collect, fastRetry, generate, request, streamedAnswerParts, weatherAgent, weatherOutput, weatherOutputSchema } from "./fixtures.js"
import * as Features from "./features.js"
import { anthropic, anthropicStreamedAnswer, streamedAnswer, type WireFormat } from "./formats.js"
import * as EffectAiAnthropic from "./effectAiAnthropic.js"
import { eventually, json, loopback, sleepsUntil, sse } from "./loopback.js"
import * as Scenarios from "./scenarios.js"

const key = Redacted.make("sk-ant-api03-secret-key")

/** An `effect/ai` Anthropic `LanguageModel` (`./effectAiAnthropic.ts`) on a loopback server, behind `AiChatModel`. */
const viaEffectAi = (url: string, options?: AiChatModel.Options) =>
  AiChatModel.layer({ provider: "Anthropic", retry: fastRetry, ...options }).pipe(
    Layer.provide(EffectAiAnthropic.layer({ url, apiKey: key, model: "claude-sonnet-4-5" })),
    Layer.provide(FetchHttpClient.layer)
  )

/** Model settings as the provider's config, as docs/providers.md shows it for `@effect/ai-anthropic`. */
const anthropicSettings: AiChatModel.Options["withSettings"] = (settings) =>
  EffectAiAnthropic.withConfigOverride({
    ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    ...(settings.topP === undefined ? {} : { top_p: settings.topP }),
    ...(settings.maxOutputTokens === undefined ? {} : { max_tokens: settings.maxOutputTokens }),
    ...(settings.stop === undefined ? {} : { stop_sequences: settings.stop }),
    ...(settings.parallelToolCalls === undefined ? {} : { disableParallelToolCalls: !settings.parallelToolCalls })
  })

/** The Anthropic wire format, spoken through an `effect/ai` `LanguageModel` behind `AiChatModel`. */
const throughEffectAi: WireFormat = {
  ...anthropic,
  model: (url) => viaEffectAi(url, { model: "claude-sonnet-4-5", providerName: "anthropic", withSettings: anthropicSettings }),
  // effect/ai's finish reasons, not Anthropic's own
  telemetry: { provider: "anthropic", answer: ["stop"], callWeather: ["tool-calls"], answerJson: ["tool-calls"] }
}

/** A `LanguageModel` answering from code. */
const scripted = (
  parts: {
    readonly generate?: Effect.Effect<Array<Response.PartEncoded>, AiError.AiError>
    readonly stream?: Stream.Stream<Response.StreamPartEncoded, AiError.AiError>
  },
  options?: AiChatModel.Options
) =>
  AiChatModel.layer({ retry: { schedule: Schedule.recurs(0) }, ...options }).pipe(
    Layer.provide(Layer.effect(
      LanguageModel.LanguageModel,
      LanguageModel.make({
        generateText: () => parts.generate ?? Effect.never,
        streamText: () => parts.stream ?? Stream.never
      })
    ))
  )

const finish = (usage: typeof Response.Usage.Encoded): Response.PartEncoded => ({ type: "finish", reason: "stop", usage })

describe("AiChatModel", () => {
  it.live("an error part mid-stream fails with the server's message, classified: Anthropic's overloaded_error is transient and retried", () =>
    Effect.gen(function*() {
      const overloaded = [...anthropic.streamed.before, anthropic.transientEvent.event]
      const server = yield* loopback((_req, res, index) => sse(res, index < 1 ? overloaded : streamedAnswer(anthropic), { named: true }))
      const noRetry = yield* collect().pipe(Effect.provide(viaEffectAi(server.url, { retry: { schedule: Schedule.recurs(0) } })), Effect.flip)
      expect([noRetry.reason, noRetry.isTransient, noRetry.message]).toEqual([
        "unavailable",
        true,
        "Anthropic failed mid-stream (overloaded_error): Overloaded"
      ])
      const server2 = yield* loopback((_req, res, index) => sse(res, index < 1 ? overloaded : streamedAnswer(anthropic), { named: true }))
      const parts = yield* collect().pipe(Effect.provide(viaEffectAi(server2.url)))
      expect(parts.map((part) => part._tag)).toEqual(["TextDelta", "TextDelta", "Done"])
      expect(server2.requests).toHaveLength(2)
    }).pipe(Effect.scoped))

  it.live("a 200 whose body is an error envelope: the server's message when the provider kept the body, else invalid-response naming what did not decode", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => json(res, anthropic.errorWith200.body))
      const undecoded = yield* generate().pipe(Effect.provide(viaEffectAi(server.url, { retry: { schedule: Schedule.recurs(0) } })), Effect.flip)
      expect([undecoded.reason, undecoded.isTransient, undecoded.message]).toEqual([
        "invalid-response",
        false,
        expect.stringMatching(/^Anthropic sent a response that could not be decoded: .*"message"/s)
      ])
      const kept = AiError.make({
        module: "Provider",
        method: "generateText",
        reason: new AiError.InvalidResponseError({ description: "not a message", http: { body: JSON.stringify(anthropic.errorWith200.body) } })
      })
      const error = yield* generate().pipe(Effect.provide(scripted({ generate: Effect.fail(kept) }, { provider: "Anthropic" })), Effect.flip)
      expect([error.reason, error.isTransient, error.message]).toEqual([
        "unavailable",
        true,
        "Anthropic answered HTTP 200 with an error (api_error): Internal server error"
      ])
    }).pipe(Effect.scoped))

  it.live("secrets are masked in messages (header values and URL credentials always are)", () =>
    Effect.gen(function*() {
      const server = yield* loopback((req, res) =>
        json(res, {
          type: "error",
          error: { type: "authentication_error", message: `key ${String(req.headers["x-api-key"])} refused; x-api-key: ${String(req.headers["x-api-key"])}` }
        }, 401)
      )
      const masked = yield* generate().pipe(Effect.provide(viaEffectAi(server.url, { secrets: [key] })), Effect.flip)
      const unmasked = yield* generate().pipe(Effect.provide(viaEffectAi(server.url)), Effect.flip)
      expect(masked.message).toBe("Anthropic answered HTTP 401: key *** refused; x-api-key: ***. Check the API key.")
      expect(unmasked.message).toBe("Anthropic answered HTTP 401: key sk-ant-api03-secret-key refused; x-api-key: ***. Check the API key.")
    }).pipe(Effect.scoped))

  it.live("a history nested deeper than the LanguageModel can encode: invalid-request for generate and stream, never a defect", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => anthropic.answer(res))
      let deep: Json.JsonValue = "Oslo"
      for (let i = 0; i < 20_000; i++) deep = [deep]
      const deepRequest = request({ messages: [Message.user("Weather?"), Message.assistant("", [{ id: "call_deep", name: "get_weather", args: deep }])] })
      const layer = viaEffectAi(server.url, { retry: { schedule: Schedule.recurs(0) } })
      const generated = yield* generate(deepRequest).pipe(Effect.provide(layer), Effect.asVoid, Effect.exit)
      const streamed = yield* collect(deepRequest).pipe(Effect.provide(layer), Effect.asVoid, Effect.exit)
      for (const exit of [generated, streamed]) {
        expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(false)
        const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
        expect(error !== undefined && [error.reason, error.message]).toEqual([
          "invalid-request",
          "could not encode the request to Anthropic: RangeError: Maximum call stack size exceeded"
        ])
      }
      expect(server.requests).toHaveLength(0)
    }).pipe(Effect.scoped))

  describe("settings, tool choice and structured output", () => {
    it.live("withSettings applies each request's settings through the provider's config (generate and stream); the tool choice is passed on", () =>
      Effect.gen(function*() {
        const { bodies, warnings } = yield* Features.settingsSent(throughEffectAi)
        const sampling = { max_tokens: 300, temperature: 0.2, top_p: 0.9, stop_sequences: ["END"] }
        const serial = { type: "auto", disable_parallel_tool_use: true }
        expect(bodies).toEqual([
          { ...sampling, tool_choice: serial },
          { ...sampling, tool_choice: serial, stream: true },
          sampling,
          { max_tokens: 4096, tool_choice: { type: "auto" } }
        ])
        expect(warnings).toEqual([])
        // the provider sends no tools at all for "none", as @effect/ai-anthropic does
        const chosen = yield* Scenarios.toolChoicesSent(throughEffectAi)
        expect(chosen).toEqual([undefined, { type: "any" }, { type: "tool", name: "get_weather" }])
      }))

    it.live("withSettings is given only the settings a request sets: parallelToolCalls alone becomes the tool choice's disable_parallel_tool_use, no field of its own", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res) => anthropic.answer(res))
        const tools = (yield* weatherAgent).toolDefinitions
        const given: Array<ChatModel.ModelSettings> = []
        const layer = viaEffectAi(server.url, {
          withSettings: (settings) => {
            given.push(settings)
            return EffectAiAnthropic.withConfigOverride({ disableParallelToolCalls: settings.parallelToolCalls === false })
          }
        })
        yield* generate(request({ tools, settings: { parallelToolCalls: false } })).pipe(Effect.provide(layer))
        expect(given).toEqual([{ parallelToolCalls: false }])
        expect(Features.settingsOf(server.requests[0]!.body)).toEqual({
          max_tokens: 4096,
          tool_choice: { type: "auto", disable_parallel_tool_use: true }
        })
      }).pipe(Effect.scoped))

    it.live("without withSettings, settings are not applied and each one set is warned about once", () =>
      Effect.gen(function*() {
        const server = yield* loopback((req, res) => (req.body.stream === true ? sse(res, streamedAnswer(anthropic), { named: true }) : anthropic.answer(res)))
        const tools = (yield* weatherAgent).toolDefinitions
        const { warnings } = yield* Features.warningsOf(Effect.gen(function*() {
          yield* generate(request({ tools, settings: { temperature: 0.2 } }))
          yield* collect(request({ tools, settings: allSettings }))
          yield* generate(request({ tools, settings: allSettings }))
        }).pipe(Effect.provide(viaEffectAi(server.url))))
        expect(server.requests.map((r) => Features.settingsOf(r.body))).toEqual([
          { max_tokens: 4096, tool_choice: { type: "auto" } },
          { max_tokens: 4096, tool_choice: { type: "auto" }, stream: true },
          { max_tokens: 4096, tool_choice: { type: "auto" } }
        ])
        const why = "effect/ai's LanguageModel takes no settings; give AiChatModel `withSettings` to apply them through your provider's config"
        expect(warnings).toEqual([
          `Anthropic ignores settings.temperature: ${why}`,
          `Anthropic ignores settings.topP, settings.maxOutputTokens, settings.stop, settings.parallelToolCalls: ${why}`
        ])
      }).pipe(Effect.scoped))

    it.live("output through the answer tool: sent beside the agent's tools; alone, it is the tool choice", () =>
      Effect.gen(function*() {
        const bodies = yield* Features.outputSent(throughEffectAi)
        expect(bodies.map((body) => [body.tools.map((tool: { name: string }) => tool.name), body.tool_choice])).toEqual([
          [["get_weather", "final_answer"], { type: "auto" }],
          [["final_answer"], { type: "tool", name: "final_answer" }],
          [["final_answer"], { type: "tool", name: "final_answer" }],
          [["get_weather", "final_answer"], { type: "auto" }]
        ])
        expect(bodies[3].stream).toBe(true)
        expect(bodies[1].tools[0].input_schema).toEqual(weatherOutputSchema)
      }))

    it.live("Agent.run with output: the tool runs, the call of the answer tool is Completed.value; spans name the model given", () =>
      Effect.asVoid(Features.structuredRunCompletes(throughEffectAi)))

    it.live("the answer tool, streamed through effect/ai: the text as it came, one TextDelta with the answer, then Done", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res) => sse(res, anthropicStreamedAnswer, { named: true }))
        const parts = yield* collect(request({ output: weatherOutput })).pipe(Effect.provide(viaEffectAi(server.url)))
        expect(parts).toEqual(streamedAnswerParts({ provider: undefined, providerFinishReasons: ["tool-calls"] }))
      }).pipe(Effect.scoped))
  })

  it.effect("idleTimeout counts between stream parts: a part, then nothing, fails after exactly that long", () =>
    Effect.gen(function*() {
      const layer = scripted({ stream: Stream.concat(Stream.make<Array<Response.StreamPartEncoded>>({ type: "text-delta", id: "1", delta: "Hel" }), Stream.never) }, {
        idleTimeout: "20 seconds"
      })
      const fiber = yield* Effect.forkChild(
        Effect.flatMap(ChatModel.ChatModel, (m) => m.stream({ system: undefined, messages: [], tools: [], toolChoice: "auto" }).pipe(Stream.result, Stream.runCollect)).pipe(
          Effect.provide(layer)
        )
      )
      yield* eventually(() => sleepsUntil(20_000))
      yield* TestClock.adjust("19999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const items = yield* Fiber.join(fiber)
      expect(items.map((item) => (item._tag === "Success" ? item.success._tag : item.failure.message))).toEqual([
        "TextDelta",
        "the language model sent nothing for 20s (idleTimeout)."
      ])
    }))

  it.effect("requestTimeout bounds generate", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(generate().pipe(Effect.provide(scripted({}, { provider: "Google", requestTimeout: "2 minutes" })), Effect.flip))
      yield* eventually(() => sleepsUntil(120_000))
      yield* TestClock.adjust("2 minutes")
      const error = yield* Fiber.join(fiber)
      expect([error.reason, error.isTransient, error.message]).toEqual(["unavailable", true, "Google did not finish within 2m (requestTimeout)."])
    }))

  it.effect("requestTimeout bounds a stream whose parts keep coming", () =>
    Effect.gen(function*() {
      const ticking = Stream.map(Stream.fromSchedule(Schedule.spaced("5 seconds")), (): Response.StreamPartEncoded => ({ type: "text-delta", id: "1", delta: "." }))
      const fiber = yield* Effect.forkChild(collect().pipe(Effect.provide(scripted({ stream: ticking }, { requestTimeout: "30 seconds" })), Effect.flip))
      yield* TestClock.adjust("30 seconds")
      expect((yield* Fiber.join(fiber)).message).toBe("the language model did not finish within 30s (requestTimeout).")
    }))

  it.effect("usage: each count is its total, or the sum of its parts when larger (a provider counting reasoning beside the output's total); a count that is no count is 0; the total is input + output", () =>
    Effect.gen(function*() {
      const usageOf = (usage: typeof Response.Usage.Encoded) =>
        Effect.map(generate().pipe(Effect.provide(scripted({ generate: Effect.succeed([finish(usage)]) }))), (response) => response.usage)
      expect(yield* usageOf({ inputTokens: { total: 30 }, outputTokens: { total: 7, text: 7, reasoning: 62 } })).toEqual({
        inputTokens: 30,
        outputTokens: 69,
        totalTokens: 99
      })
      expect(yield* usageOf({ inputTokens: { uncached: 10, cacheRead: 15, cacheWrite: 5 }, outputTokens: { total: 7 } })).toEqual({
        inputTokens: 30,
        outputTokens: 7,
        totalTokens: 37
      })
      expect(yield* usageOf({ inputTokens: { total: 30, uncached: 3 }, outputTokens: { total: 69, text: 7 } })).toEqual({
        inputTokens: 30,
        outputTokens: 69,
        totalTokens: 99
      })
      expect(yield* usageOf({ inputTokens: { total: -3 }, outputTokens: { total: -5, text: -1 } })).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 })
      const streamed = yield* collect().pipe(
        Effect.provide(scripted({ stream: Stream.make<Array<Response.StreamPartEncoded>>(finish({ inputTokens: { total: 30 }, outputTokens: { text: 7, reasoning: 62 } }) as Response.StreamPartEncoded) }))
      )
      expect(streamed.at(-1)?._tag === "Done" && streamed.at(-1)).toMatchObject({ response: { usage: { inputTokens: 30, outputTokens: 69, totalTokens: 99 } } })
    }))

  it.effect("a timeout that is not a positive duration fails each call with invalid-request", () =>
    Effect.gen(function*() {
      const error = yield* generate().pipe(Effect.provide(scripted({}, { idleTimeout: -1 })), Effect.flip)
      expect([error.reason, error.message]).toEqual([
        "invalid-request",
        "the language model: idleTimeout must be a positive duration (Duration.infinity disables it), got -1."
      ])
    }))
})

