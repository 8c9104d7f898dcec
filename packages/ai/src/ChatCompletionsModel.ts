/**
 * A `ChatModel` speaking the OpenAI **Chat Completions** API (`POST {baseUrl}/chat/completions`),
 * for local and compatible servers: Ollama, vLLM, llama.cpp server, LM Studio, and OpenAI
 * itself. Built on Effect's `HttpClient` (`effect/http`): interrupting a call aborts its request.
 *
 * @since 0.1.0
 */
import { ChatModel } from "@agentfx/core"
import { FetchHttpClient, HttpClient } from "effect/http"
import { Config, Effect, Result, Layer, Option, Redacted } from "effect"
import * as Wire from "./internal/chatCompletions.js"
import { optionalString, requiredString } from "./internal/config.js"
import { reasoningOwner } from "./internal/content.js"
import { endpoint } from "./internal/transport.js"
import * as WireModel from "./internal/wireModel.js"
import type * as ModelRetry from "./ModelRetry.js"
import type * as ModelTimeout from "./ModelTimeout.js"

/**
 * Where the server is, which model to ask, and how long to wait.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends ModelTimeout.Options {
  /**
   * The API's base URL, up to and including its version: `http://localhost:11434/v1`
   * (Ollama), `http://localhost:8000/v1` (vLLM), `http://localhost:8080/v1` (llama.cpp),
   * `http://localhost:1234/v1` (LM Studio), `https://api.openai.com/v1`. Credentials in it
   * (`https://user:pass@host/v1`) are sent as `Authorization: Basic`.
   */
  readonly baseUrl: string
  /** The model name the server knows, e.g. `llama3.2` or `qwen2.5:7b`. */
  readonly model: string
  /** Sent as `Authorization: Bearer …` when set (local servers usually need none). */
  readonly apiKey?: Redacted.Redacted | undefined
  /** Retries of transient failures (429, 5xx, network, timeouts, overloaded servers). */
  readonly retry?: ModelRetry.Options | undefined
  /**
   * The field that carries `settings.maxOutputTokens`. Default: `max_completion_tokens` for
   * `api.openai.com` (OpenAI's reasoning models refuse `max_tokens`), `max_tokens` for every
   * other server (what compatible servers know).
   */
  readonly maxTokensField?: "max_tokens" | "max_completion_tokens" | undefined
  /**
   * The provider for telemetry, as OpenTelemetry's GenAI conventions name it: each model call's
   * `gen_ai.provider.name` and each response's `provider`. Default: by the `baseUrl`'s host
   * ({@link providerNameOf}) — `api.openai.com` is `"openai"`, `api.groq.com` `"groq"`, … —
   * and `"openai_compatible"` for any other server (Ollama, vLLM, a proxy): give your own name
   * for it (`"ollama"`).
   */
  readonly providerName?: string | undefined
}

/** The hosts whose provider the conventions name, as `[host or suffix, name]`; a suffix starts with `.`. */
const knownHosts: ReadonlyArray<readonly [string, string]> = [
  ["api.openai.com", "openai"],
  [".openai.azure.com", "azure.ai.openai"],
  ["api.anthropic.com", "anthropic"],
  ["api.deepseek.com", "deepseek"],
  ["api.groq.com", "groq"],
  ["api.mistral.ai", "mistral_ai"],
  ["api.perplexity.ai", "perplexity"],
  ["api.x.ai", "x_ai"],
  ["api.cohere.ai", "cohere"],
  ["api.cohere.com", "cohere"],
  ["generativelanguage.googleapis.com", "gcp.gemini"],
  ["aiplatform.googleapis.com", "gcp.vertex_ai"],
  ["-aiplatform.googleapis.com", "gcp.vertex_ai"]
]

/**
 * The `gen_ai.provider.name` a Chat Completions model at `baseUrl` names when it is given no
 * `providerName`: the provider OpenTelemetry's GenAI conventions name for a well-known host
 * (`api.openai.com` → `"openai"`, `*.openai.azure.com` → `"azure.ai.openai"`,
 * `api.anthropic.com` → `"anthropic"`, `api.deepseek.com` → `"deepseek"`, `api.groq.com` →
 * `"groq"`, `api.mistral.ai` → `"mistral_ai"`, `api.perplexity.ai` → `"perplexity"`,
 * `api.x.ai` → `"x_ai"`, `api.cohere.ai`/`.com` → `"cohere"`,
 * `generativelanguage.googleapis.com` → `"gcp.gemini"`, `[*-]aiplatform.googleapis.com` →
 * `"gcp.vertex_ai"`), else `"openai_compatible"`: a server speaking OpenAI's API whose provider
 * is not known — not `"openai"`, which would count a local model's calls as OpenAI's.
 *
 * @example
 * ```ts
 * import { ChatCompletionsModel } from "@agentfx/ai"
 *
 * ChatCompletionsModel.providerNameOf("https://api.groq.com/openai/v1") // "groq"
 * ChatCompletionsModel.providerNameOf("http://localhost:11434/v1") // "openai_compatible"
 * ```
 *
 * @since 0.2.0
 * @category telemetry
 */
export const providerNameOf = (baseUrl: string): string => {
  if (!URL.canParse(baseUrl)) return "openai_compatible"
  const host = new URL(baseUrl).hostname.toLowerCase()
  const known = knownHosts.find(([name]) => name.startsWith(".") || name.startsWith("-") ? host.endsWith(name) : host === name)
  return known === undefined ? "openai_compatible" : known[1]
}

/** `maxTokensField` with its default for `baseUrl`, or the `invalid-request` naming a bad value. */
const maxTokensField = (options: Options): Result.Result<Wire.MaxTokensField, ChatModel.ModelError> => {
  const field = options.maxTokensField
  if (field === "max_tokens" || field === "max_completion_tokens") return Result.succeed(field)
  if (field !== undefined) {
    return Result.fail(new ChatModel.ModelError({
      reason: "invalid-request",
      message: `ChatCompletionsModel: maxTokensField must be "max_tokens" or "max_completion_tokens", got ${JSON.stringify(field)}.`
    }))
  }
  return Result.succeed(URL.canParse(options.baseUrl) && new URL(options.baseUrl).hostname === "api.openai.com" ? "max_completion_tokens" : "max_tokens")
}

/**
 * A Chat Completions model on the `HttpClient` in context. Each call is retried by
 * `options.retry` (a stream only until its first part) and bounded by the timeouts.
 * Tool-call arguments that are not valid JSON are passed on as the raw string, so the
 * tool refuses them and the model is told, rather than the run failing. Settings go out as
 * `temperature`, `top_p`, `max_tokens` or `max_completion_tokens` (`maxTokensField`), `stop`
 * and `parallel_tool_calls` (with tools); an agent's `output` as `response_format`
 * (`json_schema`, strict when strict mode takes the schema). See docs/providers.md.
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "effect/http"
 * import { Layer } from "effect"
 * import { ChatModel } from "@agentfx/core"
 * import { ChatCompletionsModel } from "@agentfx/ai"
 *
 * const ModelLive = Layer.effect(
 *   ChatModel.ChatModel,
 *   ChatCompletionsModel.make({ baseUrl: "http://localhost:11434/v1", model: "llama3.2" })
 * ).pipe(Layer.provide(FetchHttpClient.layer))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<ChatModel.ChatModel.Service, never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (client) => {
    const url = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`
    // the owner of kept reasoning names the provider only when told, as before the default name: a stored history keeps its reasoning
    const owner = reasoningOwner(options.providerName ?? "chat-completions", url)
    return WireModel.make(client, {
      ...options,
      providerName: options.providerName ?? providerNameOf(options.baseUrl),
      wire: Result.map(maxTokensField(options), (field) => Wire.wire(options.model, field, owner)),
      endpoint: endpoint({
        url,
        provider: (url) => `the Chat Completions server at ${url}`,
        credentials: { authorization: options.apiKey === undefined ? undefined : Redacted.make(`Bearer ${Redacted.value(options.apiKey)}`) }
      }),
      span: "ChatCompletionsModel"
    })
  })

/**
 * The model as a Layer, on `fetch` (`FetchHttpClient`).
 *
 * @example
 * ```ts
 * import { ChatCompletionsModel } from "@agentfx/ai"
 *
 * const Ollama = ChatCompletionsModel.layer({ baseUrl: "http://localhost:11434/v1", model: "llama3.2" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ChatModel.ChatModel> =>
  Layer.effect(ChatModel.ChatModel, make(options)).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * The model as a Layer, configured from `Config` — by default the environment:
 * `AGENTFX_BASE_URL`, `AGENTFX_MODEL` (both required) and `AGENTFX_API_KEY` (optional; blank
 * counts as unset).
 *
 * @example
 * ```ts
 * import { Config } from "effect"
 * import { ChatCompletionsModel } from "@agentfx/ai"
 *
 * const FromEnv = ChatCompletionsModel.layerConfig()
 * const Vllm = ChatCompletionsModel.layerConfig({ baseUrl: Config.succeed("http://localhost:8000/v1") })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (options?: ModelTimeout.Options & {
  readonly baseUrl?: Config.Config<string>
  readonly model?: Config.Config<string>
  readonly apiKey?: Config.Config<Option.Option<Redacted.Redacted>>
  readonly retry?: ModelRetry.Options
  readonly maxTokensField?: Options["maxTokensField"]
  readonly providerName?: string
}): Layer.Layer<ChatModel.ChatModel, Config.ConfigError> =>
  Layer.unwrap(Effect.gen(function*() {
    const baseUrl = yield* (options?.baseUrl ?? requiredString("AGENTFX_BASE_URL"))
    const model = yield* (options?.model ?? requiredString("AGENTFX_MODEL"))
    const apiKey = yield* (options?.apiKey ?? Config.map(optionalString("AGENTFX_API_KEY"), Option.map(Redacted.make)))
    return layer({ ...options, baseUrl, model, apiKey: Option.getOrUndefined(apiKey) })
  }))
