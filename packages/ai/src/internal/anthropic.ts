/**
 * The Anthropic Messages wire format (`POST {baseUrl}/messages`): neutral request →
 * request body; message and stream events → neutral response. Files are `image` and
 * `document` blocks (in `tool_result` content too); `image` and `document` blocks in the
 * model's answer are its files, described in text when sent back (an assistant turn takes no
 * files); thinking blocks are kept and sent back first in their assistant turn. Unknown content blocks and events are skipped (Anthropic
 * adds new ones); `error` events fail with the server's error. No I/O here.
 */
import { ChatModel, Message, Part } from "@agentfx/core"
import { Result } from "effect"
import { answerFile, answerFilesText, imageOfUrl, leftOut, ownReasoning, type Place, type Refusal } from "./content.js"
import { errorFromPayload } from "./httpError.js"
import { defined } from "./settings.js"
import type * as Sse from "./sse.js"
import { type Call, StreamFold, usageOf } from "./streamFold.js"
import { wireSchema } from "./toolSchema.js"
import { count, invalid, isObject, type JsonObject, parseEvent, snippet, text } from "./wireJson.js"
import type { StreamReader, WireFormat } from "./wireModel.js"

type Json = JsonObject

interface WireMessage {
  readonly role: "user" | "assistant"
  readonly content: Array<object>
}

/** The image types Anthropic reads inline. */
const inlineImages = ["image/jpeg", "image/png", "image/gif", "image/webp"]

/** Why the Messages API cannot take a file: it reads images, PDF and plain text (plain text inline only), in user turns only. */
const refuses: Refusal = (file, place) => {
  if (place === "answer") return "Anthropic takes no files in an assistant turn"
  const { mediaType, source } = file
  if (mediaType.startsWith("image/")) {
    return source._tag === "Url" || inlineImages.includes(mediaType) ? undefined : "Anthropic reads JPEG, PNG, GIF and WebP images inline"
  }
  if (mediaType === "application/pdf") return undefined
  if (mediaType === "text/plain") return source._tag === "Base64" ? undefined : "Anthropic reads plain text documents inline only"
  return "Anthropic reads images, PDF and plain text"
}

/** A file as a content block (`image` or `document`), or the text that stands for it. */
const fileBlock = (file: Part.FilePart, place: Place): object => {
  const why = refuses(file, place)
  if (why !== undefined) return { type: "text", text: leftOut(file, why) }
  const { mediaType, source } = file
  if (mediaType.startsWith("image/")) {
    return { type: "image", source: source._tag === "Url" ? { type: "url", url: source.url } : { type: "base64", media_type: mediaType, data: source.data } }
  }
  const title = file.name === undefined ? {} : { title: file.name }
  if (source._tag === "Url") return { type: "document", source: { type: "url", url: source.url }, ...title }
  return mediaType === "text/plain"
    ? { type: "document", source: { type: "text", media_type: "text/plain", data: Buffer.from(source.data, "base64").toString("utf8") }, ...title }
    : { type: "document", source: { type: "base64", media_type: mediaType, data: source.data }, ...title }
}

/** A tool result's content: its JSON, with its files after it as blocks when it has some. */
const resultContent = (message: Message.ToolResultMessage): string | Array<object> =>
  message.files === undefined
    ? JSON.stringify(message.content)
    : [{ type: "text", text: JSON.stringify(message.content) }, ...message.files.map((file) => fileBlock(file, "tool-result"))]

/**
 * Consecutive user turns and tool results share one user message, as Anthropic requires of
 * tool results. An assistant turn begins with the thinking blocks this API made (`owner`'s),
 * as Anthropic requires of a turn that called tools.
 */
const toWire = (request: ChatModel.ChatRequest, owner: string) => {
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
        append("user", Message.userParts(message).map((part) => part._tag === "Text" ? { type: "text", text: part.text } : fileBlock(part, "input")))
        break
      case "Assistant":
        append("assistant", [
          ...ownReasoning(message, owner).map((part) => part.data as object),
          ...(message.text.length > 0 ? [{ type: "text", text: message.text }] : []),
          ...answerFilesText(message, refuses).map((text) => ({ type: "text", text })),
          ...message.toolCalls.map((call) => ({ type: "tool_use", id: call.id, name: call.name, input: call.args }))
        ])
        break
      case "ToolResult":
        append("user", [{ type: "tool_result", tool_use_id: message.callId, content: resultContent(message), is_error: message.isError }])
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

/** Extended thinking: how many tokens the model may think before it answers (Anthropic's `budget_tokens`). */
export interface Thinking {
  readonly budgetTokens: number
}

/** `max_tokens` is required by the API: the request's `maxOutputTokens`, else `maxTokens`. */
const maxTokensOf = (request: ChatModel.ChatRequest, maxTokens: number) => request.settings?.maxOutputTokens ?? maxTokens

const requestBody = (model: string, maxTokens: number, owner: string, thinking: Thinking | undefined) => (request: ChatModel.ChatRequest, stream: boolean) => {
  const { messages, system } = toWire(request, owner)
  return {
    model,
    max_tokens: maxTokensOf(request, maxTokens),
    ...(thinking === undefined ? {} : { thinking: { type: "enabled", budget_tokens: thinking.budgetTokens } }),
    ...(system.length === 0 ? {} : { system }),
    messages,
    ...(request.tools.length === 0 ? {} : {
      tools: request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: wireSchema(tool.parameters) })),
      tool_choice: toolChoice(request.toolChoice, request.settings?.parallelToolCalls)
    }),
    ...defined({ temperature: request.settings?.temperature, top_p: request.settings?.topP, stop_sequences: request.settings?.stop }),
    ...(stream ? { stream: true } : {})
  }
}

const invalidRequest = (message: string) => new ChatModel.ModelError({ reason: "invalid-request", message })

/**
 * What Anthropic would refuse, refused before it is sent: a temperature above 1 (ours goes to 2);
 * with thinking, a temperature other than 1, a forced tool choice, or a `max_tokens` not above
 * the thinking budget.
 */
const refuse = (maxTokens: number, thinking: Thinking | undefined) => (request: ChatModel.ChatRequest): ChatModel.ModelError | undefined => {
  const temperature = request.settings?.temperature
  if (temperature !== undefined && temperature > 1) {
    return invalidRequest(`Anthropic takes a temperature from 0 to 1; settings.temperature is ${temperature}.`)
  }
  if (thinking === undefined) return undefined
  if (temperature !== undefined && temperature !== 1) {
    return invalidRequest(`Anthropic takes no temperature but 1 with extended thinking; settings.temperature is ${temperature}.`)
  }
  if (request.tools.length > 0 && request.toolChoice !== "auto" && request.toolChoice !== "none") {
    return invalidRequest(
      `Anthropic cannot force a tool call with extended thinking; the tool choice is ${JSON.stringify(request.toolChoice)} (an agent with an output schema and no other tools forces its answer tool).`
    )
  }
  const max = maxTokensOf(request, maxTokens)
  return max > thinking.budgetTokens
    ? undefined
    : invalidRequest(`Anthropic needs max_tokens above the thinking budget: max_tokens is ${max}, thinking.budgetTokens ${thinking.budgetTokens}.`)
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

/** A thinking block (its thinking text and signature) or a redacted one (its encrypted `data`): sent back as it came. */
const isThinking = (block: Json) => block.type === "thinking" || block.type === "redacted_thinking"

const reasoningOf = (owner: string, block: Json): Part.ReasoningPart => ({
  _tag: "Reasoning",
  provider: owner,
  text: text(block.thinking),
  data: block as Part.ReasoningPart["data"]
})

/** A block that holds a file: an `image` or a `document`. */
const isFileBlock = (block: Json) => block.type === "image" || block.type === "document"

/**
 * The file of an `image` or `document` block of the model's answer: by its `source` — `base64`
 * (its `media_type`), `url`, or a plain-text document's `text` — named by a document's `title`. A
 * source of another kind (a Files API `file_id`) cannot be kept: an `invalid-response` naming it.
 */
const fileOfBlock = (provider: string, block: Json): Result.Result<Part.FilePart, ChatModel.ModelError> => {
  const source = isObject(block.source) ? block.source : {}
  const name = typeof block.title === "string" ? { name: block.title } : {}
  const image = block.type === "image"
  switch (source.type) {
    case "base64":
      return answerFile(provider, {
        ...(image ? Part.image({ data: text(source.data), ...(typeof source.media_type === "string" ? { mediaType: source.media_type } : {}) })
          : Part.file({ mediaType: text(source.media_type) || "application/octet-stream", data: text(source.data) })),
        ...name
      })
    case "url":
      return answerFile(provider, { ...(image ? imageOfUrl(text(source.url)) : Part.file({ mediaType: "application/octet-stream", url: text(source.url) })), ...name })
    case "text":
      return answerFile(provider, { ...Part.file({ mediaType: text(source.media_type) || "text/plain", data: Buffer.from(text(source.data), "utf8") }), ...name })
    default:
      return Result.fail(invalid(`${provider} answered with a ${String(block.type)} block whose source cannot be kept as a file: ${snippet(source, 200)}`))
  }
}

const decode = (owner: string) => (body: unknown, provider: string): Result.Result<ChatModel.ChatResponse, ChatModel.ModelError> => {
  if (!isObject(body) || !Array.isArray(body.content)) {
    return Result.fail(invalid(`${provider} sent a body that is not a Messages API message: ${snippet(body, 200)}`))
  }
  const answer = fold(provider)
  for (const block of body.content.filter(isObject)) {
    if (block.type === "text") answer.addText(text(block.text))
    if (block.type === "tool_use") answer.addCall(callOf(block))
    if (isThinking(block)) answer.addReasoning(reasoningOf(owner, block))
    if (isFileBlock(block)) {
      const file = fileOfBlock(provider, block)
      if (Result.isFailure(file)) return Result.fail(file.failure)
      answer.addFile(file.success)
    }
  }
  answer.addUsage(body.usage)
  finishWith(answer, body.stop_reason)
  answer.end()
  return answer.response()
}

/**
 * Reads a streamed message into a `StreamFold`: text from `text_delta`s, each `tool_use`
 * block's input from its `input_json_delta`s (or its start's `input` when none came), the
 * stop reason and usage from `message_start`/`message_delta` (the latest count wins), each
 * thinking block from its start, `thinking_delta`s and `signature_delta`, kept at its
 * `content_block_stop` (a redacted one as its start gave it), each `image` or `document` block
 * from its start (a file of the answer). `message_stop` ends it; a stream that ends with neither it nor a stop reason was cut
 * (`invalid-response`).
 */
const reader = (owner: string) => (provider: string): StreamReader => {
  const answer = fold(provider)
  const blocks = new Map<number, Call>()
  /** Thinking blocks as they stream: the start's block, its `thinking_delta`s and `signature_delta` added. */
  const thinking = new Map<number, { [key: string]: unknown }>()

  const add = (event: Sse.Event): Result.Result<string, ChatModel.ModelError> => Result.flatMap(parseEvent(event, provider), (json) => read(event, json))

  const read = (event: Sse.Event, json: unknown): Result.Result<string, ChatModel.ModelError> => {
    // the event's name is the server's word: an `event: error` is an error, whatever its data says its type is
    if (event.event === "error") return Result.fail(errorFromPayload({ provider, payload: json, where: "mid-stream" }))
    if (!isObject(json)) return Result.succeed("")
    const index = typeof json.index === "number" ? json.index : -1
    const delta = isObject(json.delta) ? json.delta : {}
    switch (text(json.type) || event.event) {
      case "error":
        return Result.fail(errorFromPayload({ provider, payload: json, where: "mid-stream" }))
      case "message_start":
        answer.addUsage(isObject(json.message) ? json.message.usage : undefined)
        return Result.succeed("")
      case "content_block_start": {
        const block = isObject(json.content_block) ? json.content_block : {}
        if (block.type === "tool_use") blocks.set(index, answer.addCall(callOf(block)))
        if (isThinking(block)) thinking.set(index, { ...block })
        if (isFileBlock(block)) {
          const file = fileOfBlock(provider, block)
          if (Result.isFailure(file)) return Result.fail(file.failure)
          answer.addFile(file.success)
        }
        return Result.succeed(block.type === "text" ? answer.addText(text(block.text)) : "")
      }
      case "content_block_delta": {
        if (delta.type === "text_delta") return Result.succeed(answer.addText(text(delta.text)))
        const block = thinking.get(index)
        if (delta.type === "thinking_delta" && block !== undefined) block.thinking = text(block.thinking) + text(delta.thinking)
        if (delta.type === "signature_delta" && block !== undefined) block.signature = text(delta.signature)
        const call = blocks.get(index)
        if (delta.type === "input_json_delta" && call !== undefined) call.args = (call.args ?? "") + text(delta.partial_json)
        return Result.succeed("")
      }
      case "content_block_stop": {
        const block = thinking.get(index)
        if (block !== undefined) answer.addReasoning(reasoningOf(owner, block))
        return Result.succeed("")
      }
      case "message_delta":
        finishWith(answer, delta.stop_reason)
        answer.addUsage(json.usage)
        return Result.succeed("")
      case "message_stop":
        answer.end()
        return Result.succeed("")
      default:
        return Result.succeed("")
    }
  }

  return { add, finished: () => answer.finished, response: () => answer.response() }
}

/**
 * The Messages wire format, asking `model` for at most `maxTokens` output tokens unless a
 * request's settings say otherwise, with extended `thinking` when given; `owner` marks the
 * reasoning it keeps, and only reasoning with that mark is sent back.
 */
export const wire = (model: string, maxTokens: number, owner: string, thinking: Thinking | undefined): WireFormat => ({
  body: requestBody(model, maxTokens, owner, thinking),
  decode: decode(owner),
  reader: reader(owner),
  refuse: refuse(maxTokens, thinking),
  refusesFile: refuses
})
