/**
 * The OpenAI Chat Completions wire format: neutral request → request body, response body
 * and SSE chunks → neutral response. A person's files are `image_url` and `file` content
 * parts; a tool's files, which a `tool` message cannot hold, follow the results in a user
 * message. Images in the model's answer (an `images` list, as OpenRouter sends them; `image_url`
 * chunks of an array content) are its files, described in text when sent back (an assistant
 * message takes text only). The server's reasoning (`reasoning_content`, `reasoning`) is kept
 * and sent back to it. No I/O here.
 */
import { type ChatModel, Message, Part } from "@agentfx/core"
import { Result, Schema } from "effect"
import { answerFile, answerFilesText, imageOfUrl, leftOut, nameOf, ownReasoning, type Refusal, toolFilesAsUserMessages } from "./content.js"
import { randomUUID } from "node:crypto"
import { errorFromPayload, isErrorPayload } from "./httpError.js"
import { defined } from "./settings.js"
import type * as Sse from "./sse.js"
import { withStrict } from "./strictSchema.js"
import { StreamFold, usageOf } from "./streamFold.js"
import { ToolCallDeltas } from "./toolCallDeltas.js"
import { wireSchema } from "./toolSchema.js"
import { invalid, isObject, parseEvent, snippet } from "./wireJson.js"
import type { StreamReader, WireFormat } from "./wireModel.js"

const nullish = <S extends Schema.Top>(schema: S) => Schema.optional(Schema.NullOr(schema))

const UsageWire = Schema.Struct({
  prompt_tokens: nullish(Schema.Number),
  completion_tokens: nullish(Schema.Number),
  total_tokens: nullish(Schema.Number)
})

const ToolCallWire = Schema.Struct({
  id: nullish(Schema.String),
  function: Schema.Struct({ name: Schema.String, arguments: nullish(Schema.String) })
})

/**
 * A message's content: a string, or an array of chunks — Mistral's reasoning models send
 * `[{ type: "thinking", thinking: […] }, { type: "text", text }]` — of which the `text` ones
 * are the answer (the reasoning is not), and the `image_url` ones images of the answer.
 */
const ContentWire = Schema.Union([
  Schema.String,
  Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String), image_url: Schema.optional(Schema.Unknown) }))
])

/** The answer's text in a content, whichever way it came. */
const contentText = (content: typeof ContentWire.Type | null | undefined): string =>
  content === null || content === undefined
    ? ""
    : typeof content === "string"
    ? content
    : content.map((chunk) => (chunk.type === "text" ? chunk.text ?? "" : "")).join("")

/**
 * The model's reasoning beside its answer, as compatible servers send it: `reasoning_content`
 * (DeepSeek, xAI, vLLM, llama.cpp) or `reasoning` (OpenRouter, newer vLLM). Read only when it is
 * text: a server's other shapes of these fields are not an error. Beside them, `images`: the
 * images the model generated, as OpenRouter sends them (`[{ type: "image_url", image_url: { url } }]`).
 */
const ReasoningWire = {
  reasoning_content: Schema.optional(Schema.Unknown),
  reasoning: Schema.optional(Schema.Unknown),
  images: Schema.optional(Schema.Unknown)
}

/** An image's URL as servers write it: `{ url }`, or the URL itself (Mistral's `image_url` chunks). */
const imageUrlOf = (value: unknown): string | undefined =>
  typeof value === "string" ? value : isObject(value) && typeof value.url === "string" ? value.url : undefined

/**
 * The images of an answer (or of one streamed delta): its `images` list, then the `image_url`
 * chunks of an array content, each a file (`imageOfUrl`: a `data:` URL inline, another URL as
 * it is); an entry with no URL, or a URL that is no file, is an `invalid-response`.
 */
const imagesOf = (
  provider: string,
  message: { readonly images?: unknown; readonly content?: typeof ContentWire.Type | null | undefined }
): Result.Result<ReadonlyArray<Part.FilePart>, ChatModel.ModelError> => {
  const entries = [
    ...(Array.isArray(message.images) ? message.images : message.images === undefined || message.images === null ? [] : [message.images]),
    ...(Array.isArray(message.content) ? message.content.filter((chunk) => chunk.type === "image_url") : [])
  ]
  const files: Array<Part.FilePart> = []
  for (const entry of entries) {
    const url = isObject(entry) ? imageUrlOf(entry.image_url) : undefined
    if (url === undefined) return Result.fail(invalid(`${provider} answered with an image that has no URL: ${snippet(entry, 200)}`))
    const file = answerFile(provider, imageOfUrl(url))
    if (Result.isFailure(file)) return Result.fail(file.failure)
    files.push(file.success)
  }
  return Result.succeed(files)
}

/** A non-streamed answer (`object: "chat.completion"`); unknown keys are ignored. */
const Completion = Schema.Struct({
  choices: Schema.Array(Schema.Struct({
    message: Schema.Struct({
      ...ReasoningWire,
      content: nullish(ContentWire),
      refusal: nullish(Schema.String),
      tool_calls: nullish(Schema.Array(ToolCallWire))
    }),
    finish_reason: nullish(Schema.String)
  })),
  usage: nullish(UsageWire)
})

/** One streamed chunk (`object: "chat.completion.chunk"`); a tool-call piece's `index` may be missing. */
const Chunk = Schema.Struct({
  choices: nullish(Schema.Array(Schema.Struct({
    delta: nullish(Schema.Struct({
      ...ReasoningWire,
      content: nullish(ContentWire),
      refusal: nullish(Schema.String),
      tool_calls: nullish(Schema.Array(Schema.Struct({
        index: nullish(Schema.Number),
        id: nullish(Schema.String),
        function: nullish(Schema.Struct({ name: nullish(Schema.String), arguments: nullish(Schema.String) }))
      })))
    })),
    finish_reason: nullish(Schema.String)
  }))),
  usage: nullish(UsageWire)
})

type WireContent = string | ReadonlyArray<object>

type WireMessage =
  | { readonly role: "system"; readonly content: string }
  | { readonly role: "user"; readonly content: WireContent }
  | {
    readonly role: "assistant"
    readonly content: string | null
    readonly tool_calls?: ReadonlyArray<{
      readonly id: string
      readonly type: "function"
      readonly function: { readonly name: string; readonly arguments: string }
    }>
    readonly [reasoningField: string]: unknown
  }
  | { readonly role: "tool"; readonly tool_call_id: string; readonly content: string }

/** Why Chat Completions cannot take a file: other files than images go inline only (its `file` part has no URL); an assistant message takes text only. */
const refuses: Refusal = (file, place) =>
  place === "answer"
    ? "Chat Completions takes text only in an assistant message"
    : file.mediaType.startsWith("image/") || file.source._tag === "Base64"
    ? undefined
    : "Chat Completions takes files other than images inline only"

/** A file as a content part: `image_url`, or `file` with its data inline; or the text that stands for it. */
const filePart = (file: Part.FilePart): object => {
  const why = refuses(file, "input")
  if (why !== undefined) return { type: "text", text: leftOut(file, why) }
  return file.mediaType.startsWith("image/")
    ? { type: "image_url", image_url: { url: Part.url(file) } }
    : { type: "file", file: { filename: nameOf(file), file_data: Part.url(file) } }
}

/** What a person said: a string, or content parts when it has files. */
const userContent = (message: Message.UserMessage): WireContent =>
  message.parts === undefined
    ? message.text
    : message.parts.map((part) => part._tag === "Text" ? { type: "text", text: part.text } : filePart(part))

/** The reasoning this server made (`owner`'s), back in the fields it came in (`reasoning_content`, `reasoning`). */
const reasoningFields = (message: Message.AssistantMessage, owner: string): { readonly [field: string]: string } => {
  const fields: { [field: string]: string } = {}
  for (const part of ownReasoning(message, owner)) {
    const { field, text } = part.data as { readonly field: string; readonly text: string }
    fields[field] = (fields[field] ?? "") + text
  }
  return fields
}

const wireMessage = (owner: string) => (message: ChatModel.ModelMessage): WireMessage => {
  switch (message._tag) {
    case "System":
      return { role: "system", content: message.text }
    case "User":
      return { role: "user", content: userContent(message) }
    case "Assistant": {
      // the files the model answered with, described after its text: an assistant message takes text only
      const content = [...(message.text.length > 0 ? [message.text] : []), ...answerFilesText(message, refuses)].join("\n\n")
      return message.toolCalls.length === 0
        ? { role: "assistant", content, ...reasoningFields(message, owner) }
        : {
          role: "assistant",
          content: content.length > 0 ? content : null,
          ...reasoningFields(message, owner),
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: JSON.stringify(call.args) }
          }))
        }
    }
    case "ToolResult":
      return {
        role: "tool",
        tool_call_id: message.callId,
        content: typeof message.content === "string" ? message.content : JSON.stringify(message.content)
      }
  }
}

const wireToolChoice = (choice: ChatModel.ToolChoice) =>
  typeof choice === "string" ? choice : { type: "function", function: { name: choice.tool } }

/** Which field carries the most output tokens: OpenAI's current one, or the one compatible servers know. */
export type MaxTokensField = "max_tokens" | "max_completion_tokens"

/** The answer's JSON Schema as `response_format`, strict when strict mode takes the schema. */
const responseFormat = (output: ChatModel.OutputFormat) => ({
  type: "json_schema",
  json_schema: { name: output.name, ...withStrict(wireSchema(output.schema), true) }
})

/** The request body; `tools`, `tool_choice` and `parallel_tool_calls` are left out when there are no tools. */
const requestBody = (model: string, maxTokensField: MaxTokensField, owner: string, request: ChatModel.ChatRequest, stream: boolean) => {
  const settings = request.settings
  return {
    model,
    messages: [
      ...(request.system === undefined ? [] : [{ role: "system", content: request.system } as const]),
      // a tool message takes text only: the results' files follow them in a user message
      ...toolFilesAsUserMessages(request.messages).map(wireMessage(owner))
    ],
    ...(request.tools.length === 0 ? {} : {
      tools: request.tools.map((tool) => ({
        type: "function",
        function: { name: tool.name, description: tool.description, parameters: wireSchema(tool.parameters) }
      })),
      tool_choice: wireToolChoice(request.toolChoice),
      ...defined({ parallel_tool_calls: settings?.parallelToolCalls })
    }),
    ...defined({ temperature: settings?.temperature, top_p: settings?.topP, [maxTokensField]: settings?.maxOutputTokens, stop: settings?.stop }),
    ...(request.output === undefined ? {} : { response_format: responseFormat(request.output) }),
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {})
  }
}

/** A call as the fold takes it; a call without an id gets one (`call_<uuid>`). */
const toolCall = (id: string | null | undefined, name: string, args: string | null | undefined) => ({
  id: id !== null && id !== undefined && id.length > 0 ? id : `call_${randomUUID()}`,
  name,
  args: args ?? undefined,
  input: {}
})

const finishReason = (reason: string | null | undefined): ChatModel.FinishReason => {
  switch (reason) {
    case "stop":
      return "stop"
    case "length":
      return "length"
    case "tool_calls":
    case "function_call":
      return "tool-calls"
    case "content_filter":
      return "content-filter"
    case null:
    case undefined:
      return "unknown"
    default:
      return "other"
  }
}

/** A fold of one answer: usage from `prompt_tokens`, `completion_tokens` and `total_tokens` (`usageOf`). */
const fold = (provider: string) =>
  new StreamFold({
    provider,
    last: "finish_reason, no [DONE]",
    usage: (counts) => usageOf(counts.prompt_tokens, counts.completion_tokens, counts.total_tokens)
  })

/** A `finish_reason`, when the server sent one: the neutral reason, and the server's kept for telemetry. */
const finishWith = (answer: StreamFold, reason: string | null | undefined) => {
  if (reason !== null && reason !== undefined) answer.finish(finishReason(reason), reason)
}

/**
 * The reasoning of one answer, as it comes (whole, or in deltas), in each field it came in. A
 * server that sends both (vLLM) sends the same text twice: `reasoning_content` is kept, the
 * field DeepSeek requires back.
 */
class ReasoningText {
  private readonly texts = { reasoning_content: "", reasoning: "" }

  add(fields: { readonly reasoning_content?: unknown; readonly reasoning?: unknown }): void {
    if (typeof fields.reasoning_content === "string") this.texts.reasoning_content += fields.reasoning_content
    if (typeof fields.reasoning === "string") this.texts.reasoning += fields.reasoning
  }

  /** The reasoning as a part marked with `owner`, added to `answer`, when there was some. */
  addTo(answer: StreamFold, owner: string): void {
    const field = this.texts.reasoning_content.length > 0 ? "reasoning_content" : "reasoning"
    const text = this.texts[field]
    if (text.length > 0) answer.addReasoning({ _tag: "Reasoning", provider: owner, text, data: { field, text } })
  }
}

/** Decodes a JSON value with a wire schema; a mismatch is an `invalid-response`. */
const decodeWith = <S extends Schema.Decoder<unknown>>(schema: S, what: string, provider: string) => (body: unknown) =>
  Result.mapError(
    Schema.decodeUnknownResult(schema)(body),
    (error) => invalid(`${provider} sent ${what} that is not Chat Completions: ${error.message}`)
  )

/** The neutral response of a non-streamed answer. */
const decode = (owner: string) => (body: unknown, provider: string): Result.Result<ChatModel.ChatResponse, ChatModel.ModelError> =>
  Result.flatMap(decodeWith(Completion, "a response", provider)(body), (completion) => {
    const choice = completion.choices[0]
    if (choice === undefined) return Result.fail(invalid(`${provider} sent a response without choices`))
    const answer = fold(provider)
    answer.addText(contentText(choice.message.content))
    answer.addRefusal(choice.message.refusal ?? "")
    const reasoning = new ReasoningText()
    reasoning.add(choice.message)
    reasoning.addTo(answer, owner)
    const images = imagesOf(provider, choice.message)
    if (Result.isFailure(images)) return Result.fail(images.failure)
    for (const image of images.success) answer.addFile(image)
    for (const call of choice.message.tool_calls ?? []) answer.addCall(toolCall(call.id, call.function.name, call.function.arguments))
    answer.addUsage(completion.usage)
    finishWith(answer, choice.finish_reason)
    answer.end()
    return answer.response()
  })

/**
 * Reads a streamed answer into a `StreamFold`: text and refusal as they come, tool-call
 * pieces assembled by `ToolCallDeltas`, reasoning deltas joined, each image of a delta's `images`
 * (each comes whole) kept, usage counts from the chunks that have them, up to `[DONE]`. An event that
 * carries an error (`{ error }`, Google's `[{ error }]`, an `event: error` as Groq names it,
 * llama.cpp's bare `error:` field) fails the stream
 * with the server's error. A stream that ends with neither a `finish_reason` nor `[DONE]`
 * was cut: `invalid-response`.
 */
const reader = (owner: string) => (provider: string): StreamReader => {
  const decodeChunk = decodeWith(Chunk, "a stream event", provider)
  const answer = fold(provider)
  const reasoning = new ReasoningText()
  const calls = new ToolCallDeltas()
  let chunks = 0
  const add = (event: Sse.Event): Result.Result<string, ChatModel.ModelError> => {
    if (event.data.trim() === "[DONE]") {
      answer.end()
      return Result.succeed("")
    }
    return Result.flatMap(parseEvent(event, provider), (json) => read(event, json))
  }
  const read = (event: Sse.Event, json: unknown): Result.Result<string, ChatModel.ModelError> => {
    const carriesError = event.event === "error" || isErrorPayload(json) || (isObject(json) && json.error !== null && json.error !== undefined)
    if (carriesError) return Result.fail(errorFromPayload({ provider, payload: json, where: "mid-stream" }))
    return Result.flatMap(decodeChunk(json), (chunk) => {
      chunks += 1
      answer.addUsage(chunk.usage)
      let added = ""
      for (const choice of chunk.choices ?? []) {
        finishWith(answer, choice.finish_reason)
        const delta = choice.delta
        if (delta === undefined || delta === null) continue
        added += answer.addText(contentText(delta.content))
        added += answer.addRefusal(delta.refusal ?? "")
        reasoning.add(delta)
        const images = imagesOf(provider, delta)
        if (Result.isFailure(images)) return Result.fail(images.failure)
        for (const image of images.success) answer.addFile(image)
        for (const piece of delta.tool_calls ?? []) calls.add(piece)
      }
      return Result.succeed(added)
    })
  }
  /** The answer, once: its calls are handed to the fold when the events have ended. */
  const response = (): Result.Result<ChatModel.ChatResponse, ChatModel.ModelError> => {
    const assembled = calls.all()
    for (const call of assembled) answer.addCall(toolCall(call.id, call.name, call.args))
    reasoning.addTo(answer, owner)
    return Result.flatMap(answer.response(), (whole) =>
      chunks === 0
        ? Result.fail(invalid(`${provider}'s stream ended without a chunk`))
        : assembled.some((call) => call.name.length === 0)
        ? Result.fail(invalid(`${provider} streamed a tool call without a name`))
        : Result.succeed(whole))
  }
  return { add, finished: () => answer.finished, response }
}

/**
 * The Chat Completions wire format, asking for `model`, its length limit in `maxTokensField`;
 * the server's reasoning is kept marked with `owner`, and only `owner`'s is sent back.
 */
export const wire = (model: string, maxTokensField: MaxTokensField, owner: string): WireFormat => ({
  body: (request, stream) => requestBody(model, maxTokensField, owner, request, stream),
  decode: decode(owner),
  reader: reader(owner),
  refusesFile: refuses
})
