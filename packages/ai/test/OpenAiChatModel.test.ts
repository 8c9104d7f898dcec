import { Agent, type ChatModel, Tool } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Redacted, Result, Schedule, Schema } from "effect"
import { OpenAiChatModel } from "../src/index.js"
import { collect, fastRetry, generate, request, streaming, strictWeatherSchema, weatherAgent, weatherOutputSchema, weatherSchema } from "./fixtures.js"
import * as Features from "./features.js"
import { functionCall, responses as format, responsesMessage, stream, streamedAnswer } from "./formats.js"
import { json, loopback, sse } from "./loopback.js"
import * as Recorded from "./recordings/responses.js"
import * as Scenarios from "./scenarios.js"

const model = format.model
const noRetry = { schedule: Schedule.recurs(0) }

/** The SSE events of a streamed function call, arguments in two deltas. */
const streamedCall = [
  { type: "response.created", sequence_number: 0, response: Recorded.envelope({ status: "in_progress" }) },
  {
    type: "response.output_item.added",
    sequence_number: 1,
    output_index: 0,
    item: { ...functionCall("call_oslo", "Oslo"), arguments: "", status: "in_progress" }
  },
  { type: "response.function_call_arguments.delta", sequence_number: 2, item_id: "fc_call_oslo", output_index: 0, delta: "{\"city\":" },
  { type: "response.function_call_arguments.delta", sequence_number: 3, item_id: "fc_call_oslo", output_index: 0, delta: "\"Oslo\"}" },
  { type: "response.output_item.done", sequence_number: 4, output_index: 0, item: functionCall("call_oslo", "Oslo") },
  {
    type: "response.completed",
    sequence_number: 5,
    response: Recorded.envelope({ status: "completed", output: [functionCall("call_oslo", "Oslo")], usage: Recorded.usage(20, 5) })
  }
]

/** Text streamed, then a call that only `response.completed` lists (a compatible server that streams no function-call events). */
const callOnlyInFinal = [
  { type: "response.created", sequence_number: 0, response: Recorded.envelope({ status: "in_progress" }) },
  { type: "response.output_text.delta", sequence_number: 1, output_index: 0, content_index: 0, item_id: "msg_1", delta: "Let me check." },
  {
    type: "response.completed",
    sequence_number: 2,
    response: Recorded.envelope({
      status: "completed",
      output: [responsesMessage("Let me check."), functionCall("call_oslo", "Oslo")],
      usage: Recorded.usage(20, 5)
    })
  }
]

/**
 * A call announced with empty arguments and none streamed after, whose arguments — and the
 * answer's text — come only whole in `response.completed`; or the same answer cut at
 * `max_output_tokens` (`response.incomplete`).
 */
const wholeOnlyInFinal = (end: "completed" | "incomplete") => [
  { type: "response.created", sequence_number: 0, response: Recorded.envelope({ status: "in_progress" }) },
  {
    type: "response.output_item.added",
    sequence_number: 1,
    output_index: 1,
    item: { ...functionCall("call_oslo", "Oslo"), arguments: "", status: "in_progress" }
  },
  {
    type: `response.${end}`,
    sequence_number: 2,
    response: Recorded.envelope({
      status: end,
      ...(end === "incomplete" ? { incomplete_details: { reason: "max_output_tokens" } } : {}),
      output: [responsesMessage("Checking."), functionCall("call_oslo", "Oslo")],
      usage: Recorded.usage(20, 5)
    })
  }
]

/** The answer `wholeOnlyInFinal` gives: the final response's text and call, whole. */
const wholeFromFinal = (finishReason: ChatModel.FinishReason): ChatModel.ChatResponse => ({
  text: "Checking.",
  toolCalls: [{ id: "call_oslo", name: "get_weather", args: { city: "Oslo" } }],
  finishReason,
  usage: { inputTokens: 20, outputTokens: 5, totalTokens: 25 }
})

const expectedSecondInput = [
  { role: "system", content: "You are a weather bot." },
  { role: "user", content: [{ type: "input_text", text: "Weather in Oslo?" }] },
  { type: "function_call", call_id: "call_oslo", name: "get_weather", arguments: "{\"city\":\"Oslo\"}" },
  { type: "function_call_output", call_id: "call_oslo", output: "\"Sunny in Oslo\"" }
]

const sunny = (usage: ChatModel.Usage, finishReason: ChatModel.FinishReason = "stop"): ChatModel.ChatResponse => ({
  text: "It is sunny in Oslo.",
  toolCalls: [],
  finishReason,
  usage
})

/**
 * What each recorded stream must give: the answer, or the error's reason and message. Before
 * this adapter (through `@effect/ai-openai`), `unnumbered`, `refusal`, `errorNested`,
 * `errorFlat`, `failedServerError` and `failedUnknownCode` came out wrong (docs/decisions/020).
 */
const expectations: ReadonlyArray<readonly [string, ReadonlyArray<unknown>, Result.Result<ChatModel.ChatResponse, readonly [string, string]>]> = [
  ["a plain answer", Recorded.text, Result.succeed(sunny({ inputTokens: 30, outputTokens: 7, totalTokens: 37 }))],
  [
    "two parallel calls, arguments in deltas then whole in .done events",
    Recorded.parallelCalls,
    Result.succeed({
      text: "",
      toolCalls: [
        { id: "call_oslo", name: "get_weather", args: { city: "Oslo" } },
        { id: "call_rome", name: "get_weather", args: { city: "Rome" } }
      ],
      finishReason: "tool-calls",
      usage: { inputTokens: 20, outputTokens: 9, totalTokens: 29 }
    })
  ],
  [
    "text streamed, a call only in response.completed: the call is kept, never an answer without it",
    callOnlyInFinal,
    Result.succeed({
      text: "Let me check.",
      toolCalls: [{ id: "call_oslo", name: "get_weather", args: { city: "Oslo" } }],
      finishReason: "tool-calls",
      usage: { inputTokens: 20, outputTokens: 5, totalTokens: 25 }
    })
  ],
  [
    "a call announced with empty arguments, whole only in response.completed, with the answer's text: both kept, never a call without its arguments",
    wholeOnlyInFinal("completed"),
    Result.succeed(wholeFromFinal("tool-calls"))
  ],
  [
    "the same answer cut at max_output_tokens: length, as Chat Completions and Anthropic say it, never tool-calls",
    wholeOnlyInFinal("incomplete"),
    Result.succeed({ ...wholeFromFinal("length"), providerFinishReasons: ["max_output_tokens"] })
  ],
  [
    "a call whose deltas name only its item id, its call_id only in response.completed: one call, under its call_id",
    Recorded.callIdAtTheEnd,
    Result.succeed({
      text: "",
      toolCalls: [{ id: "call_oslo", name: "get_weather", args: { city: "Oslo" } }],
      finishReason: "tool-calls",
      usage: { inputTokens: 20, outputTokens: 5, totalTokens: 25 }
    })
  ],
  ["events without sequence_number", Recorded.unnumbered, Result.succeed(sunny({ inputTokens: 30, outputTokens: 7, totalTokens: 37 }))],
  ["keepalive events between deltas", Recorded.keepalive, Result.succeed(sunny({ inputTokens: 30, outputTokens: 7, totalTokens: 37 }))],
  ["a reasoning item before the answer", Recorded.reasoning, Result.succeed(sunny({ inputTokens: 30, outputTokens: 27, totalTokens: 57 }))],
  [
    "a refusal",
    Recorded.refusal,
    Result.succeed({ text: "I'm sorry, I can't help with that.", toolCalls: [], finishReason: "refusal", usage: { inputTokens: 25, outputTokens: 9, totalTokens: 34 } })
  ],
  [
    "response.incomplete (max_output_tokens)",
    Recorded.incomplete,
    Result.succeed({
      text: "It is sunny",
      toolCalls: [],
      finishReason: "length",
      usage: { inputTokens: 30, outputTokens: 2, totalTokens: 32 },
      providerFinishReasons: ["max_output_tokens"]
    })
  ],
  [
    "the error event as sent: code and message nested under error",
    Recorded.errorNested,
    Result.fail(["unavailable", "OpenAI failed mid-stream (server_error): The server had an error processing your request. Sorry about that! You can retry your request."])
  ],
  [
    "the error event in the reference's flat shape",
    Recorded.errorFlat,
    Result.fail(["rate-limited", "OpenAI failed mid-stream (rate_limit_exceeded): Rate limit reached for gpt-4.1-mini on tokens per min (TPM)."])
  ],
  [
    "response.failed with server_error: an error, never an empty answer",
    Recorded.failedServerError,
    Result.fail(["unavailable", "OpenAI failed mid-stream (server_error): An error occurred while processing your request. You can retry your request."])
  ],
  [
    "response.failed with a code outside the generated schema",
    Recorded.failedUnknownCode,
    Result.fail(["invalid-request", "OpenAI failed mid-stream (context_length_exceeded): Your input exceeds the context window of this model."])
  ],
  [
    "a stream cut before response.completed",
    Recorded.cut,
    Result.fail(["invalid-response", "OpenAI's stream ended before the answer did (no response.completed): the connection was cut"])
  ]
]

describe("OpenAiChatModel (Responses API)", () => {
  it.live("drives a full run: the exact request, tool schemas verbatim, the tool result sent back with the provider's call id", () =>
    Effect.gen(function*() {
      const requests = yield* Scenarios.weatherRunCompletes(format)
      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/responses", "POST /v1/responses"])
      expect(requests[0]!.headers.authorization).toBe("Bearer sk-test-key")
      expect(requests[0]!.body).toEqual({
        model: "gpt-4.1-mini",
        input: expectedSecondInput.slice(0, 2),
        tools: [{ type: "function", name: "get_weather", description: "Current weather for a city", parameters: weatherSchema, strict: false }],
        tool_choice: "auto"
      })
      expect(requests[1]!.body.input).toEqual(expectedSecondInput)
    }).pipe(Effect.scoped))

  it.live("strict: true is sent on every tool strict mode takes, its parameters in their strict form; reasoning models get the system prompt as a developer message", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => format.answer(res))
      const agent = yield* weatherAgent
      const layer = (name: string) =>
        OpenAiChatModel.layer({ apiKey: Redacted.make("sk-test-key"), model: name, baseUrl: `${server.url}/v1`, strict: true })
      yield* Agent.run(agent, { input: "hi" }).pipe(Effect.provide(layer("gpt-4.1-mini")))
      yield* Agent.run(agent, { input: "hi" }).pipe(Effect.provide(layer("o4-mini")))
      expect(server.requests.map((r) => [r.body.tools[0].strict, r.body.input[0].role])).toEqual([[true, "system"], [true, "developer"]])
      expect(server.requests[0]!.body.tools[0].parameters).toEqual(strictWeatherSchema)
      // a tool strict mode cannot take (a property that may be left out but not be null) goes without it
      const loose = Tool.make("lookup", {
        description: "Looks a city up",
        parameters: Schema.Struct({ city: Schema.String, region: Schema.optionalKey(Schema.String) }),
        success: Schema.String,
        handler: ({ city }) => Effect.succeed(city)
      })
      yield* Agent.run(Agent.make({ tools: [loose] }), { input: "hi" }).pipe(Effect.provide(layer("gpt-4.1-mini")))
      expect(server.requests[2]!.body.tools[0]).toMatchObject({ name: "lookup", strict: false, parameters: { required: ["city"] } })
    }).pipe(Effect.scoped))

  it.live("streams (SSE): text deltas, then exactly one Done", () =>
    Effect.gen(function*() {
      const [sent] = yield* Scenarios.streamsTextThenDone(format)
      expect(sent!.body.stream).toBe(true)
    }))
  it.live("drives a full run over SSE: the streamed call's id and arguments reach the tool and come back", () =>
    Effect.gen(function*() {
      const server = yield* loopback((req, res, index) => stream(format, index === 0 ? streamedCall : streamedAnswer(format))(req, res, index))
      const exit = yield* Agent.run(yield* weatherAgent, { input: "Weather in Oslo?" }).pipe(Effect.provide(streaming(model(server.url))))
      expect(exit._tag === "Completed" && exit.text).toBe("It is sunny in Oslo.")
      expect(server.requests[1]!.body.input).toEqual(expectedSecondInput)
    }).pipe(Effect.scoped))

  describe("recorded streams (docs/decisions/020)", () => {
    for (const [name, events, expected] of expectations) {
      it.live(name, () =>
        Effect.gen(function*() {
          const server = yield* loopback((_req, res) => sse(res, events, { named: true }))
          const tools = (yield* weatherAgent).toolDefinitions
          const parts = yield* collect(request({ tools })).pipe(Effect.provide(model(server.url, { retry: noRetry })), Effect.result)
          if (Result.isSuccess(expected)) {
            const done = Result.isSuccess(parts) ? parts.success.at(-1) : undefined
            expect(done).toEqual({ _tag: "Done", response: { ...expected.success, provider: "openai" } })
            const deltas = Result.isSuccess(parts) ? parts.success.flatMap((part) => (part._tag === "TextDelta" ? [part.text] : [])) : []
            expect(deltas.join("")).toBe(expected.success.text)
          } else {
            expect(Result.isFailure(parts) && [parts.failure.reason, parts.failure.message]).toEqual(expected.failure)
          }
        }).pipe(Effect.scoped))
    }
  })

  describe("non-streamed responses", () => {
    it.live("status failed: the server's error, never an empty answer", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res) =>
          json(res, Recorded.envelope({ status: "failed", error: { code: "server_error", message: "An error occurred while processing your request." } }))
        )
        const error = yield* generate().pipe(Effect.provide(model(server.url, { retry: noRetry })), Effect.flip)
        expect([error.reason, error.isTransient, error.message]).toEqual([
          "unavailable",
          true,
          "OpenAI answered HTTP 200 with an error (server_error): An error occurred while processing your request."
        ])
      }).pipe(Effect.scoped))
    it.live("a refusal part, an incomplete response, a still queued one", () =>
      Effect.gen(function*() {
        const refusal = { ...responsesMessage(""), content: [{ type: "refusal", refusal: "I can't help with that." }] }
        const bodies = [
          Recorded.envelope({ status: "completed", output: [refusal], usage: Recorded.usage(9, 6) }),
          Recorded.envelope({ status: "incomplete", incomplete_details: { reason: "content_filter" }, output: [responsesMessage("It is")] }),
          { ...Recorded.envelope({ status: "completed" }), status: "queued" }
        ]
        const server = yield* loopback((_req, res, index) => json(res, bodies[index]))
        const layer = model(server.url, { retry: noRetry })
        const refused = yield* generate().pipe(Effect.provide(layer))
        const filtered = yield* generate().pipe(Effect.provide(layer))
        const queued = yield* generate().pipe(Effect.provide(layer), Effect.flip)
        expect([refused.text, refused.finishReason, refused.usage.totalTokens]).toEqual(["I can't help with that.", "refusal", 15])
        expect([filtered.text, filtered.finishReason, filtered.providerFinishReasons]).toEqual(["It is", "content-filter", ["content_filter"]])
        expect([queued.reason, queued.message]).toEqual(["invalid-response", "OpenAI answered a response that is queued, not completed"])
      }).pipe(Effect.scoped))
    it.live("a refusal part without text is no refusal (the rule of every adapter): the answer's text, finish reason stop", () =>
      Effect.gen(function*() {
        const message = { ...responsesMessage(""), content: [{ type: "output_text", text: "Sunny.", annotations: [] }, { type: "refusal", refusal: "" }] }
        const server = yield* loopback((_req, res) => json(res, Recorded.envelope({ status: "completed", output: [message], usage: Recorded.usage(9, 2) })))
        const response = yield* generate().pipe(Effect.provide(model(server.url, { retry: noRetry })))
        expect([response.text, response.finishReason]).toEqual(["Sunny.", "stop"])
      }).pipe(Effect.scoped))
    it.live("arguments that are not JSON, and an unknown tool, reach the loop: refused there, the model is told, the run goes on", () =>
      Effect.gen(function*() {
        const server = yield* loopback((_req, res, index) =>
          index === 0
            ? json(
              res,
              Recorded.envelope({
                status: "completed",
                output: [{ ...functionCall("call_x", "Oslo"), arguments: "{city: Oslo" }, { ...functionCall("call_y", "Rome"), name: "get_wether" }]
              })
            )
            : format.answer(res)
        )
        const exit = yield* Agent.run(yield* weatherAgent, { input: "Weather?" }).pipe(Effect.provide(model(server.url)))
        expect(exit._tag === "Completed" && exit.toolCalls.map((o) => o._tag)).toEqual(["Failed", "Failed"])
        const [malformed, unknown, malformedResult, unknownResult] = server.requests[1]!.body.input.slice(2)
        expect([malformed.arguments, unknown.name]).toEqual([JSON.stringify("{city: Oslo"), "get_wether"])
        expect([malformedResult.call_id, JSON.parse(malformedResult.output)]).toEqual(["call_x", expect.stringMatching(/^semantic error: /)])
        expect([unknownResult.call_id, JSON.parse(unknownResult.output)]).toEqual(["call_y", expect.stringMatching(/^semantic error: .*get_wether/)])
      }).pipe(Effect.scoped))
  })

  it.live("a transient error event before any text is retried", () => Scenarios.transientMidStreamRetried(format))
  it.live("a transient error event after text is not retried", () => Scenarios.transientAfterTextFails(format))
  it.live("a cut stream is invalid-response, never an answer", () => Scenarios.cutStreamIsInvalid(format))
  it.live("a 200 with an error body gives the server's message and class (generate and stream)", () => Scenarios.errorWith200(format))

  it.live("a 429 is retried, not before its Retry-After; the run then completes", () =>
    Scenarios.rateLimitedThenCompletes(
      format,
      (res) => json(res, { error: { message: "Rate limit reached for gpt-4.1-mini", type: "requests" } }, 429, { "retry-after-ms": "150" })
    ))
  it.live("a 400 fails the run with invalid-request and OpenAI's message, without a retry", () =>
    Scenarios.refused(
      format,
      (res) => json(res, { error: { message: "Invalid schema for function 'get_weather'", type: "invalid_request_error" } }, 400),
      () => "OpenAI answered HTTP 400: Invalid schema for function 'get_weather'. The request was refused; retrying will not help."
    ))
  it.live("interrupting a run aborts the model request: the server sees the connection close", () => Scenarios.abortedWhenInterrupted(format))
  it.live("sends tool_choice: none, required, and a named function", () =>
    Effect.map(Scenarios.toolChoicesSent(format), (sent) => expect(sent).toEqual(["none", "required", { type: "function", name: "get_weather" }])))

  describe("settings and structured output", () => {
    it.live("settings go out as temperature, top_p, max_output_tokens and (with tools) parallel_tool_calls; stop is not sent, and warned about once", () =>
      Effect.gen(function*() {
        const { bodies, warnings } = yield* Features.settingsSent(format)
        const sampling = { temperature: 0.2, top_p: 0.9, max_output_tokens: 300 }
        expect(bodies).toEqual([
          { ...sampling, tool_choice: "auto", parallel_tool_calls: false },
          { ...sampling, tool_choice: "auto", parallel_tool_calls: false, stream: true },
          sampling,
          { tool_choice: "auto" }
        ])
        expect(warnings).toEqual([
          "OpenAI ignores settings.stop: the Responses API has no stop sequences; use ChatCompletionsModel (OpenAI's Chat Completions API takes stop) if the answer must end at one"
        ])
      }))

    it.live("output is asked for as text.format json_schema, beside the tools: strict when strict mode takes the schema, not when a property may be left out but not be null", () =>
      Effect.gen(function*() {
        const bodies = yield* Features.outputSent(format)
        const jsonSchema = (schema: unknown, strict: boolean) => ({ format: { type: "json_schema", name: "final_answer", schema, strict } })
        expect(bodies.map((body) => body.text)).toEqual([
          jsonSchema(weatherOutputSchema, true),
          jsonSchema(weatherOutputSchema, true),
          jsonSchema(Features.looseOutput.schema, false),
          jsonSchema(weatherOutputSchema, true)
        ])
        expect(bodies.map((body) => body.tools?.map((tool: { name: string }) => tool.name))).toEqual([["get_weather"], undefined, undefined, ["get_weather"]])
        expect(bodies[3].stream).toBe(true)
      }))

    it.live("Agent.run with output: the tool runs, the JSON answer is Completed.value; every call asks for the format", () =>
      Effect.gen(function*() {
        const requests = yield* Features.structuredRunCompletes(format)
        expect(requests.map((r) => r.body.text.format.name)).toEqual(["final_answer", "final_answer"])
      }))
  })

  describe("timeouts", () => {
    it.effect("idleTimeout: headers, then nothing, fails the stream after exactly that long", () => Scenarios.idleTimeout(format))
    it.effect("requestTimeout: a server that never answers fails the attempt after exactly that long; the retry gets the full time", () =>
      Scenarios.requestTimeout(format))
    it.live("a timeout that is not a positive duration fails each call with invalid-request", () => Scenarios.invalidTimeouts(format))
  })

  it.live("a history nested too deep to encode: invalid-request, never a defect", () => Scenarios.unencodableHistory(format))

  describe("credentials", () => {
    it.live("spans hold no credential", () =>
      Effect.map(Scenarios.spansMasked(format, "key"), (attributes) =>
        expect(Object.fromEntries(attributes)).toMatchObject({ model: "gpt-4.1-mini", url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1\/responses$/) })))
    it.live("masked in ModelError messages: the key, header values, URL credentials", () => Effect.asVoid(Scenarios.credentialsMasked(format)))
    it.live("a key of 4 characters is masked too", () => Effect.asVoid(Scenarios.credentialsMasked(format, "zq7w")))
    it.live("a blank API key: invalid-request, no request sent", () => Scenarios.blankKey(format))
    it.live("a base URL with user:pass@ and the API key: invalid-request, no request sent", () => Scenarios.urlCredentialsWithKey(format))
  })

  it.live("layerConfig reads OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL (default gpt-4.1-mini, also when blank); a blank key is missing", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => format.answer(res))
      const withEnv = (env: Record<string, string>) =>
        Effect.provide(
          OpenAiChatModel.layerConfig({ retry: fastRetry }).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))))
        )
      yield* generate().pipe(withEnv({ OPENAI_API_KEY: "sk-env", OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_MODEL: " " }))
      yield* generate().pipe(withEnv({ OPENAI_API_KEY: "sk-env", OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_MODEL: "gpt-4.1" }))
      expect(server.requests.map((r) => [r.body.model, r.headers.authorization])).toEqual([
        ["gpt-4.1-mini", "Bearer sk-env"],
        ["gpt-4.1", "Bearer sk-env"]
      ])
      const missing = yield* generate().pipe(withEnv({ OPENAI_BASE_URL: server.url }), Effect.flip)
      expect(String(missing)).toContain("OPENAI_API_KEY")
      // Effect 4's config providers read an empty value as missing: the error is the missing key's
      const empty = yield* generate().pipe(withEnv({ OPENAI_API_KEY: "", OPENAI_BASE_URL: server.url }), Effect.flip)
      expect([empty._tag, String(empty)]).toEqual(["ConfigError", expect.stringContaining(`Expected string\n  at ["OPENAI_API_KEY"]`)])
      const blank = yield* generate().pipe(withEnv({ OPENAI_API_KEY: "  ", OPENAI_BASE_URL: server.url }), Effect.flip)
      expect([blank._tag, String(blank)]).toEqual([
        "ConfigError",
        expect.stringContaining("Expected OPENAI_API_KEY to be set, but it is blank (a blank value counts as unset)")
      ])
      expect(server.requests).toHaveLength(2)
    }).pipe(Effect.scoped))
})
