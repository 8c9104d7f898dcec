/**
 * A `ChatModel` speaking the OpenAI **Chat Completions** API (`POST {baseUrl}/chat/completions`),
 * for local and compatible servers: Ollama, vLLM, llama.cpp server, LM Studio, and OpenAI
 * itself. Built on `@effect/platform`'s `HttpClient`: interrupting a call aborts its request.
 *
 * @since 0.1.0
 */
import { ChatModel } from "@agentfx/core"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import type { HttpClientError, HttpClientResponse } from "@effect/platform"
import * as Sse from "@effect/experimental/Sse"
import type { ConfigError } from "effect"
import { Clock, Config, Effect, Layer, Option, Redacted, Stream } from "effect"
import * as Wire from "./internal/chatCompletions.js"
import { optionalString } from "./internal/config.js"
import { errorFromStatus } from "./internal/httpError.js"
import * as ModelRetry from "./ModelRetry.js"

/**
 * Where the server is and which model to ask.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The API's base URL, up to and including its version: `http://localhost:11434/v1`
   * (Ollama), `http://localhost:8000/v1` (vLLM), `http://localhost:8080/v1` (llama.cpp),
   * `http://localhost:1234/v1` (LM Studio), `https://api.openai.com/v1`.
   */
  readonly baseUrl: string
  /** The model name the server knows, e.g. `llama3.2` or `qwen2.5:7b`. */
  readonly model: string
  /** Sent as `Authorization: Bearer …` when set (local servers usually need none). */
  readonly apiKey?: Redacted.Redacted | undefined
  /** Retries of transient failures (429, 5xx, network). */
  readonly retry?: ModelRetry.Options | undefined
}

const networkError = (url: string, error: HttpClientError.HttpClientError): ChatModel.ModelError => {
  if (error._tag === "RequestError") {
    return new ChatModel.ModelError({
      reason: error.reason === "Transport" ? "Network" : "InvalidRequest",
      message: error.reason === "Transport"
        ? `could not reach the Chat Completions server at ${url}: ${error.description ?? error.message}`
        : `could not send the request to ${url} (${error.reason}): ${error.description ?? error.message}`
    })
  }
  return new ChatModel.ModelError({
    reason: "InvalidResponse",
    message: `the Chat Completions server at ${url} sent an unreadable response (${error.reason}): ${error.description ?? error.message}`
  })
}

/**
 * A Chat Completions model on the `HttpClient` in context. Each call is retried by
 * `options.retry` (a stream only until its first part). Tool-call arguments that are not
 * valid JSON are passed on as the raw string, so the tool refuses them and the model is
 * told, rather than the run failing.
 *
 * @example
 * ```ts
 * import { FetchHttpClient } from "@effect/platform"
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
    const provider = `the Chat Completions server at ${url}`

    const post = (body: unknown, accept: string): Effect.Effect<HttpClientResponse.HttpClientResponse, ChatModel.ModelError> =>
      Effect.gen(function*() {
        const request = HttpClientRequest.post(url).pipe(
          HttpClientRequest.bodyUnsafeJson(body),
          HttpClientRequest.accept(accept),
          options.apiKey === undefined ? (r) => r : HttpClientRequest.bearerToken(options.apiKey)
        )
        const response = yield* Effect.mapError(client.execute(request), (error) => networkError(url, error))
        if (response.status >= 200 && response.status < 300) return response
        const text = yield* Effect.option(response.text)
        return yield* Effect.fail(errorFromStatus({
          provider,
          status: response.status,
          headers: response.headers,
          body: Option.getOrUndefined(text),
          nowMillis: yield* Clock.currentTimeMillis
        }))
      })

    const generate = (request: ChatModel.ChatRequest) =>
      post(Wire.requestBody(options.model, request, false), "application/json").pipe(
        Effect.flatMap((response) => Effect.mapError(response.json, (error) => networkError(url, error))),
        Effect.flatMap(Wire.decode(Wire.Completion, "response")),
        Effect.flatMap(Wire.fromCompletion),
        (call) => ModelRetry.retry(call, options.retry),
        Effect.withSpan("ChatCompletionsModel.generate", { attributes: { model: options.model, url } })
      )

    const stream = (request: ChatModel.ChatRequest): Stream.Stream<ChatModel.StreamPart, ChatModel.ModelError> =>
      Stream.suspend(() => {
        const accumulator = new Wire.StreamAccumulator()
        const decodeChunk = Wire.decode(Wire.Chunk, "chunk")
        const parts = post(Wire.requestBody(options.model, request, true), "text/event-stream").pipe(
          Effect.map((response) =>
            response.stream.pipe(
              Stream.mapError((error) => networkError(url, error)),
              Stream.decodeText(),
              Stream.pipeThroughChannel(Sse.makeChannel()),
              Stream.takeWhile((event) => event.data.trim() !== "[DONE]"),
              Stream.mapEffect((event) =>
                Effect.try({
                  try: (): unknown => JSON.parse(event.data),
                  catch: () =>
                    new ChatModel.ModelError({
                      reason: "InvalidResponse",
                      message: `${provider} sent a stream event that is not JSON: ${event.data.slice(0, 200)}`
                    })
                }).pipe(Effect.flatMap(decodeChunk))
              ),
              Stream.mapEffect((chunk) => {
                if (chunk.error !== undefined && chunk.error !== null) {
                  return Effect.fail(inStreamError(provider, chunk.error))
                }
                const text = accumulator.add(chunk)
                return Effect.succeed(text.length > 0 ? [{ _tag: "TextDelta", text } as const] : [])
              }),
              Stream.flattenIterables
            )
          ),
          Stream.unwrap
        )
        return Stream.concat(
          parts,
          Stream.fromEffect(Effect.map(Effect.suspend(() => accumulator.response()), (response): ChatModel.StreamPart => ({
            _tag: "Done",
            response
          })))
        )
      }).pipe(
        (call) => ModelRetry.retryStream(call, options.retry),
        Stream.withSpan("ChatCompletionsModel.stream", { attributes: { model: options.model, url } })
      )

    return { generate, stream }
  })

/** An error object a server sent inside the stream (vLLM does): its numeric `code` is read as an HTTP status. */
const inStreamError = (provider: string, error: unknown): ChatModel.ModelError => {
  const body = JSON.stringify({ error })
  const code = typeof error === "object" && error !== null && "code" in error ? Number(error.code) : Number.NaN
  return Number.isInteger(code) && code >= 400 && code <= 599
    ? errorFromStatus({ provider, status: code, headers: {}, body, nowMillis: 0 })
    : new ChatModel.ModelError({ reason: "Other", message: `${provider} failed mid-stream: ${body.slice(0, 300)}` })
}

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
export const layerConfig = (options?: {
  readonly baseUrl?: Config.Config<string>
  readonly model?: Config.Config<string>
  readonly apiKey?: Config.Config<Option.Option<Redacted.Redacted>>
  readonly retry?: ModelRetry.Options
}): Layer.Layer<ChatModel.ChatModel, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const baseUrl = yield* (options?.baseUrl ?? Config.string("AGENTFX_BASE_URL"))
    const model = yield* (options?.model ?? Config.string("AGENTFX_MODEL"))
    const apiKey = yield* (options?.apiKey ?? Config.map(optionalString("AGENTFX_API_KEY"), Option.map(Redacted.make)))
    return layer({ baseUrl, model, apiKey: Option.getOrUndefined(apiKey), retry: options?.retry })
  }))
