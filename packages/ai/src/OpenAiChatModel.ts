/**
 * OpenAI through `@effect/ai-openai`, which speaks the **Responses** API
 * (`POST {apiUrl}/responses`). For servers that only speak Chat Completions (Ollama, vLLM,
 * llama.cpp, LM Studio) use `ChatCompletionsModel`.
 *
 * @since 0.1.0
 */
import type { ChatModel } from "@agentfx/core"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
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
  /** e.g. `gpt-4.1-mini`. */
  readonly model: string
  /** Default `https://api.openai.com/v1`; the client posts to `{apiUrl}/responses`. */
  readonly apiUrl?: string | undefined
  /**
   * OpenAI's strict function calling (`strict: true` on every tool). Strict mode refuses
   * schemas with optional properties, which tools commonly have, so the default is `false`.
   */
  readonly strict?: boolean | undefined
  /** Retries of transient failures (429, 5xx, network). */
  readonly retry?: ModelRetry.Options | undefined
}

/**
 * OpenAI as the `ChatModel`, on `fetch`.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { OpenAiChatModel } from "@agentfx/ai"
 *
 * const ModelLive = OpenAiChatModel.layer({ apiKey: Redacted.make(process.env.OPENAI_API_KEY ?? ""), model: "gpt-4.1-mini" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ChatModel.ChatModel> =>
  AiChatModel.layer({ provider: "OpenAI", retry: options.retry }).pipe(
    Layer.provide(OpenAiLanguageModel.layer({ model: options.model, config: { strict: options.strict ?? false } })),
    Layer.provide(OpenAiClient.layer({ apiKey: options.apiKey, apiUrl: options.apiUrl })),
    Layer.provide(FetchHttpClient.layer)
  )

/**
 * OpenAI as the `ChatModel`, configured from `Config` — by default the environment:
 * `OPENAI_API_KEY` (required), `OPENAI_MODEL` (default `gpt-4.1-mini`), `OPENAI_BASE_URL`
 * (optional); blank values count as unset.
 *
 * @example
 * ```ts
 * import { Config } from "effect"
 * import { OpenAiChatModel } from "@agentfx/ai"
 *
 * const ModelLive = OpenAiChatModel.layerConfig({ model: Config.succeed("gpt-4.1") })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options?: ProviderConfig & {
    readonly strict?: boolean
    readonly retry?: ModelRetry.Options
  }
): Layer.Layer<ChatModel.ChatModel, ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.map(readProviderConfig("OPENAI", "gpt-4.1-mini", options), (config) => layer({ ...config, strict: options?.strict, retry: options?.retry }))
  )
