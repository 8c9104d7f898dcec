/**
 * Scenarios of model settings and structured output (issue 16) every wire format runs,
 * against a loopback server speaking it: what the request bodies carry, the warnings for
 * settings a provider ignores, and a whole `Agent.run` with `output:` whose value is decoded.
 */
import { Agent, type ChatModel } from "@agentfx/core"
import { assert, expect } from "@effect/vitest"
import { Effect, Logger, LogLevel, Schema } from "effect"
import { allSettings, collect, generate, request, structuredAgent, weatherAgent, weatherOutput } from "./fixtures.js"
import { stream, streamedAnswer, type WireFormat } from "./formats.js"
import { loopback, type Recorded } from "./loopback.js"
import { recordingTracer } from "./scenarios.js"

/** The warnings logged while `effect` runs. */
export const warningsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const warnings: Array<string> = []
    const capture = Logger.make(({ logLevel, message }) => {
      if (LogLevel.isGreaterThanOrEqualTo(logLevel, "Warn")) warnings.push(Array.isArray(message) ? message.join(" ") : String(message))
    })
    return Effect.map(Effect.provide(effect, Logger.layer([capture])), (value) => ({ value, warnings }))
  })

/** A request body without the conversation, the model name and the tools: what settings, tool choice and output became. */
export const settingsOf = (body: any) => {
  const { input: _input, messages: _messages, model: _model, system: _system, tools: _tools, ...rest } = body
  return rest
}

/**
 * Four calls on one model (one Layer): all settings with tools (generate, then stream), all
 * settings without tools, no settings. What each body carried besides the conversation, and
 * the warnings logged.
 */
export const settingsSent = (format: WireFormat) =>
  Effect.gen(function*() {
    const server = yield* loopback((req, res, index) =>
      req.body.stream === true ? stream(format, streamedAnswer(format))(req, res, index) : format.answer(res)
    )
    const tools = (yield* weatherAgent).toolDefinitions
    const { warnings } = yield* warningsOf(Effect.gen(function*() {
      yield* generate(request({ tools, settings: allSettings }))
      yield* collect(request({ tools, settings: allSettings }))
      yield* generate(request({ settings: allSettings }))
      yield* generate(request({ tools }))
    }).pipe(Effect.provide(format.model(server.url))))
    return { bodies: server.requests.map((r) => settingsOf(r.body)), warnings }
  }).pipe(Effect.scoped)

/** A schema OpenAI's strict mode refuses: a property that may be left out but cannot be null. */
export const looseOutput: ChatModel.OutputFormat = Agent.make({
  output: Schema.Struct({ city: Schema.String, note: Schema.optionalKey(Schema.String) })
}).output!.format

/**
 * Four calls asking for an output format: with the weather tool, without tools, with a schema
 * strict mode refuses, and with the weather tool streamed. The whole bodies.
 */
export const outputSent = (format: WireFormat) =>
  Effect.gen(function*() {
    const server = yield* loopback((req, res, index) =>
      req.body.stream === true ? stream(format, streamedAnswer(format))(req, res, index) : format.answer(res)
    )
    const tools = (yield* weatherAgent).toolDefinitions
    yield* Effect.all([
      generate(request({ tools, output: weatherOutput })),
      generate(request({ output: weatherOutput })),
      generate(request({ output: looseOutput })),
      collect(request({ tools, output: weatherOutput }))
    ]).pipe(Effect.provide(format.model(server.url)))
    return server.requests.map((r) => r.body)
  }).pipe(Effect.scoped)

/**
 * The structured weather agent runs: the model calls get_weather, then answers with a
 * `Weather` the way its provider sends structured answers. The run completes with the value
 * decoded; each model call's span names the configured model (`gen_ai.request.model`), the
 * provider (`gen_ai.provider.name`) and the finish reasons in the provider's words, as a
 * string array (`gen_ai.response.finish_reasons`; the neutral one when the wire gives none).
 * Returns what the server received.
 */
export const structuredRunCompletes = (format: WireFormat): Effect.Effect<ReadonlyArray<Recorded>, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res, index) =>
      index === 0 ? format.callWeather(res) : format.answerJson(res, { city: "Oslo", celsius: 21 })
    )
    const { spans, tracer } = recordingTracer()
    const exit = yield* Agent.run(structuredAgent, { input: "Weather in Oslo?" }).pipe(
      Effect.provide(format.model(server.url)),
      Effect.withTracer(tracer)
    )
    assert(exit._tag === "Completed")
    expect([exit.value, exit.text]).toEqual([{ city: "Oslo", celsius: 21 }, `{"city":"Oslo","celsius":21}`])
    expect(exit.toolCalls.map((outcome) => [outcome._tag, outcome.toolName])).toEqual([["Succeeded", "get_weather"]])
    const telemetry = (name: string) => spans.filter((span) => span.name === "agentfx.model").map((span) => span.attributes.get(name))
    expect(telemetry("gen_ai.request.model")).toEqual([format.modelName, format.modelName])
    expect(telemetry("gen_ai.provider.name")).toEqual([format.telemetry.provider, format.telemetry.provider])
    expect(telemetry("gen_ai.response.finish_reasons")).toEqual([format.telemetry.callWeather ?? ["tool-calls"], format.telemetry.answerJson ?? ["stop"]])
    return server.requests
  }).pipe(Effect.scoped)

