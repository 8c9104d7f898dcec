import { Agent, ChatModel } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { ConfigProvider, Effect, Layer, Redacted, Schedule, Stream } from "effect"
import { ChatCompletionsModel } from "../src/index.js"
import { collect, generate, request, streaming, weatherAgent, weatherOutputSchema, weatherSchema } from "./fixtures.js"
import * as Features from "./features.js"
import { chatCompletions as format, chunk, completion, stream, usageChunk } from "./formats.js"
import { eventually, json, loopback, sse, sseText } from "./loopback.js"
import * as LlamaCpp from "./recordings/llamaCpp.js"
import * as Scenarios from "./scenarios.js"

const model = format.model
const noRetry = { schedule: Schedule.recurs(0) }

/** `fetch`, every request sent to the loopback server at `url` whatever its URL. */
const redirectedTo = (url: string) =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, HttpClient.mapRequest(HttpClientRequest.setUrl(`${url}/v1/chat/completions`)))
  ).pipe(Layer.provide(FetchHttpClient.layer))

/** A streamed tool call whose arguments arrive in pieces, two calls interleaved by index (OpenAI). */
const streamedToolCalls = [
  chunk({ role: "assistant", content: null, tool_calls: null }),
  chunk({ tool_calls: [{ index: 0, id: "call_oslo", type: "function", function: { name: "get_weather", arguments: "" } }] }),
  chunk({ tool_calls: [{ index: 1, id: "call_rome", type: "function", function: { name: "get_weather", arguments: "{\"ci" } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"city\":" } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: "\"Oslo\"}" } }] }),
  chunk({ tool_calls: [{ index: 1, function: { arguments: "ty\":\"Rome\"}" } }] }),
  chunk({}, "tool_calls"),
  usageChunk(20, 9),
  "[DONE]"
]
const streamedAnswer = [
  chunk({ role: "assistant", content: "" }),
  chunk({ content: "It is sunny " }),
  chunk({ content: "in Oslo." }),
  chunk({ content: null }, "stop"),
  usageChunk(30, 7),
  "[DONE]"
]

/** The tool calls of one streamed answer made of `chunks`, then `finish_reason: "tool_calls"` and `[DONE]`. */
const streamedCalls = (chunks: ReadonlyArray<object>) =>
  Effect.gen(function*() {
    const server = yield* loopback(stream(format, [...chunks, chunk({}, "tool_calls"), "[DONE]"]))
    const parts = yield* collect().pipe(Effect.provide(model(server.url)))
    const done = parts.at(-1)
    return done?._tag === "Done" ? done.response.toolCalls : []
  }).pipe(Effect.scoped)

const weather = (city: string) => ({ name: "get_weather", arguments: JSON.stringify({ city }) })

/** The error a stream fails with, when the server sends `events` (or this raw event-stream text). */
const streamError = (events: ReadonlyArray<unknown> | string) =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.end(typeof events === "string" ? events : sseText(events))
    })
    const error = yield* collect().pipe(Effect.provide(model(server.url, { retry: noRetry })), Effect.flip)
    return { error, provider: format.provider(server.url) }
  }).pipe(Effect.scoped)

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
      const [sent] = yield* Scenarios.streamsTextThenDone(format)
      expect(sent!.headers.accept).toBe("text/event-stream")
      expect(sent!.body).toEqual({
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

  describe("tool-call deltas as servers send them", () => {
    it.live("Mistral: whole calls without index, each with its own id", () =>
      Effect.map(
        streamedCalls([
          chunk({ role: "assistant", content: "" }),
          chunk({ tool_calls: [{ id: "D681PevKs", function: weather("Oslo") }] }),
          chunk({ tool_calls: [{ id: "kIhwkEvZ2", function: weather("Rome") }] })
        ]),
        (calls) =>
          expect(calls).toEqual([
            { id: "D681PevKs", name: "get_weather", args: { city: "Oslo" } },
            { id: "kIhwkEvZ2", name: "get_weather", args: { city: "Rome" } }
          ])
      ))
    it.live("Mistral's reasoning models: content as chunks (thinking, then text) — the text is the answer, plain and streamed", () =>
      Effect.gen(function*() {
        const thinking = { type: "thinking", thinking: [{ type: "text", text: "The user greets me." }] }
        const plain = yield* loopback((_req, res) => json(res, completion({ content: [thinking, { type: "text", text: "Hello!" }] }, "stop")))
        const answered = yield* generate().pipe(Effect.provide(model(plain.url)))
        expect([answered.text, answered.finishReason]).toEqual(["Hello!", "stop"])
        const streamed = yield* loopback(stream(format, [
          chunk({ role: "assistant", content: [thinking] }),
          chunk({ content: [{ type: "text", text: "Hel" }] }),
          chunk({ content: "lo!" }, "stop"),
          "[DONE]"
        ]))
        const parts = yield* collect().pipe(Effect.provide(model(streamed.url)))
        expect(parts.map((part) => part._tag === "TextDelta" ? part.text : part.response.text)).toEqual(["Hel", "lo!", "Hello!"])
      }).pipe(Effect.scoped))
    it.live("Gemini's compatible endpoint: two whole calls in one chunk, no index, empty ids", () =>
      Effect.map(
        streamedCalls([chunk({ role: "assistant", tool_calls: [{ id: "", type: "function", function: weather("Oslo") }, { id: "", type: "function", function: weather("Rome") }] })]),
        (calls) => {
          expect(calls.map((call) => [call.name, call.args])).toEqual([["get_weather", { city: "Oslo" }], ["get_weather", { city: "Rome" }]])
          expect(calls.map((call) => call.id)).toEqual([expect.stringMatching(/^call_[0-9a-f-]{36}$/), expect.stringMatching(/^call_[0-9a-f-]{36}$/)])
          expect(calls[0]!.id).not.toBe(calls[1]!.id)
        }
      ))
    it.live("Ollama: every call numbered index 0, each a whole call with its own id: two calls, never {…}{…}", () =>
      Effect.map(
        streamedCalls([
          chunk({ role: "assistant", content: "", tool_calls: [{ id: "call_0tq1l5v3", index: 0, type: "function", function: weather("Oslo") }] }),
          chunk({ role: "assistant", content: "", tool_calls: [{ id: "call_x8f2kq0c", index: 0, type: "function", function: weather("Rome") }] })
        ]),
        (calls) =>
          expect(calls).toEqual([
            { id: "call_0tq1l5v3", name: "get_weather", args: { city: "Oslo" } },
            { id: "call_x8f2kq0c", name: "get_weather", args: { city: "Rome" } }
          ])
      ))
    it.live("Ollama without ids: index 0 twice, each piece named with whole arguments: two calls", () =>
      Effect.map(
        streamedCalls([
          chunk({ tool_calls: [{ index: 0, function: weather("Oslo") }] }),
          chunk({ tool_calls: [{ index: 0, function: weather("Rome") }] })
        ]),
        (calls) => expect(calls.map((call) => call.args)).toEqual([{ city: "Oslo" }, { city: "Rome" }])
      ))
    it.live("a server repeating a call's whole arguments: replaced, not concatenated", () =>
      Effect.map(
        streamedCalls([
          chunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "get_weather", arguments: "{\"city\":" } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: "\"Oslo\"}" } }] }),
          chunk({ tool_calls: [{ index: 0, id: "call_1", function: { arguments: "{\"city\":\"Oslo\"}" } }] })
        ]),
        (calls) => expect(calls).toEqual([{ id: "call_1", name: "get_weather", args: { city: "Oslo" } }])
      ))
    it.live("pieces with neither index nor id continue the latest call, in order", () =>
      Effect.map(
        streamedCalls([
          chunk({ tool_calls: [{ id: "call_a", function: { name: "get_weather", arguments: "{\"city\"" } }] }),
          chunk({ tool_calls: [{ function: { arguments: ":\"Oslo\"}" } }] }),
          chunk({ tool_calls: [{ id: "call_b", function: { name: "get_weather", arguments: "" } }] }),
          chunk({ tool_calls: [{ function: { arguments: "{\"city\":\"Rome\"}" } }] })
        ]),
        (calls) =>
          expect(calls).toEqual([
            { id: "call_a", name: "get_weather", args: { city: "Oslo" } },
            { id: "call_b", name: "get_weather", args: { city: "Rome" } }
          ])
      ))
  })

  describe("refusals", () => {
    it.live("a streamed delta.refusal: its own finish reason, its text kept and streamed", () =>
      Effect.gen(function*() {
        const server = yield* loopback(stream(format, [
          chunk({ role: "assistant", content: null, refusal: "" }),
          chunk({ refusal: "I'm sorry, " }),
          chunk({ refusal: "I can't help with that." }),
          chunk({}, "stop"),
          usageChunk(12, 9),
          "[DONE]"
        ]))
        const parts = yield* collect().pipe(Effect.provide(model(server.url)))
        expect(parts).toEqual([
          { _tag: "TextDelta", text: "I'm sorry, " },
          { _tag: "TextDelta", text: "I can't help with that." },
          {
            _tag: "Done",
            response: {
              text: "I'm sorry, I can't help with that.",
              toolCalls: [],
              finishReason: "refusal",
              usage: { inputTokens: 12, outputTokens: 9, totalTokens: 21 },
              provider: "ollama",
              providerFinishReasons: ["stop"]
            }
          }
        ])
      }).pipe(Effect.scoped))
    it.live("message.refusal of a non-streamed answer", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res) => json(res, completion({ content: null, refusal: "I can't help with that." }, "stop")))
        const response = yield* generate().pipe(Effect.provide(model(server.url)))
        expect([response.text, response.finishReason]).toEqual(["I can't help with that.", "refusal"])
      }).pipe(Effect.scoped))
  })

  describe("errors inside the stream", () => {
    it.live("OpenAI's server_error with code null, before any text: unavailable with the server's message, retried", () =>
      Scenarios.transientMidStreamRetried(format))
    it.live("a transient error after text was streamed is not retried", () => Scenarios.transientAfterTextFails(format))
    it.live("Groq: an `event: error` whose status_code decides the class", () =>
      Effect.gen(function*() {
        const groq = yield* streamError(
          `event: error\ndata: ${JSON.stringify({ error: { message: "Service Unavailable", type: "internal_server_error", status_code: 503 } })}\n\n`
        )
        expect([groq.error.reason, groq.error.status, groq.error.isTransient, groq.error.message]).toEqual([
          "unavailable",
          503,
          true,
          `${groq.provider} failed mid-stream (internal_server_error): Service Unavailable`
        ])
        const bare = yield* streamError([{ error: { message: "Service Unavailable", status_code: 503 } }])
        expect([bare.error.reason, bare.error.status, bare.error.message]).toEqual([
          "unavailable",
          503,
          `${bare.provider} failed mid-stream (503): Service Unavailable`
        ])
      }))
    it.live("string codes (rate_limit_exceeded), vLLM's numeric code, unknown codes", () =>
      Effect.gen(function*() {
        const limited = yield* streamError([{ error: { message: "Rate limit reached", type: "tokens", code: "rate_limit_exceeded" } }])
        const vllm = yield* streamError([{ error: { object: "error", message: "prompt is too long", type: "BadRequestError", param: null, code: 400 } }])
        const unknown = yield* streamError([{ error: { message: "something odd", type: "weird_error" } }])
        expect([limited.error.reason, limited.error.isTransient]).toEqual(["rate-limited", true])
        expect([vllm.error.reason, vllm.error.status, vllm.error.message]).toEqual([
          "invalid-request",
          400,
          `${vllm.provider} failed mid-stream (BadRequestError): prompt is too long`
        ])
        expect([unknown.error.reason, unknown.error.isTransient, unknown.error.message]).toEqual([
          "other",
          false,
          `${unknown.provider} failed mid-stream (weird_error): something odd`
        ])
      }))
    it.live("llama.cpp, older builds: a bare `error:` field after text — the server's error, never a cut stream", () =>
      Effect.gen(function*() {
        const { error, provider } = yield* streamError(`${sseText(LlamaCpp.started)}error: ${JSON.stringify(LlamaCpp.exceedContext)}\n\n`)
        expect([error.reason, error.status, error.isTransient, error.message]).toEqual([
          "invalid-request",
          400,
          false,
          `${provider} failed mid-stream (exceed_context_size_error): the request exceeds the available context size, try increasing it`
        ])
      }))
    it.live("llama.cpp, later builds: `data: {error}` with a numeric code — unavailable for a 500", () =>
      Effect.gen(function*() {
        const { error, provider } = yield* streamError([...LlamaCpp.started, { error: LlamaCpp.serverError }])
        expect([error.reason, error.status, error.isTransient, error.message]).toEqual([
          "unavailable",
          500,
          true,
          `${provider} failed mid-stream (server_error): ${LlamaCpp.serverError.message}`
        ])
      }))
    it.live("Ollama: `data: {\"error\": \"…\"}`, the message as a bare string — other, with the message", () =>
      Effect.gen(function*() {
        const message = "llama runner process has terminated: signal: killed"
        const { error, provider } = yield* streamError([chunk({ role: "assistant", content: "The" }), { error: message }])
        expect([error.reason, error.isTransient, error.message]).toEqual(["other", false, `${provider} failed mid-stream: ${message}`])
      }))
    it.live("Gemini's compatible endpoint: `data: [{error}]`, Google's error in an array — its code decides", () =>
      Effect.gen(function*() {
        const { error, provider } = yield* streamError([
          chunk({ role: "assistant", content: "The" }),
          [{ error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } }]
        ])
        expect([error.reason, error.status, error.isTransient, error.message]).toEqual([
          "unavailable",
          503,
          true,
          `${provider} failed mid-stream (UNAVAILABLE): The model is overloaded. Please try again later.`
        ])
      }))
    it.live("a stream event that is not JSON is an invalid-response", () =>
      Effect.gen(function*() {
        const { error } = yield* streamError(["{not json"])
        expect([error.reason, error.message]).toEqual(["invalid-response", expect.stringContaining("sent a stream event that is not JSON: {not json")])
      }))
  })

  describe("the end of a stream", () => {
    it.live("no finish_reason and no [DONE]: the connection was cut — invalid-response, never an answer", () =>
      Scenarios.cutStreamIsInvalid(format))
    it.live("a finish_reason without [DONE], or [DONE] without a finish_reason, is a whole answer", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res, index) =>
          sse(res, index === 0 ? [chunk({ content: "Hi" }, "stop")] : [chunk({ content: "Hi" }), "[DONE]"])
        )
        const first = yield* collect().pipe(Effect.provide(model(server.url)))
        const second = yield* collect().pipe(Effect.provide(model(server.url)))
        expect([first.at(-1), second.at(-1)].map((part) => part?._tag === "Done" && [part.response.text, part.response.finishReason])).toEqual([
          ["Hi", "stop"],
          ["Hi", "unknown"]
        ])
      }).pipe(Effect.scoped))
  })

  it.live("streamed usage: each count is the latest sent of its field; one that is no count keeps the last good one", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) =>
        sse(res, [
          chunk({ content: "Hi" }),
          usageChunk(30, 1),
          chunk({}, "stop"),
          { ...usageChunk(30, 7), usage: { prompt_tokens: -1, completion_tokens: 7 } },
          "[DONE]"
        ])
      )
      const done = (yield* collect().pipe(Effect.provide(model(server.url)))).at(-1)
      expect(done?._tag === "Done" && done.response.usage).toEqual({ inputTokens: 30, outputTokens: 7, totalTokens: 37 })
    }).pipe(Effect.scoped))

  it.live("usage: a total_tokens above input + output makes the output total − input; one below, or beside a count that is none, is ignored", () =>
    Effect.gen(function*() {
      const totals = [52, 20, 52]
      const server = yield* loopback((_req, res, index) =>
        json(res, completion({ content: "Hi" }, "stop", { prompt_tokens: index === 2 ? -1 : 30, completion_tokens: 7, total_tokens: totals[index] }))
      )
      const usages = []
      for (const _ of totals) usages.push((yield* generate().pipe(Effect.provide(model(server.url)))).usage)
      expect(usages).toEqual([
        { inputTokens: 30, outputTokens: 22, totalTokens: 52 },
        { inputTokens: 30, outputTokens: 7, totalTokens: 37 },
        { inputTokens: 0, outputTokens: 7, totalTokens: 7 }
      ])
    }).pipe(Effect.scoped))

  it.live("a 200 with an error body gives the server's message and class (generate and stream)", () => Scenarios.errorWith200(format))
  it.live("a stream answered with JSON that is not an error is an invalid-response", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => json(res, completion({ content: "Hi" }, "stop")))
      const error = yield* collect().pipe(Effect.provide(model(server.url)), Effect.flip)
      expect([error.reason, error.message]).toEqual([
        "invalid-response",
        expect.stringContaining("sent JSON where an event stream was asked for: {\"id\":\"chatcmpl-1\"")
      ])
    }).pipe(Effect.scoped))

  it.live("a 429 is retried, not before its Retry-After; the run then completes", () =>
    Scenarios.rateLimitedThenCompletes(
      format,
      (res) => json(res, { error: { message: "Rate limit reached", type: "rate_limit_error" } }, 429, { "retry-after-ms": "150" })
    ))
  it.live("a 503 on a stream is retried before its first part", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) => (index === 0 ? json(res, { error: "loading model" }, 503) : sse(res, streamedAnswer)))
      const parts = yield* collect().pipe(Effect.provide(model(server.url)))
      expect(parts.map((p) => p._tag)).toEqual(["TextDelta", "TextDelta", "Done"])
      expect(server.requests).toHaveLength(2)
    }).pipe(Effect.scoped))
  it.live("a 400 fails the run with invalid-request and the server's message, without a retry", () =>
    Scenarios.refused(
      format,
      (res) => json(res, { error: { message: "tools are not supported by this model", type: "invalid_request_error" } }, 400),
      (url) =>
        `the Chat Completions server at ${url}/v1/chat/completions answered HTTP 400: tools are not supported by this model. The request was refused; retrying will not help.`
    ))
  it.live("a 401 is unauthorized; with retries off, a 429 carries its Retry-After", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) =>
        index === 0 ? json(res, { error: "bad key" }, 401) : json(res, { error: "slow down" }, 429, { "retry-after": "7" })
      )
      const call = generate().pipe(Effect.provide(model(server.url, { retry: noRetry })), Effect.flip)
      const unauthorized = yield* call
      expect([unauthorized.reason, unauthorized.status, unauthorized.message]).toEqual([
        "unauthorized",
        401,
        `the Chat Completions server at ${server.url}/v1/chat/completions answered HTTP 401: bad key. Check the API key.`
      ])
      const limited = yield* call
      expect([limited.reason, limited.status, limited.retryAfterMillis, limited.isTransient]).toEqual(["rate-limited", 429, 7000, true])
      expect(server.requests).toHaveLength(2)
    }).pipe(Effect.scoped))
  it.live("a refused connection is a transient network error", () =>
    Effect.gen(function*() {
      const error = yield* generate().pipe(Effect.provide(model("http://127.0.0.1:1", { retry: noRetry })), Effect.flip)
      expect(error.reason).toBe("network")
      expect(error.isTransient).toBe(true)
      expect(error.message).toContain("could not reach the Chat Completions server at http://127.0.0.1:1/v1/chat/completions")
    }))

  it.live("malformed tool-call arguments: the tool is not run, the model is told, the run goes on", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) =>
        index === 0
          ? json(res, completion({ tool_calls: [{ id: "call_bad", type: "function", function: { name: "get_weather", arguments: "{city: Oslo" } }] }, "tool_calls"))
          : format.answer(res)
      )
      const agent = yield* weatherAgent
      const exit = yield* Agent.run(agent, { input: "Weather?" }).pipe(Effect.provide(model(server.url)))
      expect(exit._tag === "Completed" && exit.toolCalls.map((o) => o._tag)).toEqual(["Failed"])
      const [assistant, result] = server.requests[1]!.body.messages.slice(2)
      expect(assistant.tool_calls[0].function.arguments).toBe(JSON.stringify("{city: Oslo"))
      expect(result.tool_call_id).toBe("call_bad")
      expect(result.content).toMatch(/^semantic error: /)
    }).pipe(Effect.scoped))

  it.live("interrupting a run aborts the model request: the server sees the connection close", () => Scenarios.abortedWhenInterrupted(format))
  it.live("a timeout around a stream aborts its request", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(`data: ${JSON.stringify(chunk({ content: "Hel" }))}\n\n`)
      })
      const error = yield* Effect.flatMap(ChatModel.ChatModel, (m) => m.stream(request()).pipe(Stream.runCollect, Effect.timeout("200 millis"), Effect.flip)).pipe(
        Effect.provide(model(server.url))
      )
      expect(error._tag).toBe("TimeoutError")
      yield* eventually(() => server.aborted.length === 1)
    }).pipe(Effect.scoped))

  describe("settings and structured output", () => {
    it.live("settings go out as temperature, top_p, max_tokens, stop and (with tools) parallel_tool_calls; nothing is ignored", () =>
      Effect.gen(function*() {
        const { bodies, warnings } = yield* Features.settingsSent(format)
        const sampling = { temperature: 0.2, top_p: 0.9, max_tokens: 300, stop: ["END"] }
        expect(bodies).toEqual([
          { ...sampling, tool_choice: "auto", parallel_tool_calls: false },
          { ...sampling, tool_choice: "auto", parallel_tool_calls: false, stream: true, stream_options: { include_usage: true } },
          sampling,
          { tool_choice: "auto" }
        ])
        expect(warnings).toEqual([])
      }))

    it.live("maxTokensField: max_completion_tokens by default for api.openai.com, or when asked; a bad value fails each call before any request", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res) => format.answer(res))
        const redirected = redirectedTo(server.url)
        const openAi = Layer.effect(
          ChatModel.ChatModel,
          ChatCompletionsModel.make({ baseUrl: "https://api.openai.com/v1", model: "o4-mini", apiKey: Redacted.make("sk-test-key") })
        ).pipe(Layer.provide(redirected))
        const maxOf = (body: Record<string, unknown>) => [body.max_tokens, body.max_completion_tokens]
        const settings = { maxOutputTokens: 300 }
        yield* generate(request({ settings })).pipe(Effect.provide(openAi))
        const asked = ChatCompletionsModel.layer({ baseUrl: `${server.url}/v1`, model: "llama3.2", maxTokensField: "max_completion_tokens" })
        yield* generate(request({ settings })).pipe(Effect.provide(asked))
        expect(server.requests.map((r) => maxOf(r.body))).toEqual([[undefined, 300], [undefined, 300]])
        const bad = ChatCompletionsModel.layer({ baseUrl: `${server.url}/v1`, model: "llama3.2", maxTokensField: "max_output_tokens" as never })
        const error = yield* generate().pipe(Effect.provide(bad), Effect.flip)
        expect([error.reason, error.message]).toEqual([
          "invalid-request",
          `ChatCompletionsModel: maxTokensField must be "max_tokens" or "max_completion_tokens", got "max_output_tokens".`
        ])
        expect(server.requests).toHaveLength(2)
      }).pipe(Effect.scoped))

    it.live("names its provider on each model call's span: by the base URL's host, else openai_compatible, or as told (gen_ai.provider.name)", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res) => format.answer(res))
        const redirected = redirectedTo(server.url)
        const at = (options: ChatCompletionsModel.Options) =>
          Layer.effect(ChatModel.ChatModel, ChatCompletionsModel.make(options)).pipe(Layer.provide(redirected))
        const named = Effect.fnUntraced(function*(layer: Layer.Layer<ChatModel.ChatModel>) {
          const { spans, tracer } = Scenarios.recordingTracer()
          const exit = yield* Agent.run(yield* weatherAgent, { input: "Weather in Oslo?" }).pipe(Effect.provide(layer), Effect.withTracer(tracer))
          expect(exit._tag).toBe("Completed")
          return spans.filter((span) => span.name === "agentfx.model").map((span) => span.attributes.get("gen_ai.provider.name"))
        })
        expect(yield* named(at({ baseUrl: "https://api.groq.com/openai/v1", model: "llama-3.3-70b-versatile" }))).toEqual(["groq"])
        expect(yield* named(at({ baseUrl: "https://API.DeepSeek.com/v1", model: "deepseek-chat" }))).toEqual(["deepseek"])
        expect(yield* named(at({ baseUrl: "https://my-resource.openai.azure.com/openai/v1", model: "gpt-4.1" }))).toEqual(["azure.ai.openai"])
        expect(yield* named(ChatCompletionsModel.layer({ baseUrl: `${server.url}/v1`, model: "llama3.2" }))).toEqual(["openai_compatible"])
        expect(yield* named(ChatCompletionsModel.layer({ baseUrl: `${server.url}/v1`, model: "llama3.2", providerName: "ollama" }))).toEqual(["ollama"])
        expect(ChatCompletionsModel.providerNameOf("not a url")).toBe("openai_compatible")
      }).pipe(Effect.scoped))

    it.live("output is asked for as response_format json_schema, beside the tools: strict when strict mode takes the schema, not when a property may be left out but not be null", () =>
      Effect.gen(function*() {
        const bodies = yield* Features.outputSent(format)
        const jsonSchema = (schema: unknown, strict: boolean) => ({ type: "json_schema", json_schema: { name: "final_answer", schema, strict } })
        expect(bodies.map((body) => body.response_format)).toEqual([
          jsonSchema(weatherOutputSchema, true),
          jsonSchema(weatherOutputSchema, true),
          jsonSchema(Features.looseOutput.schema, false),
          jsonSchema(weatherOutputSchema, true)
        ])
        expect(bodies.map((body) => body.tools?.map((tool: { function: { name: string } }) => tool.function.name))).toEqual([
          ["get_weather"],
          undefined,
          undefined,
          ["get_weather"]
        ])
        expect(bodies[3].stream).toBe(true)
      }))

    it.live("Agent.run with output: the tool runs, the JSON answer is Completed.value; every call asks for the format", () =>
      Effect.gen(function*() {
        const requests = yield* Features.structuredRunCompletes(format)
        expect(requests.map((r) => r.body.response_format.json_schema.name)).toEqual(["final_answer", "final_answer"])
      }))
  })

  describe("timeouts", () => {
    it.effect("idleTimeout: headers, then nothing, fails the stream after exactly that long", () => Scenarios.idleTimeout(format))
    it.effect("requestTimeout: a server that never answers fails the attempt after exactly that long; the retry gets the full time", () =>
      Scenarios.requestTimeout(format))
    it.effect("requestTimeout: the error names the timeout", () => Effect.asVoid(Scenarios.requestTimeoutError(format)))
    it.live("a timeout that is not a positive duration fails each call with invalid-request", () => Scenarios.invalidTimeouts(format))
  })

  it.live("a history nested too deep to encode: invalid-request, never a defect", () => Scenarios.unencodableHistory(format))

  describe("credentials", () => {
    it.live("spans hold no credential: the key, or the base URL's user:pass", () =>
      Effect.gen(function*() {
        const attributes = yield* Scenarios.spansMasked(format, "key")
        yield* Scenarios.spansMasked(format, "url")
        expect(Object.fromEntries(attributes)).toMatchObject({ model: "llama3.2", url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions$/) })
      }))
    it.live("masked in ModelError messages: the key, header values, URL credentials", () => Effect.asVoid(Scenarios.credentialsMasked(format)))
    it.live("a key of 4 characters is masked too", () => Effect.asVoid(Scenarios.credentialsMasked(format, "zq7w")))
    it.live("a blank API key: invalid-request, no request sent", () => Scenarios.blankKey(format))
    it.live("a base URL with user:pass@ is sent as Authorization: Basic and never shown", () =>
      Scenarios.urlCredentials(format, { apiKey: null }))
    it.live("a base URL with user:pass@ and an API key: invalid-request, no request sent", () => Scenarios.urlCredentialsWithKey(format))
  })

  it.live("sends tool_choice: none, required, and a named function", () =>
    Effect.map(Scenarios.toolChoicesSent(format), (sent) => expect(sent).toEqual(["none", "required", { type: "function", function: { name: "get_weather" } }])))

  it.live("layerConfig reads AGENTFX_BASE_URL, AGENTFX_MODEL and the optional AGENTFX_API_KEY (blank: none; a blank model is missing)", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => format.answer(res))
      const withEnv = (env: Record<string, string>) =>
        Effect.provide(ChatCompletionsModel.layerConfig().pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))))
      yield* generate().pipe(withEnv({ AGENTFX_BASE_URL: `${server.url}/v1`, AGENTFX_MODEL: "qwen2.5:7b", AGENTFX_API_KEY: "" }))
      yield* generate().pipe(withEnv({ AGENTFX_BASE_URL: `${server.url}/v1`, AGENTFX_MODEL: "qwen2.5:7b", AGENTFX_API_KEY: "k" }))
      expect(server.requests.map((r) => [r.body.model, r.headers.authorization])).toEqual([["qwen2.5:7b", undefined], ["qwen2.5:7b", "Bearer k"]])
      const missing = yield* generate().pipe(withEnv({ AGENTFX_BASE_URL: server.url }), Effect.flip)
      expect(missing._tag).toBe("ConfigError")
      expect(String(missing)).toContain("AGENTFX_MODEL")
      const blank = yield* generate().pipe(withEnv({ AGENTFX_BASE_URL: server.url, AGENTFX_MODEL: "  " }), Effect.flip)
      expect(String(blank)).toContain("Expected AGENTFX_MODEL to be set, but it is blank (a blank value counts as unset)")
      expect(server.requests).toHaveLength(2)
    }).pipe(Effect.scoped))
})
