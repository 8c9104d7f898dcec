/**
 * The three wire formats the adapters speak, as their servers send them: the payloads of
 * a weather run (a call of get_weather for Oslo, then "It is sunny in Oslo."), streamed
 * and not, and of the failures the scenarios and the fault suite replay.
 */
import type { ChatModel } from "@agentfx/core"
import type { Duration, Layer } from "effect"
import { Redacted } from "effect"
import type * as Http from "node:http"
import { AnthropicChatModel, ChatCompletionsModel, type ModelRetry, OpenAiChatModel } from "../src/index.js"
import { fastRetry } from "./fixtures.js"
import { type Handler, json, sse, sseText } from "./loopback.js"
import * as Responses from "./recordings/responses.js"

/** What a test may change of an adapter Layer. */
export interface ModelOptions {
  readonly retry?: ModelRetry.Options
  readonly idleTimeout?: Duration.Input
  readonly requestTimeout?: Duration.Input
  /** `null`: no key (where the adapter allows none). */
  readonly apiKey?: string | null
  /** Replaces `http://127.0.0.1:<port>` in the base URL (e.g. to add credentials). */
  readonly baseUrl?: (url: string) => string
}

export interface WireFormat {
  readonly name: string
  /** The adapter on a loopback server (`url` is `http://127.0.0.1:<port>`). */
  readonly model: (url: string, options?: ModelOptions) => Layer.Layer<ChatModel.ChatModel>
  /** The API key `model` sends unless told otherwise. */
  readonly apiKey: string
  /** How messages name the server at `url`. */
  readonly provider: (url: string) => string
  /** Answers with a call of get_weather for Oslo (20 input, 5 output tokens). */
  readonly callWeather: (res: Http.ServerResponse) => void
  /** Answers "It is sunny in Oslo." (30 input, 7 output tokens). */
  readonly answer: (res: Http.ServerResponse) => void
  /** Answers `value` as a structured final answer, the way the provider sends one (30 input, 7 output tokens). */
  readonly answerJson: (res: Http.ServerResponse, value: object) => void
  /** The model name the adapter is configured with. */
  readonly modelName: string
  /**
   * For telemetry: the provider the adapter names (`gen_ai.provider.name`), and the finish
   * reasons in the provider's words of `answer` (a plain answer), `callWeather` and
   * `answerJson` (`gen_ai.response.finish_reasons`; none when the wire gives none).
   */
  readonly telemetry: {
    readonly provider: string | undefined
    readonly answer: ReadonlyArray<string> | undefined
    readonly callWeather: ReadonlyArray<string> | undefined
    readonly answerJson: ReadonlyArray<string> | undefined
  }
  /** Streams "It is sunny " + "in Oslo." (30 input, 7 output tokens): `before`, the two deltas, `after`. */
  readonly streamed: {
    readonly before: ReadonlyArray<unknown>
    readonly deltas: ReadonlyArray<unknown>
    readonly after: ReadonlyArray<unknown>
  }
  /** True when the server names its events (`event: <type>` lines). */
  readonly named: boolean
  /** The event the server sends when it fails mid-stream for a transient reason, and the message it gives. */
  readonly transientEvent: { readonly event: unknown; readonly message: string; readonly code: string }
  /** A body the server (or a proxy in front of it) sends with HTTP 200 in place of an answer. */
  readonly errorWith200: { readonly body: unknown; readonly message: string; readonly code: string }
  /**
   * The raw body (JSON, or the event stream when `streamed`) of an answer calling get_weather
   * with `args`, JSON text written into the provider's shape as it is: a value nested too
   * deep for `JSON.stringify` can be sent.
   */
  readonly rawCall: (args: string, streamed: boolean) => string
}

/** `value`'s JSON with the string `"<placeholder>"` replaced by the JSON text `raw`. */
const splice = (value: unknown, raw: string) => JSON.stringify(value).replace(JSON.stringify(placeholder), () => raw)
const placeholder = "<raw JSON>"

/** `text` in two pieces, as a server streams arguments. */
const halves = (text: string): ReadonlyArray<string> => [text.slice(0, text.length >> 1), text.slice(text.length >> 1)]

/** The whole streamed answer of a format. */
export const streamedAnswer = (format: WireFormat): ReadonlyArray<unknown> => [
  ...format.streamed.before,
  ...format.streamed.deltas,
  ...format.streamed.after
]

/** A loopback handler answering with `events` in the format's framing. */
export const stream = (format: WireFormat, events: ReadonlyArray<unknown>): Handler => (_req, res) =>
  sse(res, events, { named: format.named })

/** `events` in the format's framing. */
export const framed = (format: WireFormat, events: ReadonlyArray<unknown>) => sseText(events, { named: format.named })

// Chat Completions ------------------------------------------------------------------------

export const completion = (message: object, finish_reason: string | null, usage?: object) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "llama3.2",
  choices: [{ index: 0, message: { role: "assistant", content: null, ...message }, finish_reason }],
  ...(usage === undefined ? {} : { usage })
})

export const chunk = (delta: object, finish_reason: string | null = null) => ({
  id: "chatcmpl-2",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "llama3.2",
  choices: [{ index: 0, delta, finish_reason }]
})

export const usageChunk = (prompt: number, completion: number) => ({
  id: "chatcmpl-2",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "llama3.2",
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
})

export const chatCompletions: WireFormat = {
  name: "Chat Completions",
  apiKey: "sk-local",
  provider: (url) => `the Chat Completions server at ${url}/v1/chat/completions`,
  model: (url, options) =>
    ChatCompletionsModel.layer({
      baseUrl: `${options?.baseUrl?.(url) ?? url}/v1/`,
      model: "llama3.2",
      providerName: "ollama",
      apiKey: options?.apiKey === null ? undefined : Redacted.make(options?.apiKey ?? "sk-local"),
      retry: options?.retry ?? fastRetry,
      idleTimeout: options?.idleTimeout,
      requestTimeout: options?.requestTimeout
    }),
  callWeather: (res) =>
    json(
      res,
      completion(
        { tool_calls: [{ id: "call_oslo", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } }] },
        "tool_calls",
        { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 }
      )
    ),
  answer: (res) => json(res, completion({ content: "It is sunny in Oslo." }, "stop", { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37 })),
  answerJson: (res, value) =>
    json(res, completion({ content: JSON.stringify(value) }, "stop", { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37 })),
  modelName: "llama3.2",
  telemetry: { provider: "ollama", answer: ["stop"], callWeather: ["tool_calls"], answerJson: ["stop"] },
  streamed: {
    before: [chunk({ role: "assistant", content: "" })],
    deltas: [chunk({ content: "It is sunny " }), chunk({ content: "in Oslo." })],
    after: [chunk({ content: null }, "stop"), usageChunk(30, 7), "[DONE]"]
  },
  named: false,
  transientEvent: {
    event: {
      error: { message: "The server had an error while processing your request. Sorry about that!", type: "server_error", param: null, code: null }
    },
    message: "The server had an error while processing your request. Sorry about that!",
    code: "server_error"
  },
  errorWith200: {
    body: { error: { message: "Upstream provider is overloaded, please retry", type: "server_error", code: null } },
    message: "Upstream provider is overloaded, please retry",
    code: "server_error"
  },
  rawCall: (args, streamed) =>
    streamed
      ? sseText([
        chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_deep", type: "function", function: { name: "get_weather", arguments: "" } }] }),
        ...halves(args).map((piece) => chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] })),
        chunk({}, "tool_calls"),
        usageChunk(20, 5),
        "[DONE]"
      ])
      : JSON.stringify(completion(
        { tool_calls: [{ id: "call_deep", type: "function", function: { name: "get_weather", arguments: args } }] },
        "tool_calls",
        { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 }
      ))
}

// Responses -------------------------------------------------------------------------------

export const responsesMessage = (text: string) => ({
  type: "message",
  id: "msg_1",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text, annotations: [] }]
})

export const functionCall = (callId: string, city: string) => ({
  type: "function_call",
  id: `fc_${callId}`,
  call_id: callId,
  name: "get_weather",
  arguments: JSON.stringify({ city }),
  status: "completed"
})

const textDelta = (delta: string, sequence_number: number) => ({
  type: "response.output_text.delta",
  sequence_number,
  output_index: 0,
  content_index: 0,
  item_id: "msg_1",
  delta
})

export const responses: WireFormat = {
  name: "Responses",
  apiKey: "sk-test-key",
  provider: () => "OpenAI",
  model: (url, options) =>
    OpenAiChatModel.layer({
      apiKey: Redacted.make(options?.apiKey ?? "sk-test-key"),
      model: "gpt-4.1-mini",
      baseUrl: `${options?.baseUrl?.(url) ?? url}/v1`,
      retry: options?.retry ?? fastRetry,
      idleTimeout: options?.idleTimeout,
      requestTimeout: options?.requestTimeout
    }),
  callWeather: (res) =>
    json(res, Responses.envelope({ status: "completed", output: [functionCall("call_oslo", "Oslo")], usage: Responses.usage(20, 5) })),
  answer: (res) =>
    json(res, Responses.envelope({ status: "completed", output: [responsesMessage("It is sunny in Oslo.")], usage: Responses.usage(30, 7) })),
  answerJson: (res, value) =>
    json(res, Responses.envelope({ status: "completed", output: [responsesMessage(JSON.stringify(value))], usage: Responses.usage(30, 7) })),
  modelName: "gpt-4.1-mini",
  telemetry: { provider: "openai", answer: undefined, callWeather: undefined, answerJson: undefined },
  streamed: {
    before: [
      { type: "response.created", sequence_number: 0, response: Responses.envelope({ status: "in_progress" }) },
      {
        type: "response.output_item.added",
        sequence_number: 1,
        output_index: 0,
        item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] }
      }
    ],
    deltas: [textDelta("It is sunny ", 2), textDelta("in Oslo.", 3)],
    after: [
      { type: "response.output_item.done", sequence_number: 4, output_index: 0, item: responsesMessage("It is sunny in Oslo.") },
      {
        type: "response.completed",
        sequence_number: 5,
        response: Responses.envelope({ status: "completed", output: [responsesMessage("It is sunny in Oslo.")], usage: Responses.usage(30, 7) })
      }
    ]
  },
  named: true,
  transientEvent: {
    event: Responses.errorNested.at(-1),
    message: "The server had an error processing your request. Sorry about that! You can retry your request.",
    code: "server_error"
  },
  errorWith200: {
    body: { error: { message: "The server is overloaded. Please try again later.", type: "server_error", param: null, code: "server_error" } },
    message: "The server is overloaded. Please try again later.",
    code: "server_error"
  },
  rawCall: (args, streamed) => {
    const item = { ...functionCall("call_deep", "Oslo"), arguments: args }
    const completed = Responses.envelope({ status: "completed", output: [item], usage: Responses.usage(20, 5) })
    return streamed
      ? sseText([
        { type: "response.created", sequence_number: 0, response: Responses.envelope({ status: "in_progress" }) },
        { type: "response.output_item.added", sequence_number: 1, output_index: 0, item: { ...item, arguments: "", status: "in_progress" } },
        ...halves(args).map((delta, n) => ({
          type: "response.function_call_arguments.delta",
          sequence_number: 2 + n,
          output_index: 0,
          item_id: item.id,
          delta
        })),
        { type: "response.function_call_arguments.done", sequence_number: 4, output_index: 0, item_id: item.id, arguments: args },
        { type: "response.output_item.done", sequence_number: 5, output_index: 0, item },
        { type: "response.completed", sequence_number: 6, response: completed }
      ], { named: true })
      : JSON.stringify(completed)
  }
}

// Anthropic Messages ----------------------------------------------------------------------

export const anthropicMessage = (content: ReadonlyArray<object>, stop_reason: string | null, input: number, output: number) => ({
  id: "msg_01",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content,
  stop_reason,
  stop_sequence: null,
  usage: { input_tokens: input, output_tokens: output }
})

export const anthropicToolUse = { type: "tool_use", id: "toolu_01Oslo", name: "get_weather", input: { city: "Oslo" } }

/** Text Claude writes before calling the answer tool: not part of the answer. */
export const anthropicPreamble = { type: "text", text: "I have the temperature; here is the answer." }

/** Claude's call of the answer tool (`final_answer`) with `value`. */
export const anthropicAnswer = (value: object) => ({ type: "tool_use", id: "toolu_01Answer", name: "final_answer", input: value })

/** Claude's streamed structured answer: a sentence, then the answer tool's input in two deltas. */
export const anthropicStreamedAnswer = [
  { type: "message_start", message: anthropicMessage([], null, 30, 1) },
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Here it is." } },
  { type: "content_block_stop", index: 0 },
  { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_01Answer", name: "final_answer", input: {} } },
  { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{\"city\": \"Oslo\"," } },
  { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: " \"celsius\": 21}" } },
  { type: "content_block_stop", index: 1 },
  { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 7 } },
  { type: "message_stop" }
]

const anthropicTextDelta = (text: string) => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })

export const anthropic: WireFormat = {
  name: "Anthropic",
  apiKey: "sk-ant-test",
  provider: () => "Anthropic",
  model: (url, options) =>
    AnthropicChatModel.layer({
      apiKey: Redacted.make(options?.apiKey ?? "sk-ant-test"),
      model: "claude-sonnet-4-5",
      baseUrl: `${options?.baseUrl?.(url) ?? url}/v1`,
      retry: options?.retry ?? fastRetry,
      idleTimeout: options?.idleTimeout,
      requestTimeout: options?.requestTimeout
    }),
  callWeather: (res) => json(res, anthropicMessage([{ type: "text", text: "Let me check." }, anthropicToolUse], "tool_use", 20, 5)),
  answer: (res) => json(res, anthropicMessage([{ type: "text", text: "It is sunny in Oslo." }], "end_turn", 30, 7)),
  answerJson: (res, value) => json(res, anthropicMessage([anthropicPreamble, anthropicAnswer(value)], "tool_use", 30, 7)),
  modelName: "claude-sonnet-4-5",
  telemetry: { provider: "anthropic", answer: ["end_turn"], callWeather: ["tool_use"], answerJson: ["tool_use"] },
  streamed: {
    before: [
      { type: "message_start", message: anthropicMessage([], null, 30, 1) },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "ping" }
    ],
    deltas: [anthropicTextDelta("It is sunny "), anthropicTextDelta("in Oslo.")],
    after: [
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 7 } },
      { type: "message_stop" }
    ]
  },
  named: true,
  transientEvent: {
    event: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    message: "Overloaded",
    code: "overloaded_error"
  },
  errorWith200: {
    body: { type: "error", error: { type: "api_error", message: "Internal server error" } },
    message: "Internal server error",
    code: "api_error"
  },
  rawCall: (args, streamed) => {
    const toolUse = { ...anthropicToolUse, id: "toolu_01Deep", input: placeholder }
    return streamed
      ? [
        sseText([{ type: "message_start", message: anthropicMessage([], null, 20, 1) }], { named: true }),
        `event: content_block_start\ndata: ${splice({ type: "content_block_start", index: 0, content_block: toolUse }, args)}\n\n`,
        sseText([
          { type: "content_block_stop", index: 0 },
          { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 5 } },
          { type: "message_stop" }
        ], { named: true })
      ].join("")
      : splice(anthropicMessage([toolUse], "tool_use", 20, 5), args)
  }
}

/** Every format, for the suites that run against each. */
export const all: ReadonlyArray<WireFormat> = [chatCompletions, responses, anthropic]
