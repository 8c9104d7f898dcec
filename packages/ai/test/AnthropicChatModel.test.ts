import { Agent } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Fiber, Layer, Redacted } from "effect"
import { AnthropicChatModel } from "../src/index.js"
import { fastRetry, generate, streaming, weatherAgent, weatherSchema } from "./fixtures.js"
import { eventually, hang, json, loopback, sse } from "./loopback.js"
import * as Scenarios from "./scenarios.js"

const model = (url: string) =>
  AnthropicChatModel.layer({ apiKey: Redacted.make("sk-ant-test"), model: "claude-sonnet-4-5", apiUrl: url, retry: fastRetry })

/** A Messages API response. */
const message = (content: ReadonlyArray<object>, stop_reason: string, input: number, output: number) => ({
  id: "msg_01",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content,
  stop_reason,
  stop_sequence: null,
  usage: { input_tokens: input, output_tokens: output }
})

const toolUse = { type: "tool_use", id: "toolu_01Oslo", name: "get_weather", input: { city: "Oslo" } }
const callWeather = message([{ type: "text", text: "Let me check." }, toolUse], "tool_use", 20, 5)
const answer = message([{ type: "text", text: "It is sunny in Oslo." }], "end_turn", 30, 7)

const streamedCall = [
  { type: "message_start", message: { ...message([], "tool_use", 20, 1), stop_reason: null } },
  { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_01Oslo", name: "get_weather", input: {} } },
  { type: "ping" },
  { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{\"city\":" } },
  { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "\"Oslo\"}" } },
  { type: "content_block_stop", index: 0 },
  { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 5 } },
  { type: "message_stop" }
]
const streamedText = [
  { type: "message_start", message: { ...message([], "end_turn", 30, 1), stop_reason: null } },
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "It is sunny " } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "in Oslo." } },
  { type: "content_block_stop", index: 0 },
  { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 7 } },
  { type: "message_stop" }
]

const toolResultTurn = {
  role: "user",
  content: [{ type: "tool_result", tool_use_id: "toolu_01Oslo", content: "\"Sunny in Oslo\"", is_error: false }]
}

const format: Scenarios.WireFormat = {
  model,
  callWeather: (res) => json(res, callWeather),
  answer: (res) => json(res, answer)
}

describe("AnthropicChatModel (Messages API)", () => {
  it.live("drives a full run: tool schemas sent verbatim, the tool result sent back with the tool_use id", () =>
    Effect.gen(function*() {
      const requests = yield* Scenarios.weatherRunCompletes(format)

      expect(requests.map((r) => r.path)).toEqual(["/v1/messages?beta=true", "/v1/messages?beta=true"])
      expect(requests[0]!.headers["x-api-key"]).toBe("sk-ant-test")
      expect(requests[0]!.headers["anthropic-version"]).toBe("2023-06-01")
      const first = requests[0]!.body
      expect(first.model).toBe("claude-sonnet-4-5")
      expect(first.system).toEqual([{ type: "text", text: "You are a weather bot." }])
      expect(first.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Weather in Oslo?" }] }])
      expect(first.tools).toEqual([{ name: "get_weather", description: "Current weather for a city", input_schema: weatherSchema }])
      expect(first.tool_choice).toEqual({ type: "auto" })
      expect(requests[1]!.body.messages.slice(1)).toEqual([
        { role: "assistant", content: [{ type: "text", text: "Let me check." }, { ...toolUse }] },
        toolResultTurn
      ])
    }).pipe(Effect.scoped))

  it.live("a failed tool call is sent back with is_error: true", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) =>
        json(res, index === 0 ? message([{ ...toolUse, input: { town: "Oslo" } }], "tool_use", 1, 1) : answer)
      )
      const agent = yield* weatherAgent
      yield* Agent.run(agent, { input: "Weather?" }).pipe(Effect.provide(model(server.url)))
      const result = server.requests[1]!.body.messages[2].content[0]
      expect([result.type, result.tool_use_id, result.is_error]).toEqual(["tool_result", "toolu_01Oslo", true])
      expect(JSON.parse(result.content)).toMatch(/^semantic error: /)
    }).pipe(Effect.scoped))

  it.live("streams (SSE): text deltas, then exactly one Done", () =>
    Effect.gen(function*() {
      const [request] = yield* Scenarios.streamsTextThenDone(format, (res) => sse(res, streamedText, { named: true }))
      expect(request!.body.stream).toBe(true)
    }))
  it.live("drives a full run over SSE: the streamed tool_use reaches the tool and its result comes back", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) => sse(res, index === 0 ? streamedCall : streamedText, { named: true }))
      const agent = yield* weatherAgent
      const exit = yield* Agent.run(agent, { input: "Weather in Oslo?" }).pipe(Effect.provide(streaming(model(server.url))))
      expect(exit._tag === "Completed" && exit.text).toBe("It is sunny in Oslo.")
      expect(server.requests[1]!.body.messages.slice(1)).toEqual([
        { role: "assistant", content: [toolUse] },
        toolResultTurn
      ])
    }).pipe(Effect.scoped))

  it.live("a 429 is retried, not before its Retry-After; the run then completes", () =>
    Scenarios.rateLimitedThenCompletes(
      format,
      (res) =>
        json(
          res,
          { type: "error", error: { type: "rate_limit_error", message: "Number of requests has exceeded your rate limit" } },
          429,
          { "retry-after": "0.15" }
        )
    ))
  it.live("a 400 fails the run with InvalidRequest and Anthropic's message, without a retry", () =>
    Scenarios.refused(
      format,
      (res) =>
        json(res, { type: "error", error: { type: "invalid_request_error", message: "tools.0.input_schema: JSON schema is invalid" } }, 400),
      () => "Anthropic answered HTTP 400: tools.0.input_schema: JSON schema is invalid. The request was refused; retrying will not help."
    ))

  it.live("interrupting a run aborts the model request: the server sees the connection close", () =>
    Scenarios.abortedWhenInterrupted(format))
  it.live("a timeout around a run aborts the model request: the server sees the connection close", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => hang(res))
      const agent = yield* weatherAgent
      const fiber = yield* Agent.run(agent, { input: "Weather?" }).pipe(
        Effect.provide(model(server.url)),
        Effect.timeout("300 millis"),
        Effect.flip,
        Effect.fork
      )
      yield* eventually(() => server.requests.length === 1)
      expect((yield* Fiber.join(fiber))._tag).toBe("TimeoutException")
      yield* eventually(() => server.aborted.length === 1)
      expect(server.aborted).toEqual([0])
    }).pipe(Effect.scoped))

  it.live("layerConfig reads ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and ANTHROPIC_MODEL (default claude-sonnet-4-5)", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => json(res, answer))
      const env = { ANTHROPIC_API_KEY: "sk-ant-env", ANTHROPIC_BASE_URL: server.url }
      yield* generate().pipe(
        Effect.provide(AnthropicChatModel.layerConfig().pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson(env)))))
      )
      expect([server.requests[0]!.body.model, server.requests[0]!.headers["x-api-key"]]).toEqual(["claude-sonnet-4-5", "sk-ant-env"])
    }).pipe(Effect.scoped))
})
