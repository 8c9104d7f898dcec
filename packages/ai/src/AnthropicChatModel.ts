/**
 * Anthropic's **Messages** API (`POST {baseUrl}/messages`), spoken by our own adapter on
 * Effect's `HttpClient` (`effect/http`) (see docs/decisions/021).
 *
 * @since 0.1.0
 */
import { ChatModel } from "@agentfx/core"
import { FetchHttpClient, HttpClient } from "effect/http"
import type { Config } from "effect"
import { Effect, Result, Layer } from "effect"
import type { Redacted } from "effect"
import * as Wire from "./internal/anthropic.js"
import { viaAnswerTool } from "./internal/answerTool.js"
import { reasoningOwner } from "./internal/content.js"
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
  /**
   * The API's base URL, up to and including its version path, as every adapter's `baseUrl`:
   * default `https://api.anthropic.com/v1`; requests go to `{baseUrl}/messages`.
   */
  readonly baseUrl?: string | undefined
  /** Retries of transient failures (429, 5xx, network, timeouts, `overloaded_error` events). */
  readonly retry?: ModelRetry.Options | undefined
  /**
   * `max_tokens` (which the Messages API requires) when a request's settings set no
   * `maxOutputTokens`: a positive integer, default {@link defaultMaxTokens}.
   */
  readonly maxTokens?: number | undefined
  /**
   * Extended thinking: the model thinks, within `budgetTokens` (at least 1024, below
   * `max_tokens`), before it answers. Its thinking blocks, with their signatures, are kept in
   * the assistant message and sent back first in that turn, as Anthropic requires of a turn
   * that called tools (docs/providers.md). With thinking, Anthropic refuses a forced tool
   * choice and any temperature but 1: such requests fail with `invalid-request` before any is
   * sent. Default: no thinking.
   */
  readonly thinking?: Wire.Thinking | undefined
}

/**
 * The `max_tokens` sent when neither the request's settings nor the Layer's `maxTokens` say.
 *
 * @example
 * ```ts
 * import { AnthropicChatModel } from "@agentfx/ai"
 *
 * AnthropicChatModel.defaultMaxTokens // 4096
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxTokens = 4096

const defaultBaseUrl = "https://api.anthropic.com/v1"

/** `ANTHROPIC_BASE_URL` as Anthropic's SDKs read it (the host, without `/v1`), as a `baseUrl`. */
const fromAnthropicEnvironment = (value: string) => `${value.replace(/\/+$/, "")}/v1`

const invalidOption = (message: string) => Result.fail(new ChatModel.ModelError({ reason: "invalid-request", message: `Anthropic: ${message}` }))

const wireFor = (options: Options, owner: string): Result.Result<WireModel.WireFormat, ChatModel.ModelError> => {
  const maxTokens = options.maxTokens ?? defaultMaxTokens
  if (!Number.isInteger(maxTokens) || maxTokens <= 0) return invalidOption(`maxTokens must be a positive integer, got ${maxTokens}.`)
  const budget = options.thinking?.budgetTokens
  if (budget !== undefined && (!Number.isInteger(budget) || budget < 1024)) {
    return invalidOption(`thinking.budgetTokens must be an integer of at least 1024, got ${budget}.`)
  }
  return Result.succeed(Wire.wire(options.model, maxTokens, owner, options.thinking))
}

/**
 * Anthropic as a `ChatModel` on the `HttpClient` in context: the key as `x-api-key`,
 * `anthropic-version: 2023-06-01`. Settings go out as `temperature` (Anthropic's range is 0
 * to 1: a higher one fails the call with `invalid-request` before it is sent), `top_p`,
 * `max_tokens` (`maxOutputTokens`, else the Layer's `maxTokens`, default 4096),
 * `stop_sequences` and `tool_choice.disable_parallel_tool_use`. The Messages API has no
 * JSON-Schema answer: an agent's `output` is asked for through a tool named `output.name`
 * whose call is the answer (docs/providers.md). A `maxTokens` that is not a positive integer
 * fails every call with `invalid-request`.
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "effect/http"
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
  Effect.map(HttpClient.HttpClient, (client) => {
    const url = `${(options.baseUrl ?? defaultBaseUrl).replace(/\/+$/, "")}/messages`
    return viaAnswerTool("Anthropic", WireModel.make(client, {
      ...options,
      providerName: "anthropic",
      wire: wireFor(options, reasoningOwner("anthropic", url)),
      endpoint: endpoint({
        url,
        provider: () => "Anthropic",
        credentials: { "x-api-key": options.apiKey },
        headers: { "anthropic-version": "2023-06-01" }
      }),
      span: "AnthropicChatModel"
    }))
  })

/**
 * Anthropic as the `ChatModel`, on `fetch`, with a key you hold. A blank key fails every call
 * with `invalid-request` before any request; for a key from the environment use `layerConfig`
 * (a blank `ANTHROPIC_API_KEY` is a `ConfigError` when the Layer is built).
 *
 * @example
 * ```ts
 * import { Config } from "effect"
 * import { AnthropicChatModel } from "@agentfx/ai"
 *
 * // reads ANTHROPIC_API_KEY; give the model, or take the default
 * const ModelLive = AnthropicChatModel.layerConfig({ model: Config.succeed("claude-sonnet-4-5") })
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
 * `ANTHROPIC_BASE_URL` (optional; as Anthropic's SDKs read it, without `/v1`: the `baseUrl` is it
 * and `/v1`); blank values count as unset (a blank key is a `ConfigError`). A `baseUrl` given
 * here is the option's, with its `/v1`.
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
    readonly maxTokens?: number
    readonly thinking?: Wire.Thinking
  }
): Layer.Layer<ChatModel.ChatModel, Config.ConfigError> =>
  Layer.unwrap(
    Effect.map(readProviderConfig("ANTHROPIC", "claude-sonnet-4-5", options, fromAnthropicEnvironment), (config) => layer({ ...options, ...config }))
  )
