import { Agent, ChatModel } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, ConfigProvider, Effect, Either,  Layer, Redacted, Schedule, Stream } from "effect"
import { ChatCompletionsModel, type ModelRetry } from "../src/index.js"
import { collect, fastRetry, generate, request, streaming, weatherAgent, weatherSchema } from "./fixtures.js"
import { eventually, json, loopback, sse } from "./loopback.js"
import * as Scenarios from "./scenarios.js"

const model = (url: string, retry: ModelRetry.Options = fastRetry) =>
  ChatCompletionsModel.layer({ baseUrl: `${url}/v1/`, model: "llama3.2", apiKey: Redacted.make("sk-local"), retry })

const completion = (message: object, finish_reason: string | null, usage?: object) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "llama3.2",
  choices: [{ index: 0, message: { role: "assistant", content: null, ...message }, finish_reason }],
  ...(usage === undefined ? {} : { usage })
})

const callWeather = completion(
  { tool_calls: [{ id: "call_oslo", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } }] },
  "tool_calls",
  { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 }
)
const answer = completion({ content: "It is sunny in Oslo." }, "stop", { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37 })

const chunk = (delta: object, finish_reason: string | null = null) => ({
  id: "chatcmpl-2",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "llama3.2",
  choices: [{ index: 0, delta, finish_reason }]
})

/** A streamed tool call whose arguments arrive in pieces, two calls interleaved by index. */
const streamedToolCalls = [
  chunk({ role: "assistant", content: null, tool_calls: null }),
  chunk({ tool_calls: [{ index: 0, id: "call_oslo", type: "function", function: { name: "get_weather", arguments: "" } }] }),
  chunk({ tool_calls: [{ index: 1, id: "call_rome", type: "function", function: { name: "get_weather", arguments: "{\"ci" } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"city\":" } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: "\"Oslo\"}" } }] }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: "ty\":\"Rome\"}" } }] }),
  chunk({}, "tool_calls"),
  { id: "chatcmpl-2", object: "chat.completion.chunk", created: 1, model: "llama3.2", choices: [], usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 } },
  "[DONE]"
]
const streamedAnswer = [
  chunk({ role: "assistant", content: "" }),
  chunk({ content: "It is sunny " }),
  chunk({ content: "in Oslo." }),
  chunk({ content: null }, "stop"),
  { id: "chatcmpl-3", object: "chat.completion.chunk", created: 1, model: "llama3.2", choices: [], usage: { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37 } },
  "[DONE]"
]

const format: Scenarios.WireFormat = {
  model,
  callWeather: (res) => json(res, callWeather),
  answer: (res) => json(res, answer)
}

describe("ChatCompletionsModel", () => {
  it.live("drives a full run: tool schemas sent, the tool result sent back with the model's call id, usage summed", () =>
    Effect.gen(function*() {
      const requests = yield* Scenarios.weatherRunCompletes(format)
      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/chat/completions", "POST /v1/chat/completions"])
      expect(requests[0]!.headers.authorization).toBe("Bearer sk-local")
      expect(requests[0]!.body).toEqual({
        model: "llama3.2",
        messages: [
          { role: "system", content: "You are a weather bot." },
          { role: "user", content: "Weather in Oslo?" }
        ],
        tools: [{ type: "function", function: { name: "get_weather", description: "Current weather for a city", parameters: weatherSchema } }],
        tool_choice: "auto"
      })
      expect(requests[1]!.body.messages.slice(2)).toEqual([
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_oslo", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } }]
        },
        { role: "tool", tool_call_id: "call_oslo", content: "Sunny in Oslo" }
      ])
    }).pipe(Effect.scoped))

  it.live("streams (SSE): stream and stream_options sent, text deltas, then exactly one Done with the accumulated response", () =>
    Effect.gen(function*() {
      const [request] = yield* Scenarios.streamsTextThenDone(format, (res) => sse(res, streamedAnswer))
      expect(request!.headers.accept).toBe("text/event-stream")
      expect(request!.body).toEqual({
        model: "llama3.2",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
        stream_options: { include_usage: true }
      })
    }))
  it.live("drives a full run over SSE: tool-call argument deltas accumulated by index, both results sent back", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) => sse(res, index === 0 ? streamedToolCalls : streamedAnswer))
      const agent = yield* weatherAgent
      const exit = yield* Agent.run(agent, { input: "Oslo and Rome?" }).pipe(Effect.provide(streaming(model(server.url))))
      expect(exit._tag === "Completed" && exit.text).toBe("It is sunny in Oslo.")
      expect(exit._tag === "Completed" && exit.usage).toEqual({ inputTokens: 50, outputTokens: 16, totalTokens: 66 })
      expect(server.requests[1]!.body.messages.slice(2)).toEqual([
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_oslo", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } },
            { id: "call_rome", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Rome\"}" } }
          ]
        },
        { role: "tool", tool_call_id: "call_oslo", content: "Sunny in Oslo" },
        { role: "tool", tool_call_id: "call_rome", content: "Sunny in Rome" }
      ])
    }).pipe(Effect.scoped))

  it.live("a 429 is retried, not before its Retry-After; the run then completes", () =>
    Scenarios.rateLimitedThenCompletes(
      format,
      (res) => json(res, { error: { message: "Rate limit reached", type: "rate_limit_error" } }, 429, { "retry-after-ms": "150" })
    ))
  it.live("a 503 on a stream is retried before its first part", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) =>
        index === 0 ? json(res, { error: "loading model" }, 503) : sse(res, streamedAnswer)
      )
      const parts = yield* collect().pipe(Effect.provide(model(server.url)))
      expect(parts.map((p) => p._tag)).toEqual(["TextDelta", "TextDelta", "Done"])
      expect(server.requests).toHaveLength(2)
    }).pipe(Effect.scoped))

  it.live("a stream that fails after its first part is not retried, even when the failure is transient", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) =>
        sse(res, [chunk({ content: "Hel" }), { error: { message: "engine overloaded", code: 503 } }])
      )
      const parts = yield* Effect.flatMap(ChatModel.ChatModel, (m) =>
        m.stream(request()).pipe(
          Stream.either,
          Stream.runCollect
        )
      ).pipe(Effect.provide(model(server.url)))
      const [first, failure] = Chunk.toArray(parts)
      expect(first).toEqual(Either.right({ _tag: "TextDelta", text: "Hel" }))
      expect(Either.isLeft(failure!) && [failure.left.reason, failure.left.status, failure.left.message]).toEqual([
        "Unavailable",
        503,
        `the Chat Completions server at ${server.url}/v1/chat/completions answered HTTP 503: engine overloaded.`
      ])
      expect(server.requests).toHaveLength(1)
    }).pipe(Effect.scoped))

  it.live("a stream event that is not JSON is an InvalidResponse", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => sse(res, ["{not json"]))
      const error = yield* Effect.flatMap(ChatModel.ChatModel, (m) =>
        m.stream(request()).pipe(
          Stream.runCollect,
          Effect.flip
        )
      ).pipe(Effect.provide(model(server.url)))
      expect(error.reason).toBe("InvalidResponse")
      expect(error.message).toContain("sent a stream event that is not JSON: {not json")
    }).pipe(Effect.scoped))

  it.live("a 400 fails the run with InvalidRequest and the server's message, without a retry", () =>
    Scenarios.refused(
      format,
      (res) => json(res, { error: { message: "tools are not supported by this model", type: "invalid_request_error" } }, 400),
      (url) =>
        `the Chat Completions server at ${url}/v1/chat/completions answered HTTP 400: tools are not supported by this model. The request was refused; retrying will not help.`
    ))
  it.live("a 401 is Unauthorized; with retries off, a 429 carries its Retry-After", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) =>
        index === 0 ? json(res, { error: "bad key" }, 401) : json(res, { error: "slow down" }, 429, { "retry-after": "7" })
      )
      const call = generate().pipe(Effect.provide(model(server.url, { schedule: Schedule.stop })), Effect.flip)
      const unauthorized = yield* call
      expect([unauthorized.reason, unauthorized.status, unauthorized.message]).toEqual([
        "Unauthorized",
        401,
        `the Chat Completions server at ${server.url}/v1/chat/completions answered HTTP 401: bad key. Check the API key.`
      ])
      const limited = yield* call
      expect([limited.reason, limited.status, limited.retryAfterMillis, limited.isTransient]).toEqual(["RateLimited", 429, 7000, true])
      expect(server.requests).toHaveLength(2)
    }).pipe(Effect.scoped))

  it.live("a refused connection is a transient Network error", () =>
    Effect.gen(function*() {
      const error = yield* generate().pipe(Effect.provide(model("http://127.0.0.1:1", { schedule: Schedule.stop })), Effect.flip)
      expect(error.reason).toBe("Network")
      expect(error.isTransient).toBe(true)
      expect(error.message).toContain("could not reach the Chat Completions server at http://127.0.0.1:1/v1/chat/completions")
    }))

  it.live("malformed tool-call arguments: the tool is not run, the model is told, the run goes on", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) =>
        json(
          res,
          index === 0
            ? completion({ tool_calls: [{ id: "call_bad", type: "function", function: { name: "get_weather", arguments: "{city: Oslo" } }] }, "tool_calls")
            : answer
        )
      )
      const agent = yield* weatherAgent
      const exit = yield* Agent.run(agent, { input: "Weather?" }).pipe(Effect.provide(model(server.url)))
      expect(exit._tag === "Completed" && exit.toolCalls.map((o) => o._tag)).toEqual(["Failed"])
      const [assistant, result] = server.requests[1]!.body.messages.slice(2)
      expect(assistant.tool_calls[0].function.arguments).toBe(JSON.stringify("{city: Oslo"))
      expect(result.tool_call_id).toBe("call_bad")
      expect(result.content).toMatch(/^semantic error: /)
    }).pipe(Effect.scoped))

  it.live("interrupting a run aborts the model request: the server sees the connection close", () =>
    Scenarios.abortedWhenInterrupted(format))
  it.live("a timeout around a stream aborts its request", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(`data: ${JSON.stringify(chunk({ content: "Hel" }))}\n\n`)
      })
      const error = yield* Effect.flatMap(ChatModel.ChatModel, (m) =>
        m.stream(request()).pipe(
          Stream.runCollect,
          Effect.timeout("200 millis"),
          Effect.flip
        )
      ).pipe(Effect.provide(model(server.url)))
      expect(error._tag).toBe("TimeoutException")
      yield* eventually(() => server.aborted.length === 1)
    }).pipe(Effect.scoped))

  it.live("sends tool_choice: none, required, and a named function", () =>
    Effect.map(Scenarios.toolChoicesSent(format), (sent) =>
      expect(sent).toEqual([
        "none",
        "required",
        { type: "function", function: { name: "get_weather" } }
      ]))
  )

  it.live("layerConfig reads AGENTFX_BASE_URL, AGENTFX_MODEL and the optional AGENTFX_API_KEY (blank: none)", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => json(res, answer))
      const withEnv = (env: Record<string, string>) =>
        Effect.provide(ChatCompletionsModel.layerConfig().pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson(env)))))
      yield* generate().pipe(withEnv({ AGENTFX_BASE_URL: `${server.url}/v1`, AGENTFX_MODEL: "qwen2.5:7b", AGENTFX_API_KEY: "" }))
      yield* generate().pipe(withEnv({ AGENTFX_BASE_URL: `${server.url}/v1`, AGENTFX_MODEL: "qwen2.5:7b", AGENTFX_API_KEY: "k" }))
      expect(server.requests.map((r) => [r.body.model, r.headers.authorization])).toEqual([["qwen2.5:7b", undefined], [
        "qwen2.5:7b",
        "Bearer k"
      ]])
      const missing = yield* generate().pipe(withEnv({ AGENTFX_BASE_URL: server.url }), Effect.flip)
      expect(missing._tag).toBe("ConfigError")
      expect(String(missing)).toContain("AGENTFX_MODEL")
    }).pipe(Effect.scoped))
})
