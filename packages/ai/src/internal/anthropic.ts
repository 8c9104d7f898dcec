/**
 * The Anthropic Messages wire format (`POST {apiUrl}/v1/messages`): neutral request →
 * request body; message and stream events → neutral response. Unknown content blocks and
 * events are skipped (Anthropic adds new ones); `error` events fail with the server's
 * error. No I/O here.
 */
import { ChatModel } from "@agentfx/core"
import { Either } from "effect"
import { errorFromPayload } from "./httpError.js"
import { defined } from "./settings.js"
import type * as Sse from "./sse.js"
import { type Call, StreamFold, usageOf } from "./streamFold.js"
import { wireParameters } from "./toolSchema.js"
import { count, invalid, isObject, type JsonObject, parseEvent, snippet, text } from "./wireJson.js"
import type { StreamReader, WireFormat } from "./wireModel.js"

type Json = JsonObject

interface WireMessage {
  readonly role: "user" | "assistant"
  readonly content: Array<object>
}

/** Consecutive user turns and tool results share one user message, as Anthropic requires of tool results. */
const toWire = (request: ChatModel.ChatRequest) => {
  const system: Array<{ readonly type: "text"; readonly text: string }> = []
  if (request.system !== undefined) system.push({ type: "text", text: request.system })
  const messages: Array<WireMessage> = []
  const append = (role: WireMessage["role"], blocks: ReadonlyArray<object>) => {
    const last = messages.at(-1)
    if (last?.role === role) last.content.push(...blocks)
    else messages.push({ role, content: [...blocks] })
  }
  for (const message of request.messages) {
    switch (message._tag) {
      case "System":
        system.push({ type: "text", text: message.text })
        break
      case "User":
        append("user", [{ type: "text", text: message.text }])
        break
      case "Assistant":
        append("assistant", [
          ...(message.text.length > 0 ? [{ type: "text", text: message.text }] : []),
          ...message.toolCalls.map((call) => ({ type: "tool_use", id: call.id, name: call.name, input: call.args }))
        ])
        break
      case "ToolResult":
        append("user", [{
          type: "tool_result",
          tool_use_id: message.callId,
          content: JSON.stringify(message.content),
          is_error: message.isError
        }])
        break
    }
  }
  return { system, messages }
}

/** The tool choice; `parallel` sets `disable_parallel_tool_use` (which `none` does not take). */
const toolChoice = (choice: ChatModel.ToolChoice, parallel: boolean | undefined) => {
  if (choice === "none") return { type: "none" }
  const parallelism = defined({ disable_parallel_tool_use: parallel === undefined ? undefined : !parallel })
  return choice === "auto"
    ? { type: "auto", ...parallelism }
    : choice === "required"
    ? { type: "any", ...parallelism }
    : { type: "tool", name: choice.tool, ...parallelism }
}

/** `max_tokens` is required by the API: the request's `maxOutputTokens`, else `maxTokens`. */
const requestBody = (model: string, maxTokens: number) => (request: ChatModel.ChatRequest, stream: boolean) => {
  const { messages, system } = toWire(request)
  return {
    model,
    max_tokens: request.settings?.maxOutputTokens ?? maxTokens,
    ...(system.length === 0 ? {} : { system }),
    messages,
    ...(request.tools.length === 0 ? {} : {
      tools: request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: wireParameters(tool.parameters) })),
      tool_choice: toolChoice(request.toolChoice, request.settings?.parallelToolCalls)
    }),
    ...defined({ temperature: request.settings?.temperature, top_p: request.settings?.topP, stop_sequences: request.settings?.stop }),
    ...(stream ? { stream: true } : {})
  }
}

/** Anthropic's temperature is from 0 to 1 (ours goes to 2): a higher one is refused before it is sent. */
const refuse = (request: ChatModel.ChatRequest): ChatModel.ModelError | undefined => {
  const temperature = request.settings?.temperature
  return temperature !== undefined && temperature > 1
    ? new ChatModel.ModelError({
      reason: "invalid-request",
      message: `Anthropic takes a temperature from 0 to 1; settings.temperature is ${temperature}.`
    })
    : undefined
}

const finishReason = (reason: unknown): ChatModel.FinishReason => {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "tool_use":
      return "tool-calls"
    case "refusal":
      return "refusal"
    case null:
    case undefined:
      return "unknown"
    default:
      return "other"
  }
}

/**
 * A fold of one answer. Usage: the input counts cache reads and writes (Anthropic reports them
 * apart from `input_tokens`); it sends no total (`usageOf`).
 */
const fold = (provider: string) =>
  new StreamFold({
    provider,
    last: "message_stop",
    usage: (counts) =>
      usageOf(count(counts.input_tokens) + count(counts.cache_creation_input_tokens) + count(counts.cache_read_input_tokens), counts.output_tokens)
  })

/** A `stop_reason`, when the server sent one: the neutral reason, and the server's kept for telemetry. */
const finishWith = (answer: StreamFold, reason: unknown) => {
  if (reason !== null && reason !== undefined) answer.finish(finishReason(reason), typeof reason === "string" ? reason : undefined)
}

/**
 * A `tool_use` block: its `input` as the server sent it (passed on as the call's arguments
 * untouched, so that the loop's limits judge it, however deep), until `input_json_delta`s
 * bring its JSON text.
 */
const callOf = (block: Json): Call => ({ id: text(block.id), name: text(block.name), args: undefined, input: block.input ?? {} })

const decode = (body: unknown, provider: string): Either.Either<ChatModel.ChatResponse, ChatModel.ModelError> => {
  if (!isObject(body) || !Array.isArray(body.content)) {
    return Either.left(invalid(`${provider} sent a body that is not a Messages API message: ${snippet(body, 200)}`))
  }
  const answer = fold(provider)
  for (const block of body.content.filter(isObject)) {
    if (block.type === "text") answer.addText(text(block.text))
    if (block.type === "tool_use") answer.addCall(callOf(block))
  }
  answer.addUsage(body.usage)
  finishWith(answer, body.stop_reason)
  answer.end()
  return answer.response()
}

/**
 * Reads a streamed message into a `StreamFold`: text from `text_delta`s, each `tool_use`
 * block's input from its `input_json_delta`s (or its start's `input` when none came), the
 * stop reason and usage from `message_start`/`message_delta` (the latest count wins).
 * `message_stop` ends it; a stream that ends with neither it nor a stop reason was cut
 * (`invalid-response`).
 */
const reader = (provider: string): StreamReader => {
  const answer = fold(provider)
  const blocks = new Map<number, Call>()

  const add = (event: Sse.Event): Either.Either<string, ChatModel.ModelError> => Either.flatMap(parseEvent(event, provider), (json) => read(event, json))

  const read = (event: Sse.Event, json: unknown): Either.Either<string, ChatModel.ModelError> => {
    // the event's name is the server's word: an `event: error` is an error, whatever its data says its type is
    if (event.event === "error") return Either.left(errorFromPayload({ provider, payload: json, where: "mid-stream" }))
    if (!isObject(json)) return Either.right("")
    const index = typeof json.index === "number" ? json.index : -1
    const delta = isObject(json.delta) ? json.delta : {}
    switch (text(json.type) || event.event) {
      case "error":
        return Either.left(errorFromPayload({ provider, payload: json, where: "mid-stream" }))
      case "message_start":
        answer.addUsage(isObject(json.message) ? json.message.usage : undefined)
        return Either.right("")
      case "content_block_start": {
        const block = isObject(json.content_block) ? json.content_block : {}
        if (block.type === "tool_use") blocks.set(index, answer.addCall(callOf(block)))
        return Either.right(block.type === "text" ? answer.addText(text(block.text)) : "")
      }
      case "content_block_delta": {
        if (delta.type === "text_delta") return Either.right(answer.addText(text(delta.text)))
        const call = blocks.get(index)
        if (delta.type === "input_json_delta" && call !== undefined) call.args = (call.args ?? "") + text(delta.partial_json)
        return Either.right("")
      }
      case "message_delta":
        finishWith(answer, delta.stop_reason)
        answer.addUsage(json.usage)
        return Either.right("")
      case "message_stop":
        answer.end()
        return Either.right("")
      default:
        return Either.right("")
    }
  }

  return { add, finished: () => answer.finished, response: () => answer.response() }
}

/** The Messages wire format, asking `model` for at most `maxTokens` output tokens unless a request's settings say otherwise. */
export const wire = (model: string, maxTokens: number): WireFormat => ({ body: requestBody(model, maxTokens), decode, reader, refuse })
