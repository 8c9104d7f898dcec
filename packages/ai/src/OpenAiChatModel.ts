/**
 * OpenAI's **Responses** API (`POST {baseUrl}/responses`), spoken by our own adapter on
 * Effect's `HttpClient` (`effect/http`) (see docs/decisions/020). For servers that only speak
 * Chat Completions (Ollama, vLLM, llama.cpp, LM Studio) use `ChatCompletionsModel`.
 *
 * @since 0.1.0
 */
import { ChatModel } from "@agentfx/core"
import { FetchHttpClient, HttpClient } from "effect/http"
import type { Config } from "effect"
import { Effect, Result, Layer, Redacted } from "effect"
import { type ProviderConfig, readProviderConfig } from "./internal/config.js"
import { reasoningOwner } from "./internal/content.js"
import * as Wire from "./internal/responses.js"
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
  /** e.g. `gpt-4.1-mini`. */
  readonly model: string
  /**
   * The API's base URL, up to and including its version path: default
   * `https://api.openai.com/v1`; requests go to `{baseUrl}/responses`.
   */
  readonly baseUrl?: string | undefined
  /**
   * OpenAI's strict function calling (`strict: true` on every tool). Strict mode refuses
   * schemas with optional properties, which tools commonly have, so the default is `false`.
   */
  readonly strict?: boolean | undefined
  /** Retries of transient failures (429, 5xx, network, timeouts, `server_error` events). */
  readonly retry?: ModelRetry.Options | undefined
  /**
   * Whether the model reasons: its reasoning is asked for encrypted
   * (`include: ["reasoning.encrypted_content"]`), kept in the assistant message and sent back,
   * so that a run goes on reasoning without a stored response. OpenAI refuses `include` for a
   * model that does not reason. Default: by the model's name (`o…`, `gpt-5…` but not its
   * `-chat` models, `codex-…`).
   */
  readonly reasoning?: boolean | undefined
}

/**
 * OpenAI as a `ChatModel` on the `HttpClient` in context: `Authorization: Bearer` with the
 * key, the system prompt as a `developer` message for reasoning models (`o…`, `gpt-5…`).
 * Tool-call arguments that are not valid JSON reach the tool as the raw string (it refuses
 * them, the model is told), as with `ChatCompletionsModel`. Settings go out as
 * `temperature`, `top_p`, `max_output_tokens` and `parallel_tool_calls` (with tools);
 * `stop` does not exist in the Responses API: it is not sent, and a warning is logged the
 * first time a request sets it. An agent's `output` is asked for as `text.format`
 * (`json_schema`, strict when strict mode takes the schema). See docs/providers.md.
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "effect/http"
 * import { Layer, Redacted } from "effect"
 * import { ChatModel } from "@agentfx/core"
 * import { OpenAiChatModel } from "@agentfx/ai"
 *
 * const ModelLive = Layer.effect(
 *   ChatModel.ChatModel,
 *   OpenAiChatModel.make({ apiKey: Redacted.make("sk-…"), model: "gpt-4.1-mini" })
 * ).pipe(Layer.provide(FetchHttpClient.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<ChatModel.ChatModel.Service, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (client) => {
    const url = `${(options.baseUrl ?? "https://api.openai.com/v1").replace(/\/+$/, "")}/responses`
    const reasoning = options.reasoning ?? Wire.isReasoningModel(options.model)
    return WireModel.make(client, {
      ...options,
      providerName: "openai",
      wire: Result.succeed(Wire.wire(options.model, options.strict ?? false, reasoningOwner("openai", url), reasoning)),
      endpoint: endpoint({
        url,
        provider: () => "OpenAI",
        credentials: { authorization: Redacted.make(`Bearer ${Redacted.value(options.apiKey)}`) }
      }),
      span: "OpenAiChatModel"
    })
  })

/**
 * OpenAI as the `ChatModel`, on `fetch`, with a key you hold. A blank key fails every call
 * with `invalid-request` before any request; for a key from the environment use `layerConfig`
 * (a blank `OPENAI_API_KEY` is a `ConfigError` when the Layer is built).
 *
 * @example
 * ```ts
 * import { Config } from "effect"
 * import { OpenAiChatModel } from "@agentfx/ai"
 *
 * // reads OPENAI_API_KEY; give the model, or take the default
 * const ModelLive = OpenAiChatModel.layerConfig({ model: Config.succeed("gpt-4.1-mini") })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ChatModel.ChatModel> =>
  Layer.effect(ChatModel.ChatModel, make(options)).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * OpenAI as the `ChatModel`, configured from `Config` — by default the environment:
 * `OPENAI_API_KEY` (required), `OPENAI_MODEL` (default `gpt-4.1-mini`), `OPENAI_BASE_URL`
 * (optional: the `baseUrl`, with its `/v1`, as OpenAI's SDKs read it); blank values count as
 * unset (a blank key is a `ConfigError`).
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
  options?: ProviderConfig & ModelTimeout.Options & {
    readonly strict?: boolean
    readonly retry?: ModelRetry.Options
    readonly reasoning?: boolean
  }
): Layer.Layer<ChatModel.ChatModel, Config.ConfigError> =>
  Layer.unwrap(
    Effect.map(readProviderConfig("OPENAI", "gpt-4.1-mini", options), (config) => layer({ ...options, ...config }))
  )
