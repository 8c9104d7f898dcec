import { Agent } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Config, ConfigProvider, Effect, Fiber, Layer, Option, Redacted } from "effect"
import { AnthropicChatModel, ChatCompletionsModel, OpenAiChatModel } from "../src/index.js"
import { unwritable } from "../src/internal/wireJson.js"
import {
  collect,
  generate,
  request,
  streamedAnswerParts,
  streaming,
  structuredAgent,
  weatherAgent,
  weatherOutput,
  weatherOutputSchema,
  weatherSchema
} from "./fixtures.js"
import * as Features from "./features.js"
import {
  anthropic as format,
  chatCompletions,
  responses,
  anthropicAnswer,
  anthropicMessage,
  anthropicPreamble,
  anthropicStreamedAnswer as streamedAnswerTool,
  anthropicToolUse as toolUse,
  stream,
  streamedAnswer
} from "./formats.js"
import { eventually, hang, json, loopback } from "./loopback.js"
import * as Scenarios from "./scenarios.js"

const model = format.model

const streamedCall = [
  { type: "message_start", message: anthropicMessage([], null, 20, 1) },
  { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_01Oslo", name: "get_weather", input: {} } },
  { type: "ping" },
  { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{\"city\":" } },
  { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "\"Oslo\"}" } },
  { type: "content_block_stop", index: 0 },
  { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 5 } },
  { type: "message_stop" }
]

/** The answer tool as Claude is told about it. */
const answerTool = (schema: unknown) => ({
  name: "final_answer",
  description: "Give your final answer by calling this tool once you have everything you need: its input is the answer, in exactly this shape.",
  input_schema: schema
})

const toolResultTurn = {
  role: "user",
  content: [{ type: "tool_result", tool_use_id: "toolu_01Oslo", content: "\"Sunny in Oslo\"", is_error: false }]
}

describe("AnthropicChatModel (Messages API)", () => {
  it.live("drives a full run: the exact request, tool schemas verbatim, the tool result sent back with the tool_use id", () =>
    Effect.gen(function*() {
      const requests = yield* Scenarios.weatherRunCompletes(format)
      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/messages", "POST /v1/messages"])
      expect([requests[0]!.headers["x-api-key"], requests[0]!.headers["anthropic-version"]]).toEqual(["sk-ant-test", "2023-06-01"])
      expect(requests[0]!.body).toEqual({
        model: "claude-sonnet-4-5",
        max_tokens: 4096,
        system: [{ type: "text", text: "You are a weather bot." }],
        messages: [{ role: "user", content: [{ type: "text", text: "Weather in Oslo?" }] }],
        tools: [{ name: "get_weather", description: "Current weather for a city", input_schema: weatherSchema }],
        tool_choice: { type: "auto" }
      })
      expect(requests[1]!.body.messages.slice(1)).toEqual([
        { role: "assistant", content: [{ type: "text", text: "Let me check." }, toolUse] },
        toolResultTurn
      ])
    }).pipe(Effect.scoped))

  it.live("a failed tool call is sent back with is_error: true", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) =>
        index === 0 ? json(res, anthropicMessage([{ ...toolUse, input: { town: "Oslo" } }], "tool_use", 1, 1)) : format.answer(res)
      )
      yield* Agent.run(yield* weatherAgent, { input: "Weather?" }).pipe(Effect.provide(model(server.url)))
      const result = server.requests[1]!.body.messages[2].content[0]
      expect([result.type, result.tool_use_id, result.is_error]).toEqual(["tool_result", "toolu_01Oslo", true])
      expect(JSON.parse(result.content)).toMatch(/^semantic error: /)
    }).pipe(Effect.scoped))

  it.live("streams (SSE): text deltas, then exactly one Done", () =>
    Effect.gen(function*() {
      const [sent] = yield* Scenarios.streamsTextThenDone(format)
      expect(sent!.body.stream).toBe(true)
    }))
  it.live("drives a full run over SSE: the streamed tool_use reaches the tool and its result comes back", () =>
    Effect.gen(function*() {
      const server = yield* loopback((req, res, index) => stream(format, index === 0 ? streamedCall : streamedAnswer(format))(req, res, index))
      const exit = yield* Agent.run(yield* weatherAgent, { input: "Weather in Oslo?" }).pipe(Effect.provide(streaming(model(server.url))))
      expect(exit._tag === "Completed" && exit.text).toBe("It is sunny in Oslo.")
      expect(server.requests[1]!.body.messages.slice(1)).toEqual([{ role: "assistant", content: [toolUse] }, toolResultTurn])
    }).pipe(Effect.scoped))

  it.live("overloaded_error mid-stream before any text: transient, with Anthropic's message, retried", () => Scenarios.transientMidStreamRetried(format))
  it.live("overloaded_error after text: not retried", () => Scenarios.transientAfterTextFails(format))

  it.live("stop_reason refusal: its own finish reason, the text kept", () =>
    Effect.gen(function*() {
      const server = yield* loopback(stream(format, [
        ...format.streamed.before,
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "I can't help with that." } },
        { type: "content_block_stop", index: 0 },
        { type: "message_delta", delta: { stop_reason: "refusal", stop_sequence: null }, usage: { output_tokens: 6 } },
        { type: "message_stop" }
      ]))
      const parts = yield* collect().pipe(Effect.provide(model(server.url)))
      const done = parts.at(-1)
      expect(done?._tag === "Done" && [done.response.text, done.response.finishReason]).toEqual(["I can't help with that.", "refusal"])
    }).pipe(Effect.scoped))

  it.live("usage: input counts cache writes and reads; the last cumulative count wins; total is input + output", () =>
    Effect.gen(function*() {
      const cached = { input_tokens: 12, cache_creation_input_tokens: 300, cache_read_input_tokens: 2000, output_tokens: 1 }
      const server = yield* loopback((_req, res, index) =>
        index === 0
          ? json(res, { ...anthropicMessage([{ type: "text", text: "Hi" }], "end_turn", 0, 0), usage: { ...cached, output_tokens: 9 } })
          : stream(format, [
            { type: "message_start", message: { ...anthropicMessage([], null, 0, 0), usage: cached } },
            ...format.streamed.before.slice(1),
            ...format.streamed.deltas,
            { type: "content_block_stop", index: 0 },
            { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { ...cached, output_tokens: 9 } },
            { type: "message_stop" }
          ])(_req, res, index)
      )
      const generated = yield* generate().pipe(Effect.provide(model(server.url)))
      const streamed = (yield* collect().pipe(Effect.provide(model(server.url)))).at(-1)
      const expected = { inputTokens: 2312, outputTokens: 9, totalTokens: 2321 }
      expect(generated.usage).toEqual(expected)
      expect(streamed?._tag === "Done" && streamed.response.usage).toEqual(expected)
    }).pipe(Effect.scoped))

  it.live("a streamed thinking block is kept whole, with its signature, marked with the server it came from; citations and unknown events are skipped", () =>
    Effect.gen(function*() {
      const server = yield* loopback(stream(format, [
        format.streamed.before[0],
        { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "The user wants weather." } },
        { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "EqQBCgIYAhIM" } },
        { type: "content_block_stop", index: 0 },
        { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
        { type: "a_future_event", detail: {} },
        { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "It is sunny in Oslo." } },
        { type: "content_block_delta", index: 1, delta: { type: "citations_delta", citation: { type: "char_location", cited_text: "x" } } },
        { type: "content_block_stop", index: 1 },
        ...format.streamed.after.slice(1)
      ]))
      const parts = yield* collect().pipe(Effect.provide(model(server.url)))
      expect(parts).toEqual([
        { _tag: "TextDelta", text: "It is sunny in Oslo." },
        {
          _tag: "Done",
          response: {
            text: "It is sunny in Oslo.",
            toolCalls: [],
            finishReason: "stop",
            usage: { inputTokens: 30, outputTokens: 7, totalTokens: 37 },
            provider: "anthropic",
            providerFinishReasons: ["end_turn"],
            reasoning: [{
              _tag: "Reasoning",
              provider: `anthropic:${server.url}`,
              text: "The user wants weather.",
              data: { type: "thinking", thinking: "The user wants weather.", signature: "EqQBCgIYAhIM" }
            }]
          }
        }
      ])
    }).pipe(Effect.scoped))

  it.live("a cut stream (no message_stop, no stop reason) is invalid-response, never an answer", () => Scenarios.cutStreamIsInvalid(format))
  it.live("a 200 with an error body gives the server's message and class (generate and stream)", () => Scenarios.errorWith200(format))

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
  it.live("a 400 fails the run with invalid-request and Anthropic's message, without a retry", () =>
    Scenarios.refused(
      format,
      (res) => json(res, { type: "error", error: { type: "invalid_request_error", message: "tools.0.input_schema: JSON schema is invalid" } }, 400),
      () => "Anthropic answered HTTP 400: tools.0.input_schema: JSON schema is invalid. The request was refused; retrying will not help."
    ))

  it.live("interrupting a run aborts the model request: the server sees the connection close", () => Scenarios.abortedWhenInterrupted(format))
  it.live("a timeout around a run aborts the model request: the server sees the connection close", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => hang(res))
      const fiber = yield* Agent.run(yield* weatherAgent, { input: "Weather?" }).pipe(
        Effect.provide(model(server.url)),
        Effect.timeout("300 millis"),
        Effect.flip,
        Effect.forkChild
      )
      yield* eventually(() => server.requests.length === 1)
      expect((yield* Fiber.join(fiber))._tag).toBe("TimeoutError")
      yield* eventually(() => server.aborted.length === 1)
      expect(server.aborted).toEqual([0])
    }).pipe(Effect.scoped))
  it.live("sends tool_choice none, any and a named tool (with the tools)", () =>
    Effect.map(Scenarios.toolChoicesSent(format), (sent) => expect(sent).toEqual([{ type: "none" }, { type: "any" }, { type: "tool", name: "get_weather" }])))

  describe("settings", () => {
    it.live("settings go out as max_tokens, temperature, top_p, stop_sequences and disable_parallel_tool_use; without them max_tokens is 4096", () =>
      Effect.gen(function*() {
        const { bodies, warnings } = yield* Features.settingsSent(format)
        const sampling = { max_tokens: 300, temperature: 0.2, top_p: 0.9, stop_sequences: ["END"] }
        expect(bodies).toEqual([
          { ...sampling, tool_choice: { type: "auto", disable_parallel_tool_use: true } },
          { ...sampling, tool_choice: { type: "auto", disable_parallel_tool_use: true }, stream: true },
          sampling,
          { max_tokens: 4096, tool_choice: { type: "auto" } }
        ])
        expect(warnings).toEqual([])
      }))

    it.live("parallelToolCalls sets disable_parallel_tool_use on any and a named tool; none takes no such field", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res) => format.answer(res))
        const tools = (yield* weatherAgent).toolDefinitions
        yield* Effect.all([
          generate(request({ tools, toolChoice: "required", settings: { parallelToolCalls: true } })),
          generate(request({ tools, toolChoice: { tool: "get_weather" }, settings: { parallelToolCalls: false } })),
          generate(request({ tools, toolChoice: "none", settings: { parallelToolCalls: false } }))
        ]).pipe(Effect.provide(model(server.url)))
        expect(server.requests.map((r) => r.body.tool_choice)).toEqual([
          { type: "any", disable_parallel_tool_use: false },
          { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
          { type: "none" }
        ])
      }).pipe(Effect.scoped))

    it.live("the Layer's maxTokens is the default the setting overrides; one that is not a positive integer fails each call before any request", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res) => format.answer(res))
        const layer = (maxTokens: number) =>
          AnthropicChatModel.layer({ apiKey: Redacted.make("sk-ant-test"), model: "claude-sonnet-4-5", baseUrl: `${server.url}/v1`, maxTokens })
        yield* generate().pipe(Effect.provide(layer(1024)))
        yield* generate(request({ settings: { maxOutputTokens: 64 } })).pipe(Effect.provide(layer(1024)))
        expect(server.requests.map((r) => r.body.max_tokens)).toEqual([1024, 64])
        for (const bad of [0, 1.5]) {
          const error = yield* generate().pipe(Effect.provide(layer(bad)), Effect.flip)
          expect([error.reason, error.message]).toEqual(["invalid-request", `Anthropic: maxTokens must be a positive integer, got ${bad}.`])
        }
        expect([server.requests.length, AnthropicChatModel.defaultMaxTokens]).toEqual([2, 4096])
      }).pipe(Effect.scoped))

    it.live("a temperature above 1 (Anthropic's range is 0 to 1) fails the call with invalid-request before any request", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res) => format.answer(res))
        const settings = { temperature: 1.5 }
        const generated = yield* generate(request({ settings })).pipe(Effect.provide(model(server.url)), Effect.flip)
        const streamed = yield* collect(request({ settings })).pipe(Effect.provide(model(server.url)), Effect.flip)
        for (const error of [generated, streamed]) {
          expect([error.reason, error.message]).toEqual(["invalid-request", "Anthropic takes a temperature from 0 to 1; settings.temperature is 1.5."])
        }
        yield* generate(request({ settings: { temperature: 1 } })).pipe(Effect.provide(model(server.url)))
        expect(server.requests.map((r) => r.body.temperature)).toEqual([1])
      }).pipe(Effect.scoped))
  })

  describe("structured output through the answer tool", () => {
    it.live("the answer tool is sent beside the agent's tools, tool choice as asked; alone, it is the tool choice", () =>
      Effect.gen(function*() {
        const bodies = yield* Features.outputSent(format)
        expect(bodies.map((body) => [body.tools, body.tool_choice])).toEqual([
          [[{ name: "get_weather", description: "Current weather for a city", input_schema: weatherSchema }, answerTool(weatherOutputSchema)], { type: "auto" }],
          [[answerTool(weatherOutputSchema)], { type: "tool", name: "final_answer" }],
          [[answerTool(Features.looseOutput.schema)], { type: "tool", name: "final_answer" }],
          [[{ name: "get_weather", description: "Current weather for a city", input_schema: weatherSchema }, answerTool(weatherOutputSchema)], { type: "auto" }]
        ])
        expect(bodies[3].stream).toBe(true)
      }))

    it.live("a call of the answer tool is the answer: its input as JSON text, the sentence before it left out; other calls stay", () =>
      Effect.gen(function*() {
        const answer = anthropicAnswer({ city: "Oslo", celsius: 21 })
        const server = yield* loopback((_req, res, index) =>
          json(res, anthropicMessage(index === 0 ? [anthropicPreamble, answer] : [toolUse, answer], "tool_use", 30, 7))
        )
        const asked = request({ output: weatherOutput, tools: (yield* weatherAgent).toolDefinitions })
        const alone = yield* generate(asked).pipe(Effect.provide(model(server.url)))
        const beside = yield* generate(asked).pipe(Effect.provide(model(server.url)))
        const usage = { inputTokens: 30, outputTokens: 7, totalTokens: 37 }
        // telemetry keeps Anthropic's own reason: the answer came as a tool call
        const told = { provider: "anthropic", providerFinishReasons: ["tool_use"] }
        expect([alone, beside]).toEqual([
          { text: `{"city":"Oslo","celsius":21}`, toolCalls: [], finishReason: "stop", usage, ...told },
          {
            text: `{"city":"Oslo","celsius":21}`,
            toolCalls: [{ id: "toolu_01Oslo", name: "get_weather", args: { city: "Oslo" } }],
            finishReason: "tool-calls",
            usage,
            ...told
          }
        ])
      }).pipe(Effect.scoped))

    it.live("an answer-tool input too deep to write as text: a marker in its place (no answer the loop can decode), never a defect", () =>
      Effect.gen(function*() {
        const deep = `${"[".repeat(10_000)}${"]".repeat(10_000)}`
        const server = yield* loopback((_req, res) => {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify(anthropicMessage([anthropicAnswer({ deep: 0 })], "tool_use", 30, 7)).replace(`{"deep":0}`, deep))
        })
        const response = yield* generate(request({ output: weatherOutput })).pipe(Effect.provide(model(server.url)))
        expect([response.text, response.toolCalls, response.finishReason]).toEqual([unwritable, [], "stop"])
      }).pipe(Effect.scoped))

    it.live("streamed: the text as it came, then the answer as one TextDelta, then Done with the answer", () =>
      Effect.gen(function*() {
        const server = yield* loopback(stream(format, streamedAnswerTool))
        const parts = yield* collect(request({ output: weatherOutput })).pipe(Effect.provide(model(server.url)))
        expect(parts).toEqual(streamedAnswerParts({ provider: "anthropic", providerFinishReasons: ["tool_use"] }))
      }).pipe(Effect.scoped))

    it.live("an agent tool named like the answer tool fails the call with invalid-request before any request", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res) => format.answer(res))
        const clash = request({ output: weatherOutput, tools: [{ name: "final_answer", description: "", parameters: { type: "object" } as never }] })
        const generated = yield* generate(clash).pipe(Effect.provide(model(server.url)), Effect.flip)
        const streamed = yield* collect(clash).pipe(Effect.provide(model(server.url)), Effect.flip)
        for (const error of [generated, streamed]) {
          expect([error.reason, error.message]).toEqual([
            "invalid-request",
            `Anthropic takes the final answer through a tool named "final_answer", and the agent has a tool of that name: rename the agent's tool.`
          ])
        }
        expect(server.requests).toHaveLength(0)
      }).pipe(Effect.scoped))

    it.live("Agent.run with output: the tool runs, Claude's call of the answer tool is Completed.value; the history keeps the answer as text", () =>
      Effect.gen(function*() {
        const requests = yield* Features.structuredRunCompletes(format)
        expect(requests.map((r) => r.body.tools.map((tool: { name: string }) => tool.name))).toEqual([
          ["get_weather", "final_answer"],
          ["get_weather", "final_answer"]
        ])
      }))

    it.live("Agent.run with output over SSE: the streamed tool_use runs, the streamed answer tool is Completed.value", () =>
      Effect.gen(function*() {
        const server = yield* loopback((req, res, index) => stream(format, index === 0 ? streamedCall : streamedAnswerTool)(req, res, index))
        const exit = yield* Agent.run(structuredAgent, { input: "Weather in Oslo?" }).pipe(Effect.provide(streaming(model(server.url))))
        expect(exit._tag === "Completed" && [exit.value, exit.text]).toEqual([{ city: "Oslo", celsius: 21 }, `{"city":"Oslo","celsius":21}`])
        expect(server.requests[1]!.body.messages.slice(1)).toEqual([{ role: "assistant", content: [toolUse] }, toolResultTurn])
      }).pipe(Effect.scoped))
  })

  describe("timeouts", () => {
    it.effect("idleTimeout: headers and ping, then nothing, fails the stream after exactly that long", () => Scenarios.idleTimeout(format))
    it.effect("requestTimeout: a server that never answers fails the attempt after exactly that long; the retry gets the full time", () =>
      Scenarios.requestTimeout(format))
    it.live("a timeout that is not a positive duration fails each call with invalid-request", () => Scenarios.invalidTimeouts(format))
  })

  it.live("a history nested too deep to encode: invalid-request, never a defect", () => Scenarios.unencodableHistory(format))

  describe("credentials", () => {
    it.live("spans hold no credential: the key, the base URL's user:pass", () =>
      Effect.map(Scenarios.spansMasked(format, "both"), (attributes) =>
        expect(Object.fromEntries(attributes)).toMatchObject({ model: "claude-sonnet-4-5", url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1\/messages$/) })))
    it.live("masked in ModelError messages: the key, header values, URL credentials", () => Effect.asVoid(Scenarios.credentialsMasked(format)))
    it.live("a key of 4 characters is masked too", () => Effect.asVoid(Scenarios.credentialsMasked(format, "zq7w")))
    it.live("a blank API key: invalid-request, no request sent", () => Scenarios.blankKey(format))
    it.live("a base URL with user:pass@ is sent as Authorization: Basic beside x-api-key, and never shown", () =>
      Effect.map(Scenarios.urlCredentials(format), (requests) => expect(requests.map((r) => r.headers["x-api-key"])).toEqual(["sk-ant-test", "sk-ant-test"])))
  })

  it.live("layerConfig reads ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and ANTHROPIC_MODEL (default claude-sonnet-4-5); a blank key is missing", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => format.answer(res))
      const withEnv = (env: Record<string, string>) =>
        Effect.provide(AnthropicChatModel.layerConfig().pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))))
      yield* generate().pipe(withEnv({ ANTHROPIC_API_KEY: "sk-ant-env", ANTHROPIC_BASE_URL: server.url }))
      expect([server.requests[0]!.path, server.requests[0]!.body.model, server.requests[0]!.headers["x-api-key"]])
        .toEqual(["/v1/messages", "claude-sonnet-4-5", "sk-ant-env"])
      const blank = yield* generate().pipe(withEnv({ ANTHROPIC_API_KEY: " ", ANTHROPIC_BASE_URL: server.url }), Effect.flip)
      expect(String(blank)).toContain("Expected ANTHROPIC_API_KEY to be set, but it is blank (a blank value counts as unset)")
      expect(server.requests).toHaveLength(1)
    }).pipe(Effect.scoped))

  it.live("baseUrl means one thing for every adapter: the API's URL up to and including its version path (decision 166)", () =>
    Effect.gen(function*() {
      const server = yield* loopback((req, res) =>
        req.path.endsWith("/messages") ? format.answer(res) : req.path.endsWith("/responses") ? responses.answer(res) : chatCompletions.answer(res))
      const baseUrl = `${server.url}/v1`
      const key = Redacted.make("sk-test")
      yield* generate().pipe(Effect.provide(AnthropicChatModel.layer({ apiKey: key, model: "claude-sonnet-4-5", baseUrl })))
      yield* generate().pipe(Effect.provide(OpenAiChatModel.layer({ apiKey: key, model: "gpt-4.1-mini", baseUrl })))
      yield* generate().pipe(Effect.provide(ChatCompletionsModel.layer({ baseUrl, model: "llama3.2" })))
      // a baseUrl given to layerConfig is the option's (with its /v1); ANTHROPIC_BASE_URL is read as Anthropic's SDKs read it (above)
      yield* generate().pipe(Effect.provide(AnthropicChatModel.layerConfig({ apiKey: Config.succeed(key), baseUrl: Config.succeed(Option.some(baseUrl)) })))
      expect(server.requests.map((r) => r.path)).toEqual(["/v1/messages", "/v1/responses", "/v1/chat/completions", "/v1/messages"])
    }).pipe(Effect.scoped))
})
