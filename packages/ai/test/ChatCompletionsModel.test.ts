import { Agent, ChatModel } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, ConfigProvider, Effect, Either, Exit, Fiber, Layer, Redacted, Schedule, Stream } from "effect"
import { ChatCompletionsModel, type ModelRetry } from "../src/index.js"
import { weatherAgent, weatherSchema } from "./fixtures.js"
import { eventually, hang, json, loopback, sse } from "./loopback.js"

const fast = { schedule: Schedule.spaced("1 millis").pipe(Schedule.intersect(Schedule.recurs(3))) }

const model = (url: string, retry: ModelRetry.Options = fast) =>
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
  chunk({ content: "Sunny in " }),
  chunk({ content: "Oslo and Rome." }),
  chunk({ content: null }, "stop"),
  { id: "chatcmpl-3", object: "chat.completion.chunk", created: 1, model: "llama3.2", choices: [], usage: { prompt_tokens: 40, completion_tokens: 4, total_tokens: 44 } },
  "[DONE]"
]

/** The ChatModel whose `generate` runs the adapter's SSE stream: drives the loop over the streaming wire format. */
const streamingModel = (url: string) =>
  Layer.effect(ChatModel.ChatModel, Effect.map(ChatModel.ChatModel, (inner) => ChatModel.fromStream(inner.stream))).pipe(
    Layer.provide(model(url))
  )

describe("ChatCompletionsModel", () => {
  it.live("drives a full run: tool schemas sent, the tool result sent back with the model's call id, usage summed", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) => json(res, index === 0 ? callWeather : answer))
      const agent = yield* weatherAgent
      const exit = yield* Agent.run(agent, { input: "Weather in Oslo?" }).pipe(Effect.provide(model(server.url)))
      expect(exit._tag).toBe("Completed")
      if (exit._tag !== "Completed") return
      expect(exit.text).toBe("It is sunny in Oslo.")
      expect(exit.usage).toEqual({ inputTokens: 50, outputTokens: 12, totalTokens: 62 })

      expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/chat/completions", "POST /v1/chat/completions"])
      expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-local")
      expect(server.requests[0]!.body).toEqual({
        model: "llama3.2",
        messages: [
          { role: "system", content: "You are a weather bot." },
          { role: "user", content: "Weather in Oslo?" }
        ],
        tools: [{ type: "function", function: { name: "get_weather", description: "Current weather for a city", parameters: weatherSchema } }],
        tool_choice: "auto"
      })
      expect(server.requests[1]!.body.messages.slice(2)).toEqual([
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
      const server = yield* loopback((_req, res) => sse(res, streamedAnswer))
      const parts = yield* Effect.flatMap(ChatModel.ChatModel, (m) =>
        Stream.runCollect(m.stream({ system: undefined, messages: [{ _tag: "User", text: "hi" }], tools: [], toolChoice: "auto" }))
      ).pipe(Effect.provide(model(server.url)))
      expect(Chunk.toArray(parts)).toEqual([
        { _tag: "TextDelta", text: "Sunny in " },
        { _tag: "TextDelta", text: "Oslo and Rome." },
        {
          _tag: "Done",
          response: {
            text: "Sunny in Oslo and Rome.",
            toolCalls: [],
            finishReason: "stop",
            usage: { inputTokens: 40, outputTokens: 4, totalTokens: 44 }
          }
        }
      ])
      expect(server.requests[0]!.headers.accept).toBe("text/event-stream")
      expect(server.requests[0]!.body).toEqual({
        model: "llama3.2",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
        stream_options: { include_usage: true }
      })
    }).pipe(Effect.scoped))

  it.live("drives a full run over SSE: tool-call argument deltas accumulated by index, both results sent back", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) => sse(res, index === 0 ? streamedToolCalls : streamedAnswer))
      const agent = yield* weatherAgent
      const exit = yield* Agent.run(agent, { input: "Oslo and Rome?" }).pipe(Effect.provide(streamingModel(server.url)))
      expect(exit._tag === "Completed" && exit.text).toBe("Sunny in Oslo and Rome.")
      expect(exit._tag === "Completed" && exit.usage).toEqual({ inputTokens: 60, outputTokens: 13, totalTokens: 73 })
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
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) =>
        index === 0
          ? json(res, { error: { message: "Rate limit reached", type: "rate_limit_error" } }, 429, { "retry-after-ms": "150" })
          : json(res, index === 1 ? callWeather : answer)
      )
      const agent = yield* weatherAgent
      const exit = yield* Agent.run(agent, { input: "Weather in Oslo?" }).pipe(Effect.provide(model(server.url)))
      expect(exit._tag === "Completed" && exit.text).toBe("It is sunny in Oslo.")
      expect(server.requests).toHaveLength(3)
      expect(server.requests[1]!.body).toEqual(server.requests[0]!.body)
      expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(145)
    }).pipe(Effect.scoped))

  it.live("a 503 on a stream is retried before its first part", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) =>
        index === 0 ? json(res, { error: "loading model" }, 503) : sse(res, streamedAnswer)
      )
      const parts = yield* Effect.flatMap(ChatModel.ChatModel, (m) =>
        Stream.runCollect(m.stream({ system: undefined, messages: [{ _tag: "User", text: "hi" }], tools: [], toolChoice: "auto" }))
      ).pipe(Effect.provide(model(server.url)))
      expect(Chunk.toArray(parts).map((p) => p._tag)).toEqual(["TextDelta", "TextDelta", "Done"])
      expect(server.requests).toHaveLength(2)
    }).pipe(Effect.scoped))

  it.live("a stream that fails after its first part is not retried, even when the failure is transient", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) =>
        sse(res, [chunk({ content: "Hel" }), { error: { message: "engine overloaded", code: 503 } }])
      )
      const parts = yield* Effect.flatMap(ChatModel.ChatModel, (m) =>
        m.stream({ system: undefined, messages: [{ _tag: "User", text: "hi" }], tools: [], toolChoice: "auto" }).pipe(
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
        m.stream({ system: undefined, messages: [{ _tag: "User", text: "hi" }], tools: [], toolChoice: "auto" }).pipe(
          Stream.runCollect,
          Effect.flip
        )
      ).pipe(Effect.provide(model(server.url)))
      expect(error.reason).toBe("InvalidResponse")
      expect(error.message).toContain("sent a stream event that is not JSON: {not json")
    }).pipe(Effect.scoped))

  it.live("a 400 fails the run with InvalidRequest and the server's message, without a retry", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) =>
        json(res, { error: { message: "tools are not supported by this model", type: "invalid_request_error" } }, 400)
      )
      const agent = yield* weatherAgent
      const error = yield* Agent.run(agent, { input: "Weather?" }).pipe(Effect.provide(model(server.url)), Effect.flip)
      expect(error._tag).toBe("ModelError")
      if (error._tag !== "ModelError") return
      expect(error.reason).toBe("InvalidRequest")
      expect(error.status).toBe(400)
      expect(error.isTransient).toBe(false)
      expect(error.message).toBe(
        `the Chat Completions server at ${server.url}/v1/chat/completions answered HTTP 400: tools are not supported by this model. The request was refused; retrying will not help.`
      )
      expect(server.requests).toHaveLength(1)
    }).pipe(Effect.scoped))

  it.live("a 401 is Unauthorized; with retries off, a 429 carries its Retry-After", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) =>
        index === 0 ? json(res, { error: "bad key" }, 401) : json(res, { error: "slow down" }, 429, { "retry-after": "7" })
      )
      const call = Effect.flatMap(ChatModel.ChatModel, (m) =>
        m.generate({ system: undefined, messages: [{ _tag: "User", text: "hi" }], tools: [], toolChoice: "auto" })
      ).pipe(Effect.provide(model(server.url, { schedule: Schedule.stop })), Effect.flip)
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
      const error = yield* Effect.flatMap(ChatModel.ChatModel, (m) =>
        m.generate({ system: undefined, messages: [{ _tag: "User", text: "hi" }], tools: [], toolChoice: "auto" })
      ).pipe(Effect.provide(model("http://127.0.0.1:1", { schedule: Schedule.stop })), Effect.flip)
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
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => hang(res))
      const agent = yield* weatherAgent
      const fiber = yield* Agent.run(agent, { input: "Weather?" }).pipe(Effect.provide(model(server.url)), Effect.fork)
      yield* eventually(() => server.requests.length === 1)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      yield* eventually(() => server.aborted.length === 1)
      expect(server.aborted).toEqual([0])
    }).pipe(Effect.scoped))

  it.live("a timeout around a stream aborts its request", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(`data: ${JSON.stringify(chunk({ content: "Hel" }))}\n\n`)
      })
      const error = yield* Effect.flatMap(ChatModel.ChatModel, (m) =>
        m.stream({ system: undefined, messages: [{ _tag: "User", text: "hi" }], tools: [], toolChoice: "auto" }).pipe(
          Stream.runCollect,
          Effect.timeout("200 millis"),
          Effect.flip
        )
      ).pipe(Effect.provide(model(server.url)))
      expect(error._tag).toBe("TimeoutException")
      yield* eventually(() => server.aborted.length === 1)
    }).pipe(Effect.scoped))

  it.live("sends tool_choice: none, required, and a named function", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => json(res, answer))
      const agent = yield* weatherAgent
      const choices: ReadonlyArray<ChatModel.ToolChoice> = ["none", "required", { tool: "get_weather" }]
      yield* Effect.flatMap(ChatModel.ChatModel, (m) =>
        Effect.forEach(choices, (toolChoice) =>
          m.generate({ system: undefined, messages: [{ _tag: "User", text: "hi" }], tools: agent.toolDefinitions, toolChoice })
        )
      ).pipe(Effect.provide(model(server.url)))
      expect(server.requests.map((r) => r.body.tool_choice)).toEqual([
        "none",
        "required",
        { type: "function", function: { name: "get_weather" } }
      ])
    }).pipe(Effect.scoped))

  it.live("layerConfig reads AGENTFX_BASE_URL, AGENTFX_MODEL and the optional AGENTFX_API_KEY (blank: none)", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => json(res, answer))
      const generate = Effect.flatMap(ChatModel.ChatModel, (m) =>
        m.generate({ system: undefined, messages: [{ _tag: "User", text: "hi" }], tools: [], toolChoice: "auto" })
      )
      const withEnv = (env: Record<string, string>) =>
        Effect.provide(ChatCompletionsModel.layerConfig().pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromJson(env)))))
      yield* generate.pipe(withEnv({ AGENTFX_BASE_URL: `${server.url}/v1`, AGENTFX_MODEL: "qwen2.5:7b", AGENTFX_API_KEY: "" }))
      yield* generate.pipe(withEnv({ AGENTFX_BASE_URL: `${server.url}/v1`, AGENTFX_MODEL: "qwen2.5:7b", AGENTFX_API_KEY: "k" }))
      expect(server.requests.map((r) => [r.body.model, r.headers.authorization])).toEqual([["qwen2.5:7b", undefined], [
        "qwen2.5:7b",
        "Bearer k"
      ]])
      const missing = yield* generate.pipe(withEnv({ AGENTFX_BASE_URL: server.url }), Effect.flip)
      expect(missing._tag).toBe("ConfigError")
      expect(String(missing)).toContain("AGENTFX_MODEL")
    }).pipe(Effect.scoped))
})
