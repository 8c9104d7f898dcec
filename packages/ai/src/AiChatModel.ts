/**
 * Any `effect/ai` `LanguageModel` as a `ChatModel`, so every Effect 4 provider package works
 * with the agent loop (`@effect/ai-openai`, `@effect/ai-anthropic`, OpenRouter, a custom one
 * built with `LanguageModel.make`, …). The loop owns tool execution: each call is made with
 * `disableToolCallResolution: true` and `toolCallValidation: "deferred"`, the model's tool calls
 * come back unresolved, keyed by the provider's call ids, a call of a tool the agent does not
 * have included (the loop tells the model).
 *
 * @since 0.1.0
 */
import { ChatModel, Mask } from "@agentfx/core"
import type { Part } from "@agentfx/core"
import { LanguageModel } from "effect/ai"
import type { AiError } from "effect/ai"
import { Cause, Clock, Effect, Layer, Option, Redacted, Result, Stream } from "effect"
import { viaAnswerTool } from "./internal/answerTool.js"
import { errorFromPayload } from "./internal/httpError.js"
import * as Internal from "./internal/languageModel.js"
import { maskError } from "./internal/mask.js"
import { StreamFold } from "./internal/streamFold.js"
import { allFields, setFields, warnIgnored } from "./internal/settings.js"
import * as Timeout from "./internal/timeout.js"
import * as ModelRetry from "./ModelRetry.js"
import type * as ModelTimeout from "./ModelTimeout.js"

/**
 * How the adapter reports, bounds and retries. `idleTimeout` counts between the
 * `LanguageModel`'s stream parts (this adapter sees no bytes).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends ModelTimeout.Options {
  /** Names the provider in error messages, e.g. `"Google"`. Default `"the language model"`. */
  readonly provider?: string | undefined
  /** Retries of transient failures (429, 5xx, network, timeouts, overloaded servers). */
  readonly retry?: ModelRetry.Options | undefined
  /**
   * Credentials the `LanguageModel`'s client was given (its API key): masked (`***`)
   * wherever they appear in a `ModelError`'s message, like URL credentials and
   * `Authorization`/`x-api-key` values always are.
   */
  readonly secrets?: ReadonlyArray<Redacted.Redacted> | undefined
  /** The model's name, for telemetry (`gen_ai.request.model`): the `LanguageModel` Layer chose it. */
  readonly model?: string | undefined
  /**
   * The provider, for telemetry (`gen_ai.provider.name`), as OpenTelemetry's GenAI conventions
   * name it (`"anthropic"`, `"gcp.gemini"`, …): the `LanguageModel` Layer chose it. Without it
   * the attribute is left out. `gen_ai.response.finish_reasons` is `effect/ai`'s finish reason
   * (as its own spans report it): it keeps no provider's raw one.
   */
  readonly providerName?: string | undefined
  /**
   * Applies a request's model settings to the `LanguageModel`'s call. `effect/ai`'s
   * `LanguageModel` takes none: each provider reads its own config from context, e.g.
   * `OpenAiLanguageModel.withConfigOverride`. Called with the settings a request sets (not
   * when it sets none); without it, settings are ignored and a warning is logged the first
   * time each is set.
   */
  readonly withSettings?:
    | ((settings: ChatModel.ModelSettings) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>)
    | undefined
}

/**
 * A `ChatModel` on the `LanguageModel` in context. Each call builds the `effect/ai` prompt from
 * the neutral messages (tool calls and tool results keyed by the same call ids, a tool result's
 * `isError` as `isFailure`), sends our tools as dynamic tools whose JSON Schemas the provider
 * sends as they are (docs/decisions/135), and maps usage, finish reason and `AiError`s (an HTTP
 * error status the provider kept is classified like every other adapter's). Streaming uses
 * `LanguageModel.streamText`; an `error` part fails the stream with the server's error,
 * classified like an HTTP status (`overloaded_error` is transient). Interrupting a call aborts
 * its request. Each attempt is bounded by the timeouts. A stack overflow while the
 * `LanguageModel` encodes the request (a history nested too deep) is an `invalid-request`, not
 * a defect. The tool choice is passed on; model settings through `withSettings`; an agent's
 * `output` is asked for through a tool named `output.name`, whose call is the answer
 * (docs/providers.md).
 *
 * @example
 * ```ts
 * import type { LanguageModel } from "effect/ai"
 * import { Layer, Redacted } from "effect"
 * import { ChatModel } from "@agentfx/core"
 * import { AiChatModel } from "@agentfx/ai"
 *
 * // any Effect 4 provider's model, e.g. `OpenAiLanguageModel.layer({ model: "gpt-5.2" })` of `@effect/ai-openai`
 * declare const OpenAiModel: Layer.Layer<LanguageModel.LanguageModel>
 *
 * const apiKey = Redacted.make("sk-…")
 * const ModelLive = Layer.effect(ChatModel.ChatModel, AiChatModel.fromLanguageModel({ provider: "OpenAI", secrets: [apiKey] })).pipe(
 *   Layer.provide(OpenAiModel)
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
    const mask = maskError(Mask.make((options?.secrets ?? []).map(Redacted.value)))
    const timeouts = Timeout.resolve(options, provider)
    const tooDeep = Internal.unencodable(provider)
    const toModelError = (error: AiError.AiError) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(Internal.fromAiError(provider, now)(error)))
    /** A defect that is a stack overflow while encoding, as its `invalid-request`; any other defect stays one. */
    const overflowed = (defect: unknown) => Option.match(tooDeep(defect), { onNone: () => Effect.die(defect), onSome: Effect.fail })
    /** The call's options: tool-call resolution off, any tool call returned (the loop refuses the ones the agent has no tool for). */
    const unresolved = (request: ChatModel.ChatRequest) => ({
      prompt: Internal.toPrompt(request),
      disableToolCallResolution: true,
      toolCallValidation: "deferred"
    } as const)
    const modelGenerate = (request: ChatModel.ChatRequest) =>
      request.tools.length === 0
        ? model.generateText(unresolved(request))
        : model.generateText({ ...unresolved(request), toolkit: Internal.toolkitFor(request.tools), toolChoice: request.toolChoice })
    const modelStream = (request: ChatModel.ChatRequest) =>
      request.tools.length === 0
        ? model.streamText(unresolved(request))
        : model.streamText({ ...unresolved(request), toolkit: Internal.toolkitFor(request.tools), toolChoice: request.toolChoice })
    const warn = warnIgnored(
      provider,
      allFields,
      "effect/ai's LanguageModel takes no settings; give AiChatModel `withSettings` to apply them through your provider's config"
    )
    /** `withSettings` for the request's settings, when it is given and they set something. */
    const applied = (request: ChatModel.ChatRequest) =>
      options?.withSettings === undefined || request.settings === undefined || setFields(request.settings).length === 0
        ? undefined
        : options.withSettings(request.settings)
    const generateText = (request: ChatModel.ChatRequest) => {
      const apply = applied(request)
      const call = Effect.suspend(() => modelGenerate(request))
      return apply === undefined ? Effect.andThen(warn(request.settings), call) : apply(call)
    }
    /** The stream, run in the context `withSettings` makes. */
    const streamText = (request: ChatModel.ChatRequest) => {
      const apply = applied(request)
      const call = Stream.suspend(() => modelStream(request))
      return apply === undefined
        ? Stream.concat(Stream.fromEffectDrain(warn(request.settings)), call)
        : Stream.unwrap(apply(Effect.map(Effect.context<never>(), (context) => Stream.provideContext(call, context))))
    }

    const generate = (request: ChatModel.ChatRequest) =>
      Result.match(timeouts, {
        onFailure: Effect.fail,
        onSuccess: ({ request: requestTimeout }) =>
          generateText(request).pipe(
            Effect.catch(toModelError),
            Effect.catchDefect(overflowed),
            Effect.flatMap((response) => {
              const reasoning = response.reasoning.flatMap((part) => Internal.reasoningOf(part.text, part.metadata))
              const files: Array<Part.FilePart> = []
              for (const part of response.content) {
                if (part.type !== "file") continue
                const file = Internal.answerFileOf(provider, part)
                if (Result.isFailure(file)) return Effect.fail(file.failure)
                files.push(file.success)
              }
              return Effect.succeed<ChatModel.ChatResponse>({
                text: response.text,
                toolCalls: response.toolCalls.map(Internal.toolCall),
                finishReason: Internal.finishReason(response.finishReason),
                usage: Internal.usage(response.usage),
                provider: options?.providerName,
                providerFinishReasons: [response.finishReason],
                ...(reasoning.length === 0 ? {} : { reasoning }),
                ...(files.length === 0 ? {} : { files })
              })
            }),
            (attempt) => Timeout.request(attempt, requestTimeout, provider),
            (call) => ModelRetry.retry(call, options?.retry)
          )
      }).pipe(
        Effect.mapError(mask),
        Effect.withSpan("AiChatModel.generate", { attributes: { provider } })
      )

    const attempt = (request: ChatModel.ChatRequest, bounds: Timeout.Resolved) =>
      Stream.suspend(() => {
        const answer = new StreamFold({ provider, last: "finish part", usage: Internal.usageOfCounts })
        /** Streamed reasoning by part id: its text, and its metadata merged per provider (a signature comes last). */
        const reasoning = new Map<string, { text: string; metadata: { [provider: string]: unknown } }>()
        const reasoned = (id: string, delta: string, metadata: { readonly [provider: string]: unknown } | undefined) => {
          const known = reasoning.get(id) ?? { text: "", metadata: {} }
          known.text += delta
          for (const [key, value] of Object.entries(metadata ?? {})) known.metadata[key] = { ...(known.metadata[key] as object), ...(value as object) }
          reasoning.set(id, known)
          return known
        }
        const none = Effect.succeed<Array<ChatModel.StreamPart>>([])
        const parts = streamText(request).pipe(
          Stream.catch((error) => Stream.fromEffect(toModelError(error))),
          Stream.catchCause((cause) =>
            Result.match(Cause.findDefect(cause), {
              onFailure: () => Stream.failCause(cause),
              onSuccess: (defect) => Option.match(tooDeep(defect), { onNone: () => Stream.failCause(cause), onSome: Stream.fail })
            })
          ),
          (raw) => Timeout.idle(raw, bounds.idle, provider),
          Stream.mapEffect((part) => {
            switch (part.type) {
              case "text-delta": {
                const text = answer.addText(part.delta)
                return Effect.succeed(text.length > 0 ? [{ _tag: "TextDelta", text } as const] : [])
              }
              case "tool-call":
                answer.addCall({ id: part.id, name: part.name, args: undefined, input: part.params })
                return none
              case "reasoning-start":
              case "reasoning-delta":
                reasoned(part.id, part.type === "reasoning-delta" ? part.delta : "", part.metadata)
                return none
              case "reasoning-end": {
                const done = reasoned(part.id, "", part.metadata)
                for (const kept of Internal.reasoningOf(done.text, done.metadata)) answer.addReasoning(kept)
                return none
              }
              case "file": {
                const file = Internal.answerFileOf(provider, part)
                if (Result.isFailure(file)) return Effect.fail(file.failure)
                answer.addFile(file.success)
                return none
              }
              case "finish":
                answer.addUsage(Internal.usageCounts(part.usage))
                answer.finish(Internal.finishReason(part.reason), part.reason)
                answer.end()
                return none
              case "error":
                return Effect.fail(errorFromPayload({ provider, payload: part.error, where: "mid-stream" }))
              default:
                return none
            }
          }),
          Stream.flattenIterable
        )
        const done = Effect.suspend(() =>
          Effect.map(Effect.fromResult(answer.response()), (response): ChatModel.StreamPart => ({
            _tag: "Done",
            response: { ...response, provider: options?.providerName }
          }))
        )
        return Timeout.requestStream(Stream.concat(parts, Stream.fromEffect(done)), bounds.request, provider)
      })

    const stream = (request: ChatModel.ChatRequest): Stream.Stream<ChatModel.StreamPart, ChatModel.ModelError> =>
      Result.match(timeouts, {
        onFailure: (error) => Stream.fail(error),
        onSuccess: (bounds) => ModelRetry.retryStream(attempt(request, bounds), options?.retry)
      }).pipe(
        Stream.mapError(mask),
        Stream.withSpan("AiChatModel.stream", { attributes: { provider } })
      )

    return viaAnswerTool(provider, { model: options?.model, provider: options?.providerName, generate, stream })
  })

/**
 * `fromLanguageModel` as a Layer.
 *
 * @example
 * ```ts
 * import { LanguageModel } from "effect/ai"
 * import { Effect, Layer, Stream } from "effect"
 * import { AiChatModel } from "@agentfx/ai"
 *
 * // a LanguageModel of your own (here one that always answers "hello"), or any provider's
 * const Hello = Layer.effect(
 *   LanguageModel.LanguageModel,
 *   LanguageModel.make({
 *     generateText: () =>
 *       Effect.succeed([
 *         { type: "text", text: "hello" },
 *         { type: "finish", reason: "stop", usage: { inputTokens: { total: 3 }, outputTokens: { total: 1 } } }
 *       ]),
 *     streamText: () => Stream.empty
 *   })
 * )
 * const ModelLive = AiChatModel.layer({ provider: "Hello" }).pipe(Layer.provide(Hello))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<ChatModel.ChatModel, never, LanguageModel.LanguageModel> =>
  Layer.effect(ChatModel.ChatModel, fromLanguageModel(options))
