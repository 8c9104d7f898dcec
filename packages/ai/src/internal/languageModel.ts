/**
 * Neutral requests as `@effect/ai` prompts and toolkits; `@effect/ai` answers and errors
 * as neutral responses and `ModelError`s.
 */
import type { Json, Part } from "@agentfx/core"
import { ChatModel, Message } from "@agentfx/core"
import type { AiError, Prompt, Response } from "effect/ai"
import { Tool as AiTool, Toolkit as AiToolkit } from "effect/ai"
import { Effect, Option, SchemaIssue, Schema } from "effect"
import { toolFilesAsUserMessages } from "./content.js"
import { errorFromPayload, errorFromStatus, isErrorPayload } from "./httpError.js"
import { wireParameters } from "./toolSchema.js"
import { usageOf } from "./streamFold.js"
import { invalid } from "./wireJson.js"

/** How reasoning that came through `@effect/ai` is marked: `effect-ai:<key of its provider metadata>` (`effect-ai:anthropic`). */
const reasoningPrefix = "effect-ai:"

/**
 * A reasoning part of a response (or the metadata of a streamed one) as reasoning parts, one per
 * provider that gave metadata: what that provider reads back (Anthropic's signature or redacted
 * data, OpenAI's item id and encrypted content). Without metadata there is nothing to send back.
 */
export const reasoningOf = (text: string, metadata: { readonly [provider: string]: unknown }): Array<Part.ReasoningPart> =>
  Object.entries(metadata).flatMap(([provider, data]) =>
    data === undefined ? [] : [{ _tag: "Reasoning", provider: `${reasoningPrefix}${provider}`, text, data: data as Json.JsonValue }]
  )

/** A file as `@effect/ai`'s file part: inline base64, or a `URL`. */
const filePart = (file: Part.FilePart): Prompt.FilePartEncoded => ({
  type: "file",
  mediaType: file.mediaType,
  ...(file.name === undefined ? {} : { fileName: file.name }),
  data: file.source._tag === "Url" ? new URL(file.source.url) : file.source.data
})

/**
 * The prompt: the system prompt, then the messages; consecutive tool results share one tool
 * message, and their files follow them in a user message (`@effect/ai` 0.37's tool results are
 * JSON only). An assistant message begins with the reasoning that came through `@effect/ai`,
 * each part under its provider's key of the part's options (which only that provider reads).
 */
export const toPrompt = (request: ChatModel.ChatRequest): Array<Prompt.MessageEncoded> => {
  const messages: Array<Prompt.MessageEncoded> = []
  if (request.system !== undefined) messages.push({ role: "system", content: request.system })
  for (const message of toolFilesAsUserMessages(request.messages)) {
    switch (message._tag) {
      case "System":
        messages.push({ role: "system", content: message.text })
        break
      case "User":
        messages.push({
          role: "user",
          content: Message.userParts(message).map((part) => part._tag === "Text" ? { type: "text", text: part.text } : filePart(part))
        })
        break
      case "Assistant": {
        const content: Array<Prompt.AssistantMessagePartEncoded> = []
        for (const part of message.reasoning ?? []) {
          if (!part.provider.startsWith(reasoningPrefix)) continue
          content.push({ type: "reasoning", text: part.text, options: { [part.provider.slice(reasoningPrefix.length)]: part.data } as never })
        }
        if (message.text.length > 0) content.push({ type: "text", text: message.text })
        for (const call of message.toolCalls) {
          content.push({ type: "tool-call", id: call.id, name: call.name, params: call.args, providerExecuted: false })
        }
        if (content.length > 0) messages.push({ role: "assistant", content })
        break
      }
      case "ToolResult": {
        const part: Prompt.ToolResultPartEncoded = {
          type: "tool-result",
          id: message.callId,
          name: message.toolName,
          isFailure: message.isError,
          result: message.content,
          providerExecuted: false
        }
        const last = messages.at(-1)
        if (last?.role === "tool") messages[messages.length - 1] = { role: "tool", content: [...last.content, part] }
        else messages.push({ role: "tool", content: [part] })
        break
      }
    }
  }
  return messages
}

/** Any JSON object: tool-call params are kept as the model sent them (our executor decodes them). */
const AnyParameters = Schema.Record(Schema.String, Schema.Unknown)

/**
 * The request's tools as an `@effect/ai` toolkit whose parameter schemas carry our JSON
 * Schemas verbatim (a `jsonSchema` annotation overrides what `@effect/ai` would derive).
 * Its handler is never called: the adapter always disables tool-call resolution.
 */
export const toolkitFor = (tools: ReadonlyArray<ChatModel.ToolDefinition>): AiToolkit.WithHandler<Record<string, AiTool.Any>> => {
  const made = AiToolkit.make(...tools.map((tool) =>
    AiTool.make(tool.name, { description: tool.description }).setParameters(
      AnyParameters.annotate({ jsonSchema: wireParameters(tool.parameters) }) as unknown as AiTool.AnyStructSchema
    )
  ))
  return {
    tools: made.tools as Record<string, AiTool.Any>,
    handle: () => Effect.die(new Error("agentfx executes tools itself: tool-call resolution must stay disabled"))
  } as unknown as AiToolkit.WithHandler<Record<string, AiTool.Any>>
}

const finishReasons: { readonly [K in Response.FinishReason]: ChatModel.FinishReason } = {
  "stop": "stop",
  "length": "length",
  "content-filter": "content-filter",
  "tool-calls": "tool-calls",
  "error": "error",
  "pause": "other",
  "other": "other",
  "unknown": "unknown"
}

/** `@effect/ai`'s finish reason (`pause` becomes `other`). */
export const finishReason = (reason: Response.FinishReason): ChatModel.FinishReason => finishReasons[reason]

/**
 * The usage rule of every adapter (`usageOf`) on what the provider reported: a provider whose
 * total is larger than input + output (Google's, whose reasoning is in the total only) has its
 * output read as total − input.
 */
export const usage = (usage: { readonly inputTokens?: unknown; readonly outputTokens?: unknown; readonly totalTokens?: unknown }): ChatModel.Usage =>
  usageOf(usage.inputTokens, usage.outputTokens, usage.totalTokens)

/** A tool call with the provider's call id; its params must be JSON (they were parsed from JSON). */
export const toolCall = (part: { readonly id: string; readonly name: string; readonly params: unknown }) => ({
  id: part.id,
  name: part.name,
  args: part.params as Json.JsonValue
})

/**
 * An `AiError` as a `ModelError`: an HTTP status is classified like every other adapter's
 * (429, 5xx transient; 401/403; other 4xx), a transport failure is `network`, unreadable
 * output `invalid-response` — unless it was an error envelope sent with HTTP 200 (`{ error }`),
 * which gives the server's error — a prompt the provider cannot express `invalid-request`.
 */
export const fromAiError = (provider: string, nowMillis: number) => (error: AiError.AiError | ParseResult.ParseError): ChatModel.ModelError => {
  switch (error._tag) {
    case "HttpResponseError":
      return error.reason === "StatusCode"
        ? errorFromStatus({ provider, status: error.response.status, headers: error.response.headers, body: error.body, nowMillis })
        : invalid(`${provider} sent an unreadable response (${error.reason}): ${error.message}`)
    case "HttpRequestError":
      return new ChatModel.ModelError({
        reason: error.reason === "Transport" ? "network" : "invalid-request",
        message: error.reason === "Transport" ? `could not reach ${provider}: ${error.message}` : `could not send the request to ${provider}: ${error.message}`
      })
    case "MalformedInput":
      return new ChatModel.ModelError({ reason: "invalid-request", message: `${provider} cannot express the request: ${error.message}` })
    case "MalformedOutput":
      return error.cause instanceof ParseResult.ParseError
        ? fromAiError(provider, nowMillis)(error.cause)
        : invalid(`${provider} sent a response that could not be decoded: ${error.message}`)
    case "ParseError":
      return isErrorPayload(error.issue.actual)
        ? errorFromPayload({ provider, payload: error.issue.actual, where: "with HTTP 200" })
        : invalid(`${provider} sent a response that could not be decoded: ${ParseResult.TreeFormatter.formatErrorSync(error)}`)
    case "UnknownError":
      return new ChatModel.ModelError({ reason: "other", message: `${provider} failed: ${error.message}` })
  }
}

/**
 * A stack overflow (`RangeError`) while the `LanguageModel` builds or sends the request —
 * a history nested deeper than its encoders can go — as an `invalid-request`, instead of a
 * defect; any other defect stays one.
 */
export const unencodable = (provider: string) => (defect: unknown): Option.Option<ChatModel.ModelError> =>
  defect instanceof RangeError
    ? Option.some(new ChatModel.ModelError({ reason: "invalid-request", message: `could not encode the request to ${provider}: ${String(defect)}` }))
    : Option.none()
