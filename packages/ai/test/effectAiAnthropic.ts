/**
 * An `effect/ai` `LanguageModel` speaking Anthropic's Messages API on the `HttpClient`, built
 * with `LanguageModel.make`: the provider `AiChatModel` runs behind in these tests, against the
 * loopback servers. `@effect/ai-anthropic` 4.0.0-beta.106 cannot be loaded against effect 4.1.5
 * (it imports `effect/unstable/ai/*`, `effect/unstable/http/*` and `effect/unstable/encoding/Sse`,
 * which 4.1.5 ships as `effect/ai`, `effect/http` and `effect/encoding`: `ERR_MODULE_NOT_FOUND`),
 * so this one does what that package does where the tests look:
 * - the request: `x-api-key` and `anthropic-version` headers; the system prompt as text blocks;
 *   user and tool messages in one user turn; a file as an `image` or `document` block; a tool
 *   result as `tool_result` with its result as JSON; reasoning sent back from its options'
 *   `anthropic.info`; each tool's JSON Schema (`Tool.getJsonSchema`) as its `input_schema`; tool
 *   choice `none` as no tools at all; the config (`withConfigOverride`) in the body, but for
 *   `disableParallelToolCalls`, which is the tool choice's `disable_parallel_tool_use`;
 * - the answer: text, `tool_use` as tool calls, thinking and redacted thinking as reasoning with
 *   metadata `{ anthropic: { info } }`, the stop reason and usage as the finish part; streamed,
 *   each event as its parts, an `error` event as an `error` part, up to `message_stop`;
 * - failures: an `AiError` from `AiError.reasonFromHttpStatus` holding the response (status,
 *   headers with credentials redacted) and its body for an error status; a body that is no
 *   message an `InvalidOutputError` naming what did not decode (the body is not kept); a
 *   request that cannot be sent a `NetworkError`.
 */
import { LanguageModel, type Prompt, type Response, Tool } from "effect/ai"
import { AiError } from "effect/ai"
import { Context, Effect, Layer, Redactable, Redacted, Schema, Stream } from "effect"
import { HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import * as Sse from "../src/internal/sse.js"

/** What `withConfigOverride` sets, as `@effect/ai-anthropic`'s config names it. */
export interface Config {
  readonly temperature?: number | undefined
  readonly top_p?: number | undefined
  readonly max_tokens?: number | undefined
  readonly stop_sequences?: ReadonlyArray<string> | undefined
  readonly disableParallelToolCalls?: boolean | undefined
}

const CurrentConfig = Context.Reference<Config>("test/effectAiAnthropic/Config", { defaultValue: () => ({}) })

/** `effect` with `overrides` merged into the config (the later wins, field by field). */
export const withConfigOverride = (overrides: Config) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.service(CurrentConfig), (config) => Effect.provideService(effect, CurrentConfig, { ...config, ...overrides }))

const failed = (method: string, reason: AiError.AiErrorReason) => AiError.make({ module: "AnthropicClient", method, reason })

const base64 = (data: string | Uint8Array) => (typeof data === "string" ? data : Buffer.from(data).toString("base64"))

const fileBlock = (part: Prompt.FilePart): object => {
  const url = part.data instanceof URL ? part.data.href : undefined
  if (part.mediaType.startsWith("image/")) {
    return { type: "image", source: url !== undefined ? { type: "url", url } : { type: "base64", media_type: part.mediaType, data: base64(part.data as string | Uint8Array) } }
  }
  const title = part.fileName === undefined ? {} : { title: part.fileName }
  return url !== undefined
    ? { type: "document", source: { type: "url", url }, ...title }
    : { type: "document", source: { type: "base64", media_type: part.mediaType, data: base64(part.data as string | Uint8Array) }, ...title }
}

interface Info {
  readonly type: "thinking" | "redacted_thinking"
  readonly signature?: string
  readonly redactedData?: string
}

const assistantBlock = (part: Prompt.AssistantMessagePart): ReadonlyArray<object> => {
  switch (part.type) {
    case "text":
      return [{ type: "text", text: part.text }]
    case "reasoning": {
      const info = (part.options.anthropic as { readonly info?: Info } | null | undefined)?.info
      if (info === undefined) return []
      return [info.type === "thinking" ? { type: "thinking", thinking: part.text, signature: info.signature } : { type: "redacted_thinking", data: info.redactedData }]
    }
    case "tool-call":
      return [{ type: "tool_use", id: part.id, name: part.name, input: part.params }]
    default:
      return []
  }
}

/** The request body for `options`, with the config in context. */
const requestBody = (model: string, options: LanguageModel.ProviderOptions, config: Config, stream: boolean) => {
  const system: Array<object> = []
  const messages: Array<{ role: "user" | "assistant"; content: Array<object> }> = []
  const append = (role: "user" | "assistant", blocks: ReadonlyArray<object>) => {
    const last = messages.at(-1)
    if (last?.role === role) last.content.push(...blocks)
    else messages.push({ role, content: [...blocks] })
  }
  for (const message of options.prompt.content) {
    switch (message.role) {
      case "system":
        system.push({ type: "text", text: message.content })
        break
      case "user":
        append("user", message.content.map((part) => (part.type === "text" ? { type: "text", text: part.text } : fileBlock(part))))
        break
      case "assistant":
        append("assistant", message.content.flatMap(assistantBlock))
        break
      case "tool":
        append(
          "user",
          message.content.flatMap((part) =>
            part.type === "tool-result" ? [{ type: "tool_result", tool_use_id: part.id, content: JSON.stringify(part.result), is_error: part.isFailure }] : []
          )
        )
        break
    }
  }
  const { disableParallelToolCalls, ...sampling } = config
  const choice = options.toolChoice
  const withTools = options.tools.length > 0 && choice !== "none"
  const parallelism = disableParallelToolCalls === undefined ? {} : { disable_parallel_tool_use: disableParallelToolCalls }
  return {
    ...sampling,
    model,
    max_tokens: config.max_tokens ?? 4096,
    messages,
    ...(system.length === 0 ? {} : { system }),
    ...(withTools
      ? {
        tools: options.tools.map((tool) => ({ name: tool.name, description: Tool.getDescription(tool), input_schema: Tool.getJsonSchema(tool) })),
        tool_choice: {
          ...(choice === "auto" ? { type: "auto" } : choice === "required" ? { type: "any" } : { type: "tool", name: (choice as { readonly tool: string }).tool }),
          ...parallelism
        }
      }
      : {}),
    ...(stream ? { stream: true } : {})
  }
}

const finishReason = (reason: string | null | undefined): Response.FinishReason => {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop"
    case "max_tokens":
      return "length"
    case "tool_use":
      return "tool-calls"
    case "refusal":
      return "content-filter"
    case null:
    case undefined:
      return "unknown"
    default:
      return "other"
  }
}

const Usage = Schema.Struct({
  input_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  output_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  cache_creation_input_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  cache_read_input_tokens: Schema.optional(Schema.NullOr(Schema.Number))
})

const Block = Schema.Struct({
  type: Schema.String,
  text: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  input: Schema.optional(Schema.Unknown),
  thinking: Schema.optional(Schema.String),
  signature: Schema.optional(Schema.String),
  data: Schema.optional(Schema.String)
})

const Message = Schema.Struct({
  type: Schema.Literal("message"),
  content: Schema.Array(Block),
  stop_reason: Schema.NullOr(Schema.String),
  usage: Usage
})

type Counts = typeof Usage.Type

const usageOf = (counts: Counts): typeof Response.Usage.Encoded => {
  const uncached = counts.input_tokens ?? 0
  const cacheRead = counts.cache_read_input_tokens ?? 0
  const cacheWrite = counts.cache_creation_input_tokens ?? 0
  return {
    inputTokens: { uncached, cacheRead, cacheWrite, total: uncached + cacheRead + cacheWrite },
    outputTokens: { total: counts.output_tokens ?? 0 }
  }
}

const reasoning = (block: typeof Block.Type): Response.PartEncoded =>
  block.type === "thinking"
    ? { type: "reasoning", text: block.thinking ?? "", metadata: { anthropic: { info: { type: "thinking", signature: block.signature ?? "" } } } }
    : { type: "reasoning", text: "", metadata: { anthropic: { info: { type: "redacted_thinking", redactedData: block.data ?? "" } } } }

const partsOf = (message: typeof Message.Type): Array<Response.PartEncoded> => [
  ...message.content.flatMap((block): ReadonlyArray<Response.PartEncoded> =>
    block.type === "text"
      ? [{ type: "text", text: block.text ?? "" }]
      : block.type === "tool_use"
      ? [{ type: "tool-call", id: block.id ?? "", name: block.name ?? "", params: block.input ?? {} }]
      : block.type === "thinking" || block.type === "redacted_thinking"
      ? [reasoning(block)]
      : []
  ),
  { type: "finish", reason: finishReason(message.stop_reason), usage: usageOf(message.usage) }
]

/** The error message of an Anthropic error body, if it is one. */
const messageOf = (body: string): string | undefined => {
  try {
    const parsed = JSON.parse(body) as { readonly error?: { readonly message?: unknown } }
    return typeof parsed.error?.message === "string" ? parsed.error.message : undefined
  } catch {
    return undefined
  }
}

const requestFailed = (method: string) => (error: HttpClientError.HttpClientError): AiError.AiError => {
  const reason = error.reason
  switch (reason._tag) {
    case "TransportError":
    case "EncodeError":
    case "InvalidUrlError":
      return failed(method, new AiError.NetworkError({ reason: reason._tag, method: reason.request.method, url: reason.request.url, description: reason.description }))
    default:
      return failed(method, new AiError.InvalidOutputError({ description: reason.description ?? reason.message }))
  }
}

/** The answer, or the `AiError` of an error status (holding the response and its body). */
const ok = (method: string, response: HttpClientResponse.HttpClientResponse) =>
  response.status >= 200 && response.status < 300
    ? Effect.succeed(response)
    : Effect.flatMap(Effect.orElseSucceed(response.text, () => ""), (body) =>
      Effect.fail(failed(
        method,
        AiError.reasonFromHttpStatus({
          status: response.status,
          http: { response: { status: response.status, headers: Redactable.redact(response.headers) as { readonly [name: string]: string } }, body },
          description: messageOf(body)
        })
      )))

/** The parts of a streamed message, event by event. */
const streamParts = (events: Stream.Stream<Sse.Event, AiError.AiError>): Stream.Stream<Response.StreamPartEncoded, AiError.AiError> =>
  Stream.suspend(() => {
    const blocks = new Map<number, { readonly type: string; readonly id: string; readonly name: string; readonly input: unknown; json: string }>()
    const counts: { [field: string]: number | null | undefined } = {}
    let stop: string | null | undefined = undefined
    return events.pipe(
      Stream.mapEffect((event) =>
        Effect.try({
          // the events' shapes are read as Anthropic documents them (this is a test's provider)
          try: (): any => JSON.parse(event.data),
          catch: (cause) => failed("createMessageStream", new AiError.InvalidOutputError({ description: String(cause) }))
        })
      ),
      Stream.takeUntil((json) => json.type === "message_stop"),
      Stream.map((json): ReadonlyArray<Response.StreamPartEncoded> => {
        const id = String(json.index)
        switch (json.type) {
          case "message_start":
            Object.assign(counts, json.message?.usage)
            return []
          case "content_block_start": {
            const block = json.content_block
            blocks.set(json.index, { type: block.type, id: block.id, name: block.name, input: block.input, json: "" })
            if (block.type === "text") return [{ type: "text-start", id }]
            if (block.type === "thinking") return [{ type: "reasoning-start", id }]
            if (block.type === "redacted_thinking") {
              return [{ type: "reasoning-start", id, metadata: { anthropic: { info: { type: "redacted_thinking", redactedData: block.data } } } }]
            }
            return []
          }
          case "content_block_delta": {
            const delta = json.delta
            if (delta.type === "text_delta") return [{ type: "text-delta", id, delta: delta.text }]
            if (delta.type === "thinking_delta") return [{ type: "reasoning-delta", id, delta: delta.thinking }]
            if (delta.type === "signature_delta") {
              return [{ type: "reasoning-delta", id, delta: "", metadata: { anthropic: { info: { type: "thinking", signature: delta.signature } } } }]
            }
            const block = blocks.get(json.index)
            if (delta.type === "input_json_delta" && block !== undefined) block.json += delta.partial_json
            return []
          }
          case "content_block_stop": {
            const block = blocks.get(json.index)
            if (block?.type === "text") return [{ type: "text-end", id }]
            if (block?.type === "thinking" || block?.type === "redacted_thinking") return [{ type: "reasoning-end", id }]
            if (block?.type === "tool_use") {
              return [{ type: "tool-call", id: block.id, name: block.name, params: block.json.length > 0 ? JSON.parse(block.json) : block.input ?? {} }]
            }
            return []
          }
          case "message_delta":
            stop = json.delta?.stop_reason
            Object.assign(counts, json.usage)
            return []
          case "message_stop":
            return [{ type: "finish", reason: finishReason(stop), usage: usageOf(counts) }]
          case "error":
            return [{ type: "error", error: json.error }]
          default:
            return []
        }
      }),
      Stream.flattenIterable
    )
  })

/** The model `model` at `url` (no `/v1`), sending `apiKey`, on the `HttpClient` in context. */
export const layer = (options: { readonly url: string; readonly apiKey: Redacted.Redacted; readonly model: string }): Layer.Layer<LanguageModel.LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(
    LanguageModel.LanguageModel,
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const post = (method: string, body: unknown) =>
        client.execute(
          HttpClientRequest.post(`${options.url}/v1/messages`).pipe(
            HttpClientRequest.setHeaders({ "x-api-key": Redacted.value(options.apiKey), "anthropic-version": "2023-06-01" }),
            HttpClientRequest.bodyJsonUnsafe(body)
          )
        ).pipe(
          Effect.mapError(requestFailed(method)),
          Effect.flatMap((response) => ok(method, response))
        )
      return yield* LanguageModel.make({
        generateText: (provider) =>
          Effect.gen(function*() {
            const body = requestBody(options.model, provider, yield* CurrentConfig, false)
            const response = yield* post("createMessage", body)
            const json = yield* Effect.mapError(response.json, requestFailed("createMessage"))
            const message = yield* Effect.mapError(
              Schema.decodeUnknownEffect(Message)(json),
              (error) => failed("createMessage", AiError.InvalidOutputError.fromSchemaError(error))
            )
            return partsOf(message)
          }),
        streamText: (provider) =>
          Stream.unwrap(Effect.gen(function*() {
            const body = requestBody(options.model, provider, yield* CurrentConfig, true)
            const response = yield* post("createMessageStream", body)
            const events = response.stream.pipe(
              Stream.mapError(requestFailed("createMessageStream")),
              Stream.decodeText(),
              Sse.events({ limit: Number.POSITIVE_INFINITY, tooLarge: () => failed("createMessageStream", new AiError.InvalidOutputError({ description: "too large" })) })
            )
            return streamParts(events)
          }))
      })
    })
  )
