import { Agent, ChatModel, Message, Tool } from "@agentfx/core"
import { Effect, Layer, Schedule, Schema, Stream } from "effect"
import type { ModelRetry } from "../src/index.js"

/** A weather tool with an optional parameter, so the schema sent shows `required` faithfully. */
export const weatherTool = Tool.make("get_weather", {
  description: "Current weather for a city",
  parameters: Schema.Struct({ city: Schema.String, unit: Schema.optional(Schema.Literals(["C", "F"])) }),
  success: Schema.String,
  handler: ({ city }) => Effect.succeed(`Sunny in ${city}`)
})

/**
 * The JSON Schema every provider must receive for `get_weather` (no `$schema` key): Effect 4
 * writes the optional `unit` as taking null too (its JSON codec reads null as left out).
 */
export const weatherSchema = {
  type: "object",
  required: ["city"],
  properties: { city: { type: "string" }, unit: { anyOf: [{ type: "string", enum: ["C", "F"] }, { type: "null" }] } },
  additionalProperties: false
}

/** `weatherSchema` as OpenAI's strict mode takes it: `unit` required, null standing for "not given". */
export const strictWeatherSchema = { ...weatherSchema, required: ["city", "unit"] }

export const weatherAgent: Effect.Effect<Agent.Agent<{}>> = Effect.succeed(
  Agent.make({ tools: [weatherTool], system: "You are a weather bot." })
)

/** A structured final answer (`Schema.Finite`: Effect 4 writes `Schema.Number` as a number or the strings of NaN and the infinities). */
export const Weather = Schema.Struct({ city: Schema.String, celsius: Schema.Finite })

/** The weather agent, answering a `Weather`. */
export const structuredAgent = Agent.make({ tools: [weatherTool], system: "You are a weather bot.", output: Weather })

/** The output format the loop asks for: `final_answer`, `Weather`'s JSON Schema. */
export const weatherOutput: ChatModel.OutputFormat = structuredAgent.output!.format

/** `Weather`'s JSON Schema, as every provider must receive it. */
export const weatherOutputSchema = {
  type: "object",
  required: ["city", "celsius"],
  properties: { city: { type: "string" }, celsius: { type: "number" } },
  additionalProperties: false
}

/** Every setting, set. */
export const allSettings: ChatModel.ModelSettings = { temperature: 0.2, topP: 0.9, maxOutputTokens: 300, stop: ["END"], parallelToolCalls: false }

/** A one-message request; fields can be overridden. */
export const request = (overrides?: Partial<ChatModel.ChatRequest>): ChatModel.ChatRequest => ({
  system: undefined,
  messages: [Message.user("hi")],
  tools: [],
  toolChoice: "auto",
  ...overrides
})

/** One `generate` call on the ChatModel in context. */
export const generate = (req: ChatModel.ChatRequest = request()) => Effect.flatMap(ChatModel.ChatModel, (m) => m.generate(req))

/** One `stream` call on the ChatModel in context, collected. */
export const collect = (req: ChatModel.ChatRequest = request()) =>
  Effect.flatMap(ChatModel.ChatModel, (m) => Stream.runCollect(m.stream(req)))

/** The adapter with its `generate` running its `stream`: drives the loop over the streaming wire format. */
export const streaming = (layer: Layer.Layer<ChatModel.ChatModel>) =>
  Layer.effect(
    ChatModel.ChatModel,
    Effect.map(ChatModel.ChatModel, (inner) => ({ ...ChatModel.fromStream(inner.stream), model: inner.model, provider: inner.provider }))
  ).pipe(
    Layer.provide(layer)
  )

/** Retries without waiting (Retry-After still applies). */
export const fastRetry: ModelRetry.Options = { schedule: Schedule.spaced("1 millis").pipe(Schedule.upTo({ times: 3 })) }

/**
 * What a model streams for the answer tool of `weatherOutput`: the text as it came, the answer
 * as one delta, then Done (with what the adapter tells telemetry: the provider, its finish reasons).
 */
export const streamedAnswerParts = (
  telemetry: Pick<ChatModel.ChatResponse, "provider" | "providerFinishReasons">
): ReadonlyArray<ChatModel.StreamPart> => [
  { _tag: "TextDelta", text: "Here it is." },
  { _tag: "TextDelta", text: `{"city":"Oslo","celsius":21}` },
  {
    _tag: "Done",
    response: {
      text: `{"city":"Oslo","celsius":21}`,
      toolCalls: [],
      finishReason: "stop",
      usage: { inputTokens: 30, outputTokens: 7, totalTokens: 37 },
      ...telemetry
    }
  }
]
