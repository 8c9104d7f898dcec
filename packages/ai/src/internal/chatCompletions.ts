/**
 * The OpenAI Chat Completions wire format: neutral request → request body, response body
 * and SSE chunks → neutral response. No I/O here.
 */
import type { ChatModel, Json, Message, ToolCall } from "@agentfx/core"
import { ChatModel as Model } from "@agentfx/core"
import { Effect, ParseResult, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { wireParameters } from "./toolSchema.js"

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

/** A non-streamed answer (`object: "chat.completion"`); unknown keys are ignored. */
export const Completion = Schema.Struct({
  choices: Schema.Array(Schema.Struct({
    message: Schema.Struct({ content: nullish(Schema.String), tool_calls: nullish(Schema.Array(ToolCallWire)) }),
    finish_reason: nullish(Schema.String)
  })),
  usage: nullish(UsageWire)
})

/** One streamed chunk (`object: "chat.completion.chunk"`), or a server's in-stream error. */
export const Chunk = Schema.Struct({
  choices: nullish(Schema.Array(Schema.Struct({
    delta: nullish(Schema.Struct({
      content: nullish(Schema.String),
      tool_calls: nullish(Schema.Array(Schema.Struct({
        index: Schema.Number,
        id: nullish(Schema.String),
        function: nullish(Schema.Struct({ name: nullish(Schema.String), arguments: nullish(Schema.String) }))
      })))
    })),
    finish_reason: nullish(Schema.String)
  }))),
  usage: nullish(UsageWire),
  error: nullish(Schema.Unknown)
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

/** The request body; `tools` and `tool_choice` are left out when there are no tools. */
export const requestBody = (model: string, request: ChatModel.ChatRequest, stream: boolean) => ({
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
    tool_choice: wireToolChoice(request.toolChoice)
  }),
  ...(stream ? { stream: true, stream_options: { include_usage: true } } : {})
})

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

export const finishReason = (reason: string | null | undefined): ChatModel.FinishReason => {
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

const usage = (wire: typeof UsageWire.Type | null | undefined): ChatModel.Usage => {
  const inputTokens = wire?.prompt_tokens ?? 0
  const outputTokens = wire?.completion_tokens ?? 0
  return { inputTokens, outputTokens, totalTokens: wire?.total_tokens ?? inputTokens + outputTokens }
}

const invalid = (message: string) => new Model.ModelError({ reason: "InvalidResponse", message })

/** Decodes a JSON value with a wire schema; a mismatch is an `InvalidResponse`. */
export const decode = <A, I>(schema: Schema.Schema<A, I>, what: "response" | "chunk") => (body: unknown) =>
  Schema.decodeUnknown(schema)(body).pipe(
    Effect.mapError((error) =>
      invalid(`the server's ${what} is not a Chat Completions ${what}: ${ParseResult.TreeFormatter.formatErrorSync(error)}`)
    )
  )

/** The neutral response of a non-streamed answer. */
export const fromCompletion = (completion: typeof Completion.Type): Effect.Effect<ChatModel.ChatResponse, ChatModel.ModelError> => {
  const choice = completion.choices[0]
  if (choice === undefined) return Effect.fail(invalid("the Chat Completions response has no choices"))
  return Effect.succeed({
    text: choice.message.content ?? "",
    toolCalls: (choice.message.tool_calls ?? []).map((call) => toolCall(call.id, call.function.name, call.function.arguments)),
    finishReason: finishReason(choice.finish_reason),
    usage: usage(completion.usage)
  })
}

/** Accumulates streamed chunks: text as it comes, tool-call pieces by `index`, usage from the last chunk. */
export class StreamAccumulator {
  private text = ""
  private readonly calls = new Map<number, { id: string | undefined; name: string; args: string }>()
  private finish: string | null | undefined = undefined
  private wireUsage: typeof UsageWire.Type | null | undefined = undefined
  private chunks = 0

  /** Folds one chunk in; returns the text it added. */
  add(chunk: typeof Chunk.Type): string {
    this.chunks += 1
    if (chunk.usage !== undefined && chunk.usage !== null) this.wireUsage = chunk.usage
    let added = ""
    for (const choice of chunk.choices ?? []) {
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) this.finish = choice.finish_reason
      const delta = choice.delta
      if (delta === undefined || delta === null) continue
      if (typeof delta.content === "string") added += delta.content
      for (const piece of delta.tool_calls ?? []) {
        const call = this.calls.get(piece.index) ?? { id: undefined, name: "", args: "" }
        if (call.id === undefined && typeof piece.id === "string" && piece.id.length > 0) call.id = piece.id
        const name = piece.function?.name
        if (call.name.length === 0 && typeof name === "string") call.name = name
        call.args += piece.function?.arguments ?? ""
        this.calls.set(piece.index, call)
      }
    }
    this.text += added
    return added
  }

  /** The whole response, once the stream ended. */
  response(): Effect.Effect<ChatModel.ChatResponse, ChatModel.ModelError> {
    if (this.chunks === 0) return Effect.fail(invalid("the Chat Completions stream ended without a chunk"))
    const calls = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call)
    const nameless = calls.find((call) => call.name.length === 0)
    if (nameless !== undefined) return Effect.fail(invalid("the Chat Completions stream sent a tool call without a name"))
    return Effect.succeed({
      text: this.text,
      toolCalls: calls.map((call) => toolCall(call.id, call.name, call.args)),
      finishReason: finishReason(this.finish),
      usage: usage(this.wireUsage)
    })
  }
}
