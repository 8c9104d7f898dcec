/**
 * Anthropic through `@effect/ai-anthropic` (the Messages API, `POST {apiUrl}/v1/messages`).
 *
 * @since 0.1.0
 */
import type { ChatModel } from "@agentfx/core"
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import { FetchHttpClient } from "@effect/platform"
import type { ConfigError } from "effect"
import { Effect, Layer } from "effect"
import type { Redacted } from "effect"
import * as AiChatModel from "./AiChatModel.js"
import { type ProviderConfig, readProviderConfig } from "./internal/config.js"
import type * as ModelRetry from "./ModelRetry.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly apiKey: Redacted.Redacted
  /** e.g. `claude-sonnet-4-5`. */
  readonly model: string
  /** Default `https://api.anthropic.com` (no `/v1`: the client adds it). */
  readonly apiUrl?: string | undefined
  /** Retries of transient failures (429, 5xx, network). */
  readonly retry?: ModelRetry.Options | undefined
}

/**
 * Anthropic as the `ChatModel`, on `fetch`. Requests ask for at most 4096 output tokens
 * (`@effect/ai-anthropic`'s default).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { AnthropicChatModel } from "@agentfx/ai"
 *
 * const ModelLive = AnthropicChatModel.layer({ apiKey: Redacted.make(process.env.ANTHROPIC_API_KEY ?? ""), model: "claude-sonnet-4-5" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ChatModel.ChatModel> =>
  AiChatModel.layer({ provider: "Anthropic", retry: options.retry }).pipe(
    Layer.provide(AnthropicLanguageModel.layer({ model: options.model })),
    Layer.provide(AnthropicClient.layer({ apiKey: options.apiKey, apiUrl: options.apiUrl })),
    Layer.provide(FetchHttpClient.layer)
  )

/**
 * Anthropic as the `ChatModel`, configured from `Config` — by default the environment:
 * `ANTHROPIC_API_KEY` (required), `ANTHROPIC_MODEL` (default `claude-sonnet-4-5`),
 * `ANTHROPIC_BASE_URL` (optional).
 *
 * @example
 * ```ts
 * import { AnthropicChatModel } from "@agentfx/ai"
 *
 * const ModelLive = AnthropicChatModel.layerConfig()
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options?: ProviderConfig & {
    readonly retry?: ModelRetry.Options
  }
): Layer.Layer<ChatModel.ChatModel, ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.map(readProviderConfig("ANTHROPIC", "claude-sonnet-4-5", options), (config) => layer({ ...config, retry: options?.retry }))
  )
