/**
 * Neutral requests as `effect/ai` prompts and toolkits; `effect/ai` answers and errors as
 * neutral responses and `ModelError`s.
 */
import type { Json } from "@agentfx/core"
import { ChatModel, Message, Part } from "@agentfx/core"
import type { AiError, Prompt, Response, Toolkit as AiToolkit } from "effect/ai"
import { Tool as AiTool } from "effect/ai"
import { Duration, Effect, Option, Redacted } from "effect"
import { answerFile, toolFilesAsUserMessages } from "./content.js"
import { errorFromPayload, errorFromStatus, isErrorPayload } from "./httpError.js"
import { wireSchema } from "./toolSchema.js"
import { usageOf } from "./streamFold.js"
import { count, invalid } from "./wireJson.js"

/** How reasoning that came through `effect/ai` is marked: `effect-ai:<key of its provider metadata>` (`effect-ai:anthropic`). */
const reasoningPrefix = "effect-ai:"

/**
 * A reasoning part of a response (or the metadata of a streamed one) as reasoning parts, one per
 * provider that gave metadata: what that provider reads back (Anthropic's signature or redacted
 * data, OpenAI's item id and encrypted content). Without metadata there is nothing to send back.
 */
export const reasoningOf = (text: string, metadata: { readonly [provider: string]: unknown }): Array<Part.ReasoningPart> =>
  Object.entries(metadata).flatMap(([provider, data]) =>
    data === undefined || data === null ? [] : [{ _tag: "Reasoning", provider: `${reasoningPrefix}${provider}`, text, data: data as Json.JsonValue }]
  )

/** A file as `effect/ai`'s file part: inline base64, or a `URL`. */
const filePart = (file: Part.FilePart): Prompt.FilePartEncoded => ({
  type: "file",
  mediaType: file.mediaType,
  ...(file.name === undefined ? {} : { fileName: file.name }),
  data: file.source._tag === "Url" ? new URL(file.source.url) : file.source.data
})

/**
 * The prompt: the system prompt, then the messages; consecutive tool results share one tool
 * message, and their files follow them in a user message (an `effect/ai` tool result can carry
 * files as its `modelOutput`, but a provider whose tool results take text only writes them as
 * `[image/png omitted]`). An assistant message begins with the reasoning that came through `effect/ai`,
 * each part under its provider's key of the part's options (which only that provider reads); the
 * files the model answered with follow its text as `effect/ai` file parts (the provider maps them).
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
        for (const file of message.files ?? []) content.push(filePart(file))
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

/** A tool as an `effect/ai` dynamic tool: its name, description and JSON Schema. */
const dynamicTool = (tool: ChatModel.ToolDefinition) =>
  AiTool.dynamic(tool.name, { description: tool.description, parameters: wireSchema(tool.parameters) })

type DynamicTool = ReturnType<typeof dynamicTool>

/**
 * The request's tools as an `effect/ai` toolkit of dynamic tools carrying our JSON Schemas as the
 * provider is to send them (`wireSchema`): a provider takes a dynamic tool's JSON Schema as it is.
 * Their parameters are not decoded (the loop decodes them), and the handler is never called: the
 * adapter always disables tool-call resolution.
 */
export const toolkitFor = (tools: ReadonlyArray<ChatModel.ToolDefinition>): AiToolkit.WithHandler<Record<string, DynamicTool>> => ({
  tools: Object.fromEntries(tools.map((tool) => [tool.name, dynamicTool(tool)])),
  handle: () => Effect.die(new Error("agentfx executes tools itself: tool-call resolution must stay disabled"))
})

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

/** `effect/ai`'s finish reason (`pause` becomes `other`). */
export const finishReason = (reason: Response.FinishReason): ChatModel.FinishReason => finishReasons[reason]

/** The larger of a count the provider reported and the sum of its parts (each a count, or 0). */
const atLeastItsParts = (total: unknown, parts: ReadonlyArray<unknown>): number =>
  Math.max(count(total), parts.reduce<number>((sum, part) => sum + count(part), 0))

/**
 * The input and output counts of what the provider reported (`effect/ai`'s usage: input and
 * output counts, each with its parts): the input is its total, or its uncached, cache read and
 * cache write parts when they add up to more; the output its total, or its text and reasoning
 * parts when they add up to more (a provider that counts reasoning beside the total).
 */
export const usageCounts = (reported: typeof Response.Usage.Encoded): { readonly inputTokens: number; readonly outputTokens: number } => ({
  inputTokens: atLeastItsParts(reported.inputTokens.total, [reported.inputTokens.uncached, reported.inputTokens.cacheRead, reported.inputTokens.cacheWrite]),
  outputTokens: atLeastItsParts(reported.outputTokens.total, [reported.outputTokens.text, reported.outputTokens.reasoning])
})

/** The usage rule of every adapter (`usageOf`) on `usageCounts`' counts. */
export const usageOfCounts = (counts: { readonly inputTokens?: unknown; readonly outputTokens?: unknown }): ChatModel.Usage =>
  usageOf(counts.inputTokens, counts.outputTokens)

/** The usage of a whole response (`usageCounts`, then `usageOf`). */
export const usage = (reported: typeof Response.Usage.Encoded): ChatModel.Usage => usageOfCounts(usageCounts(reported))

/** A tool call with the provider's call id; its params must be JSON (they were parsed from JSON). */
export const toolCall = (part: { readonly id: string; readonly name: string; readonly params: unknown }) => ({
  id: part.id,
  name: part.name,
  args: part.params as Json.JsonValue
})

/** Response headers as `errorFromStatus` reads them: redacted ones (credentials) left out. */
const plainHeaders = (headers: { readonly [name: string]: string | Redacted.Redacted<string> }) =>
  Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => !Redacted.isRedacted(entry[1])))

/** A body the provider kept with its error, when it is an error envelope (`{ error }` sent with HTTP 200). */
const envelope = (body: string | undefined): unknown => {
  if (body === undefined) return undefined
  try {
    const parsed: unknown = JSON.parse(body)
    return isErrorPayload(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

/**
 * An `AiError` as a `ModelError`. One the provider made from an HTTP error status (its reason
 * holds the response) is classified by the status like every other adapter's (429, 5xx transient; 401/403;
 * other 4xx), quoting the server; else by its reason: a transport failure is `network`, a rate
 * limit `rate-limited` (with its `retryAfter`), a server's failure `unavailable`, credentials
 * `unauthorized`, a request the provider cannot express or refused `invalid-request`, output it
 * could not read `invalid-response` — unless it kept the body and that is an error envelope
 * (sent with HTTP 200), which gives the server's error —, anything else `other`.
 */
export const fromAiError = (provider: string, nowMillis: number) => (error: AiError.AiError): ChatModel.ModelError => {
  const reason = error.reason
  const http = "http" in reason ? reason.http : undefined
  if (http?.response !== undefined && (http.response.status < 200 || http.response.status > 299)) {
    return errorFromStatus({ provider, status: http.response.status, headers: plainHeaders(http.response.headers), body: http.body, nowMillis })
  }
  const failed = (kind: ChatModel.ModelError["reason"], message: string) => new ChatModel.ModelError({ reason: kind, message })
  switch (reason._tag) {
    case "NetworkError":
      return reason.reason === "TransportError"
        ? failed("network", `could not reach ${provider}: ${reason.description ?? reason.message}`)
        : failed("invalid-request", `could not send the request to ${provider} (${reason.reason}): ${reason.description ?? reason.message}`)
    case "RateLimitError":
      return new ChatModel.ModelError({
        reason: "rate-limited",
        message: `${provider}: ${reason.message}`,
        ...(reason.retryAfter === undefined ? {} : { retryAfterMillis: Duration.toMillis(reason.retryAfter) })
      })
    case "InternalProviderError":
      return failed("unavailable", `${provider} failed: ${reason.message}`)
    case "AuthenticationError":
      return failed("unauthorized", `${provider} refused the credentials: ${reason.message}`)
    case "InvalidRequestError":
    case "ContentPolicyError":
    case "UnsupportedSchemaError":
    case "InvalidUserInputError":
    case "ToolkitRequiredError":
    case "ToolConfigurationError":
      return failed("invalid-request", `${provider} cannot take the request: ${reason.message}`)
    case "InvalidResponseError":
    case "InvalidOutputError":
    case "StructuredOutputError": {
      const payload = envelope(http?.body)
      return payload !== undefined
        ? errorFromPayload({ provider, payload, where: "with HTTP 200" })
        : invalid(`${provider} sent a response that could not be decoded: ${reason.description}`)
    }
    case "ToolNotFoundError":
    case "ToolParameterValidationError":
    case "InvalidToolResultError":
    case "ToolResultEncodingError":
      return invalid(`${provider} sent a tool call that could not be read: ${reason.message}`)
    case "QuotaExhaustedError":
    case "UnknownError":
      return failed("other", `${provider} failed: ${reason.message}`)
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

/**
 * A file part of an `effect/ai` answer (its bytes, decoded) as a file of the answer, checked
 * (`answerFile`): one whose media type is none is an `invalid-response`.
 */
export const answerFileOf = (provider: string, part: { readonly mediaType: string; readonly data: Uint8Array }) =>
  answerFile(provider, Part.file({ mediaType: part.mediaType, data: part.data }))
