/**
 * The OpenAI Chat Completions wire format: neutral request → request body, response body
 * and SSE chunks → neutral response. No I/O here.
 */
import type { ChatModel, Json, Message, ToolCall } from "@agentfx/core"
import { Either, ParseResult, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { errorFromPayload, isErrorPayload } from "./httpError.js"
import { defined } from "./settings.js"
import type * as Sse from "./sse.js"
import { strictAllowed } from "./strictSchema.js"
import { ToolCallDeltas } from "./toolCallDeltas.js"
import { wireParameters } from "./toolSchema.js"
import { count, invalid, isObject, parseEvent } from "./wireJson.js"
import type { StreamReader, WireFormat } from "./wireModel.js"

const nullish = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))

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
 * are the answer (the reasoning is not).
 */
const ContentWire = Schema.Union(Schema.String, Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) })))

/** The answer's text in a content, whichever way it came. */
const contentText = (content: typeof ContentWire.Type | null | undefined): string =>
  content === null || content === undefined
    ? ""
    : typeof content === "string"
    ? content
    : content.map((chunk) => (chunk.type === "text" ? chunk.text ?? "" : "")).join("")

/** A non-streamed answer (`object: "chat.completion"`); unknown keys are ignored. */
const Completion = Schema.Struct({
  choices: Schema.Array(Schema.Struct({
    message: Schema.Struct({
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

type WireMessage =
  | { readonly role: "system" | "user"; readonly content: string }
  | {
    readonly role: "assistant"
    readonly content: string | null
    readonly tool_calls?: ReadonlyArray<{
      readonly id: string
      readonly type: "function"
      readonly function: { readonly name: string; readonly arguments: string }
    }>
  }
  | { readonly role: "tool"; readonly tool_call_id: string; readonly content: string }

const wireMessage = (message: Message.Message): WireMessage => {
  switch (message._tag) {
    case "System":
      return { role: "system", content: message.text }
    case "User":
      return { role: "user", content: message.text }
    case "Assistant":
      return message.toolCalls.length === 0
        ? { role: "assistant", content: message.text }
        : {
          role: "assistant",
          content: message.text.length > 0 ? message.text : null,
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: JSON.stringify(call.args) }
          }))
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
  json_schema: { name: output.name, schema: wireParameters(output.schema), strict: strictAllowed(output.schema) }
})

/** The request body; `tools`, `tool_choice` and `parallel_tool_calls` are left out when there are no tools. */
const requestBody = (model: string, maxTokensField: MaxTokensField, request: ChatModel.ChatRequest, stream: boolean) => {
  const settings = request.settings
  return {
    model,
    messages: [
      ...(request.system === undefined ? [] : [{ role: "system", content: request.system } as const]),
      ...request.messages.map(wireMessage)
    ],
    ...(request.tools.length === 0 ? {} : {
      tools: request.tools.map((tool) => ({
        type: "function",
        function: { name: tool.name, description: tool.description, parameters: wireParameters(tool.parameters) }
      })),
      tool_choice: wireToolChoice(request.toolChoice),
      ...defined({ parallel_tool_calls: settings?.parallelToolCalls })
    }),
    ...defined({ temperature: settings?.temperature, top_p: settings?.topP, [maxTokensField]: settings?.maxOutputTokens, stop: settings?.stop }),
    ...(request.output === undefined ? {} : { response_format: responseFormat(request.output) }),
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {})
  }
}

/**
 * The model's arguments as JSON. Missing or blank arguments are `{}`. Arguments that are
 * not valid JSON are passed on as the raw string: the tool's schema then refuses them and
 * the model is told (a `semantic` error result), instead of the run failing.
 */
export const parseArguments = (raw: string | null | undefined): Json.JsonValue => {
  if (raw === null || raw === undefined || raw.trim().length === 0) return {}
  try {
    return JSON.parse(raw) as Json.JsonValue
  } catch {
    return raw
  }
}

const toolCall = (id: string | null | undefined, name: string, args: string | null | undefined): ToolCall.ToolCall => ({
  id: id !== null && id !== undefined && id.length > 0 ? id : `call_${randomUUID()}`,
  name,
  args: parseArguments(args)
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

/** The usage rule of every adapter: counts the server did not send (or sent as no count: infinite, negative) are 0, the total is input + output. */
const usage = (wire: typeof UsageWire.Type | null | undefined): ChatModel.Usage => {
  const inputTokens = count(wire?.prompt_tokens)
  const outputTokens = count(wire?.completion_tokens)
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }
}

/** Decodes a JSON value with a wire schema; a mismatch is an `invalid-response`. */
const decodeWith = <A, I>(schema: Schema.Schema<A, I>, what: string, provider: string) => (body: unknown) =>
  Either.mapLeft(
    Schema.decodeUnknownEither(schema)(body),
    (error) => invalid(`${provider} sent ${what} that is not Chat Completions: ${ParseResult.TreeFormatter.formatErrorSync(error)}`)
  )

/** A refusal's text is the answer's text (after any other text); it makes the finish reason `refusal`. The server's `finish_reason` is kept for telemetry. */
const answer = (text: string, refused: boolean, reason: string | null | undefined) => ({
  text,
  finishReason: refused ? "refusal" as const : finishReason(reason),
  providerFinishReasons: reason === null || reason === undefined ? undefined : [reason]
})

/** The neutral response of a non-streamed answer. */
const decode = (body: unknown, provider: string): Either.Either<ChatModel.ChatResponse, ChatModel.ModelError> =>
  Either.flatMap(decodeWith(Completion, "a response", provider)(body), (completion) => {
    const choice = completion.choices[0]
    if (choice === undefined) return Either.left(invalid(`${provider} sent a response without choices`))
    return Either.right({
      ...answer(
        contentText(choice.message.content) + (choice.message.refusal ?? ""),
        (choice.message.refusal ?? "").length > 0,
        choice.finish_reason
      ),
      toolCalls: (choice.message.tool_calls ?? []).map((call) => toolCall(call.id, call.function.name, call.function.arguments)),
      usage: usage(completion.usage)
    })
  })

/**
 * Reads a streamed answer: text and refusal as they come, tool-call pieces assembled by
 * `ToolCallDeltas`, usage from the last chunk that has it, up to `[DONE]`. An event that
 * carries an error (`{ error }`, Google's `[{ error }]`, an `event: error` as Groq names it,
 * llama.cpp's bare `error:` field) fails the stream
 * with the server's error. A stream that ends with neither a `finish_reason` nor `[DONE]`
 * was cut: `invalid-response`.
 */
const reader = (provider: string): StreamReader => {
  const decodeChunk = decodeWith(Chunk, "a stream event", provider)
  const calls = new ToolCallDeltas()
  let text = ""
  let refused = false
  let finish: string | undefined = undefined
  let wireUsage: typeof UsageWire.Type | undefined = undefined
  let chunks = 0
  let done = false
  const add = (event: Sse.Event): Either.Either<string, ChatModel.ModelError> => {
    if (event.data.trim() === "[DONE]") {
      done = true
      return Either.right("")
    }
    return Either.flatMap(parseEvent(event, provider), (json) => read(event, json))
  }
  const read = (event: Sse.Event, json: unknown): Either.Either<string, ChatModel.ModelError> => {
    const carriesError = event.event === "error" || isErrorPayload(json) || (isObject(json) && json.error !== null && json.error !== undefined)
    if (carriesError) return Either.left(errorFromPayload({ provider, payload: json, where: "mid-stream" }))
    return Either.map(decodeChunk(json), (chunk) => {
      chunks += 1
      if (chunk.usage !== undefined && chunk.usage !== null) wireUsage = chunk.usage
      let added = ""
      for (const choice of chunk.choices ?? []) {
        if (choice.finish_reason !== undefined && choice.finish_reason !== null) finish = choice.finish_reason
        const delta = choice.delta
        if (delta === undefined || delta === null) continue
        added += contentText(delta.content)
        if (typeof delta.refusal === "string" && delta.refusal.length > 0) {
          refused = true
          added += delta.refusal
        }
        for (const piece of delta.tool_calls ?? []) calls.add(piece)
      }
      text += added
      return added
    })
  }
  const response = (): Either.Either<ChatModel.ChatResponse, ChatModel.ModelError> => {
    if (!done && finish === undefined) {
      return Either.left(invalid(`${provider}'s stream ended before the answer did (no finish_reason, no [DONE]): the connection was cut`))
    }
    if (chunks === 0) return Either.left(invalid(`${provider}'s stream ended without a chunk`))
    const nameless = calls.all().find((call) => call.name.length === 0)
    if (nameless !== undefined) return Either.left(invalid(`${provider} streamed a tool call without a name`))
    return Either.right({
      ...answer(text, refused, finish),
      toolCalls: calls.all().map((call) => toolCall(call.id, call.name, call.args)),
      usage: usage(wireUsage)
    })
  }
  return { add, finished: () => done, response }
}

/** The Chat Completions wire format, asking for `model`, its length limit in `maxTokensField`. */
export const wire = (model: string, maxTokensField: MaxTokensField): WireFormat => ({
  body: (request, stream) => requestBody(model, maxTokensField, request, stream),
  decode,
  reader
})
