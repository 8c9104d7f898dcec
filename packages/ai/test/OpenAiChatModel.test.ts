import { Agent } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import { OpenAiChatModel } from "../src/index.js"
import { fastRetry, generate, response, streaming, usage, weatherAgent, weatherSchema } from "./fixtures.js"
import { json, loopback, sse } from "./loopback.js"
import * as Scenarios from "./scenarios.js"

const model = (url: string, options?: { readonly strict?: boolean }) =>
  OpenAiChatModel.layer({ apiKey: Redacted.make("sk-test"), model: "gpt-4.1-mini", apiUrl: `${url}/v1`, retry: fastRetry, ...options })

const functionCall = (callId: string, city: string) => ({
  type: "function_call",
  id: `fc_${callId}`,
  call_id: callId,
  name: "get_weather",
  arguments: JSON.stringify({ city }),
  status: "completed"
})
const message = (text: string) => ({
  type: "message",
  id: "msg_1",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text, annotations: [] }]
})

const callWeather = response([functionCall("call_oslo", "Oslo")], usage(20, 5))
const answer = response([message("It is sunny in Oslo.")], usage(30, 7))

/** The SSE events of a streamed function call, arguments in two deltas. */
const streamedCall = [
  { type: "response.created", sequence_number: 0, response: response([], undefined, "in_progress") },
  {
    type: "response.output_item.added",
    sequence_number: 1,
    output_index: 0,
    item: { ...functionCall("call_oslo", "Oslo"), arguments: "", status: "in_progress" }
  },
  { type: "response.function_call_arguments.delta", sequence_number: 2, item_id: "fc_call_oslo", output_index: 0, delta: "{\"city\":" },
  { type: "response.function_call_arguments.delta", sequence_number: 3, item_id: "fc_call_oslo", output_index: 0, delta: "\"Oslo\"}" },
  { type: "response.output_item.done", sequence_number: 4, output_index: 0, item: functionCall("call_oslo", "Oslo") },
  { type: "response.completed", sequence_number: 5, response: response([functionCall("call_oslo", "Oslo")], usage(20, 5)) }
]
const streamedText = [
  { type: "response.created", sequence_number: 0, response: response([], undefined, "in_progress") },
  {
    type: "response.output_item.added",
    sequence_number: 1,
    output_index: 0,
    item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] }
  },
  { type: "response.output_text.delta", sequence_number: 2, output_index: 0, content_index: 0, item_id: "msg_1", delta: "It is sunny " },
  { type: "response.output_text.delta", sequence_number: 3, output_index: 0, content_index: 0, item_id: "msg_1", delta: "in Oslo." },
  { type: "response.output_item.done", sequence_number: 4, output_index: 0, item: message("It is sunny in Oslo.") },
  { type: "response.completed", sequence_number: 5, response: response([message("It is sunny in Oslo.")], usage(30, 7)) }
]

const expectedSecondInput = [
  { role: "system", content: "You are a weather bot." },
  { role: "user", content: [{ type: "input_text", text: "Weather in Oslo?" }] },
  { type: "function_call", call_id: "call_oslo", name: "get_weather", arguments: "{\"city\":\"Oslo\"}" },
  { type: "function_call_output", call_id: "call_oslo", output: "\"Sunny in Oslo\"" }
]

const format: Scenarios.WireFormat = {
  model,
  callWeather: (res) => json(res, callWeather),
  answer: (res) => json(res, answer)
}

describe("OpenAiChatModel (Responses API)", () => {
  it.live("drives a full run: tool schemas sent verbatim, the tool result sent back with the provider's call id", () =>
    Effect.gen(function*() {
      const requests = yield* Scenarios.weatherRunCompletes(format)

      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/responses", "POST /v1/responses"])
      expect(requests[0]!.headers.authorization).toBe("Bearer sk-test")
      const first = requests[0]!.body
      expect(first.model).toBe("gpt-4.1-mini")
      expect(first.input).toEqual(expectedSecondInput.slice(0, 2))
      expect(first.tools).toEqual([
        { type: "function", name: "get_weather", description: "Current weather for a city", parameters: weatherSchema, strict: false }
      ])
      expect(first.tool_choice).toBe("auto")
      expect(requests[1]!.body.input).toEqual(expectedSecondInput)
    }).pipe(Effect.scoped))

  it.live("strict: true is sent on every tool", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => json(res, answer))
      const agent = yield* weatherAgent
      yield* Agent.run(agent, { input: "hi" }).pipe(Effect.provide(model(server.url, { strict: true })))
      expect(server.requests[0]!.body.tools[0].strict).toBe(true)
    }).pipe(Effect.scoped))

  it.live("streams (SSE): text deltas, then exactly one Done", () =>
    Effect.gen(function*() {
      const [request] = yield* Scenarios.streamsTextThenDone(format, (res) => sse(res, streamedText))
      expect(request!.body.stream).toBe(true)
    }))
  it.live("drives a full run over SSE: the streamed call's id and arguments reach the tool and come back", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) => sse(res, index === 0 ? streamedCall : streamedText))
      const agent = yield* weatherAgent
      const exit = yield* Agent.run(agent, { input: "Weather in Oslo?" }).pipe(Effect.provide(streaming(model(server.url))))
      expect(exit._tag === "Completed" && exit.text).toBe("It is sunny in Oslo.")
      expect(server.requests[1]!.body.input).toEqual(expectedSecondInput)
    }).pipe(Effect.scoped))

  it.live("a 429 is retried, not before its Retry-After; the run then completes", () =>
    Scenarios.rateLimitedThenCompletes(
      format,
      (res) =>
        json(res, { error: { message: "Rate limit reached for gpt-4.1-mini", type: "requests" } }, 429, { "retry-after-ms": "150" })
    ))
  it.live("a 400 fails the run with InvalidRequest and OpenAI's message, without a retry", () =>
    Scenarios.refused(
      format,
      (res) => json(res, { error: { message: "Invalid schema for function 'get_weather'", type: "invalid_request_error" } }, 400),
      () => "OpenAI answered HTTP 400: Invalid schema for function 'get_weather'. The request was refused; retrying will not help."
    ))
  it.live("interrupting a run aborts the model request: the server sees the connection close", () =>
    Scenarios.abortedWhenInterrupted(format))
  it.live("sends tool_choice: none, required, and a named function", () =>
    Effect.map(Scenarios.toolChoicesSent(format), (sent) =>
      expect(sent).toEqual(["none", "required", { type: "function", name: "get_weather" }]))
  )

  it.live("layerConfig reads OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL (default gpt-4.1-mini, also when blank)", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => json(res, answer))
      const withEnv = (env: Record<string, string>) =>
        Effect.provide(OpenAiChatModel.layerConfig().pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson(env)))))
      yield* generate().pipe(withEnv({ OPENAI_API_KEY: "sk-env", OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_MODEL: " " }))
      yield* generate().pipe(withEnv({ OPENAI_API_KEY: "sk-env", OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_MODEL: "gpt-4.1" }))
      expect(server.requests.map((r) => [r.body.model, r.headers.authorization])).toEqual([
        ["gpt-4.1-mini", "Bearer sk-env"],
        ["gpt-4.1", "Bearer sk-env"]
      ])
      const missing = yield* generate().pipe(withEnv({ OPENAI_BASE_URL: server.url }), Effect.flip)
      expect(String(missing)).toContain("OPENAI_API_KEY")
    }).pipe(Effect.scoped))

  it.live("through @effect/ai, arguments that are not JSON, or an unknown tool, fail the call with InvalidResponse", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) =>
        json(res, response([{ ...functionCall("call_x", "Oslo"), ...(index === 0 ? { arguments: "{city: Oslo" } : { name: "get_wether" }) }]))
      )
      const agent = yield* weatherAgent
      const run = Agent.run(agent, { input: "Weather?" }).pipe(Effect.provide(model(server.url)), Effect.flip)
      const malformed = yield* run
      const unknown = yield* run
      expect(malformed._tag === "ModelError" && [malformed.reason, malformed.message]).toEqual([
        "InvalidResponse",
        expect.stringContaining("Failed to securely parse tool call parameters for tool 'get_weather'")
      ])
      expect(unknown._tag === "ModelError" && unknown.reason).toBe("InvalidResponse")
      expect(server.requests).toHaveLength(2)
    }).pipe(Effect.scoped))
})
