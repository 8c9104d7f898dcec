/**
 * Anthropic's **Messages** API (`POST {apiUrl}/v1/messages`), spoken by our own adapter on
 * `@effect/platform`'s `HttpClient` (see docs/decisions/021).
 *
 * @since 0.1.0
 */
import { ChatModel } from "@agentfx/core"
import { FetchHttpClient, HttpClient } from "@effect/platform"
import type { ConfigError } from "effect"
import { Effect, Layer } from "effect"
import type { Redacted } from "effect"
import * as Wire from "./internal/anthropic.js"
import { type ProviderConfig, readProviderConfig } from "./internal/config.js"
import { endpoint } from "./internal/transport.js"
import * as WireModel from "./internal/wireModel.js"
import type * as ModelRetry from "./ModelRetry.js"
import type * as ModelTimeout from "./ModelTimeout.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options extends ModelTimeout.Options {
  readonly apiKey: Redacted.Redacted
  /** e.g. `claude-sonnet-4-5`. */
  readonly model: string
  /** Default `https://api.anthropic.com` (no `/v1`: the adapter adds it). */
  readonly apiUrl?: string | undefined
  /** Retries of transient failures (429, 5xx, network, timeouts, `overloaded_error` events). */
  readonly retry?: ModelRetry.Options | undefined
}

/**
 * Anthropic as a `ChatModel` on the `HttpClient` in context: the key as `x-api-key`,
 * `anthropic-version: 2023-06-01`, at most 4096 output tokens per call.
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "@effect/platform"
 * import { Layer, Redacted } from "effect"
 * import { ChatModel } from "@agentfx/core"
 * import { AnthropicChatModel } from "@agentfx/ai"
 *
 * const ModelLive = Layer.effect(
 *   ChatModel.ChatModel,
 *   AnthropicChatModel.make({ apiKey: Redacted.make("sk-ant-…"), model: "claude-sonnet-4-5" })
 * ).pipe(Layer.provide(FetchHttpClient.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<ChatModel.ChatModel.Service, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (client) =>
    WireModel.make(client, {
      ...options,
      wire: Wire.wire(options.model, 4096),
      endpoint: endpoint({
        url: `${(options.apiUrl ?? "https://api.anthropic.com").replace(/\/+$/, "")}/v1/messages`,
        provider: () => "Anthropic",
        credentials: { "x-api-key": options.apiKey },
        headers: { "anthropic-version": "2023-06-01" }
      }),
      span: "AnthropicChatModel",
      attributes: { model: options.model }
    }))

/**
 * Anthropic as the `ChatModel`, on `fetch`.
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
  Layer.effect(ChatModel.ChatModel, make(options)).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * Anthropic as the `ChatModel`, configured from `Config` — by default the environment:
 * `ANTHROPIC_API_KEY` (required), `ANTHROPIC_MODEL` (default `claude-sonnet-4-5`),
 * `ANTHROPIC_BASE_URL` (optional); blank values count as unset (a blank key is a `ConfigError`).
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
  options?: ProviderConfig & ModelTimeout.Options & {
    readonly retry?: ModelRetry.Options
  }
): Layer.Layer<ChatModel.ChatModel, ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.map(readProviderConfig("ANTHROPIC", "claude-sonnet-4-5", options), (config) => layer({ ...options, ...config }))
  )
