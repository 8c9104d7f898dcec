/**
 * Any `@effect/ai` `LanguageModel` as a `ChatModel`, so every `@effect/ai` provider works
 * with the agent loop (OpenAI Responses, Anthropic Messages, …). The loop owns tool
 * execution: each call is made with `disableToolCallResolution: true`, the model's tool
 * calls come back unresolved, keyed by the provider's call ids.
 *
 * @since 0.1.0
 */
import { ChatModel } from "@agentfx/core"
import { LanguageModel } from "@effect/ai"
import type { AiError } from "@effect/ai"
import type { ParseResult } from "effect"
import { Clock, Effect, Layer, Stream } from "effect"
import * as Internal from "./internal/languageModel.js"
import * as ModelRetry from "./ModelRetry.js"

/**
 * How the adapter reports and retries.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Names the provider in error messages, e.g. `"OpenAI"`. Default `"the language model"`. */
  readonly provider?: string | undefined
  /** Retries of transient failures (429, 5xx, network). */
  readonly retry?: ModelRetry.Options | undefined
}

/**
 * A `ChatModel` on the `LanguageModel` in context. Each call builds the `@effect/ai`
 * prompt from the neutral messages (tool calls and tool results keyed by the same call
 * ids, a tool result's `isError` as `isFailure`), sends our tools' JSON Schemas verbatim
 * (without their `$schema` key), and maps usage, finish reason and `AiError`s. A tool call
 * whose arguments are not JSON fails the call with `InvalidResponse` (`@effect/ai` parses
 * them). Streaming uses `LanguageModel.streamText`. Interrupting a call aborts its request.
 *
 * @example
 * ```ts
 * import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
 * import { FetchHttpClient } from "@effect/platform"
 * import { Layer, Redacted } from "effect"
 * import { ChatModel } from "@agentfx/core"
 * import { AiChatModel } from "@agentfx/ai"
 *
 * const ModelLive = Layer.effect(ChatModel.ChatModel, AiChatModel.fromLanguageModel({ provider: "OpenAI" })).pipe(
 *   Layer.provide(OpenAiLanguageModel.layer({ model: "gpt-4.1-mini" })),
 *   Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("sk-…") })),
 *   Layer.provide(FetchHttpClient.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromLanguageModel = (
  options?: Options
): Effect.Effect<ChatModel.ChatModel.Service, never, LanguageModel.LanguageModel> =>
  Effect.map(LanguageModel.LanguageModel, (model) => {
    const provider = options?.provider ?? "the language model"
    const toModelError = (error: AiError.AiError | ParseResult.ParseError) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(Internal.fromAiError(provider, now)(error)))
    const callOptions = (request: ChatModel.ChatRequest) => ({
      prompt: Internal.toPrompt(request),
      ...(request.tools.length === 0 ? {} : { toolkit: Internal.toolkitFor(request.tools), toolChoice: request.toolChoice }),
      disableToolCallResolution: true as const
    })

    const generate = (request: ChatModel.ChatRequest) =>
      model.generateText(callOptions(request)).pipe(
        Effect.catchAll(toModelError),
        Effect.map((response): ChatModel.ChatResponse => ({
          text: response.text,
          toolCalls: response.toolCalls.map(Internal.toolCall),
          finishReason: Internal.finishReason(response.finishReason),
          usage: Internal.usage(response.usage)
        })),
        (call) => ModelRetry.retry(call, options?.retry),
        Effect.withSpan("AiChatModel.generate", { attributes: { provider } })
      )

    const stream = (request: ChatModel.ChatRequest): Stream.Stream<ChatModel.StreamPart, ChatModel.ModelError> =>
      Stream.suspend(() => {
        let text = ""
        const toolCalls: Array<ReturnType<typeof Internal.toolCall>> = []
        let finish: ChatModel.ChatResponse | undefined
        const parts = model.streamText(callOptions(request)).pipe(
          Stream.catchAll((error) => Stream.fromEffect(toModelError(error))),
          Stream.mapEffect((part) => {
            switch (part.type) {
              case "text-delta":
                text += part.delta
                return Effect.succeed(part.delta.length > 0 ? [{ _tag: "TextDelta", text: part.delta } as const] : [])
              case "tool-call":
                toolCalls.push(Internal.toolCall(part))
                return Effect.succeed([])
              case "finish":
                finish = {
                  text,
                  toolCalls,
                  finishReason: Internal.finishReason(part.reason),
                  usage: Internal.usage(part.usage)
                }
                return Effect.succeed([])
              case "error":
                return Effect.fail(
                  new ChatModel.ModelError({ reason: "Other", message: `${provider} failed mid-stream: ${JSON.stringify(part.error)}` })
                )
              default:
                return Effect.succeed([])
            }
          }),
          Stream.flattenIterables
        )
        const done = Effect.suspend(() =>
          finish === undefined
            ? Effect.fail(new ChatModel.ModelError({ reason: "InvalidResponse", message: `${provider}'s stream ended without finishing` }))
            : Effect.succeed<ChatModel.StreamPart>({ _tag: "Done", response: { ...finish, text, toolCalls } })
        )
        return Stream.concat(parts, Stream.fromEffect(done))
      }).pipe(
        (call) => ModelRetry.retryStream(call, options?.retry),
        Stream.withSpan("AiChatModel.stream", { attributes: { provider } })
      )

    return { generate, stream }
  })

/**
 * `fromLanguageModel` as a Layer.
 *
 * @example
 * ```ts
 * import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
 * import { FetchHttpClient } from "@effect/platform"
 * import { Config, Layer } from "effect"
 * import { AiChatModel } from "@agentfx/ai"
 *
 * const ModelLive = AiChatModel.layer({ provider: "Anthropic" }).pipe(
 *   Layer.provide(AnthropicLanguageModel.layer({ model: "claude-sonnet-4-5" })),
 *   Layer.provide(AnthropicClient.layerConfig({ apiKey: Config.redacted("ANTHROPIC_API_KEY") })),
 *   Layer.provide(FetchHttpClient.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<ChatModel.ChatModel, never, LanguageModel.LanguageModel> =>
  Layer.effect(ChatModel.ChatModel, fromLanguageModel(options))
