/**
 * The model port: neutral messages and tool definitions in, text and tool calls out.
 * Adapters for real providers live in `@agentfx/ai`; `ScriptedChatModel` serves tests.
 *
 * @since 0.1.0
 */
import type { Duration, ExecutionPlan, JsonSchema, Layer, Scope } from "effect"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Fallback from "./internal/fallback.js"
import type { CompactionMessage, Message } from "./Message.js"
import type { FilePart, ReasoningPart } from "./Part.js"
import type { ToolCall } from "./ToolCall.js"

/**
 * A tool as a model provider is told about it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema.JsonSchema
}

/**
 * Whether the model may, must, or must not call tools, or must call one tool.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolChoice = "auto" | "none" | "required" | { readonly tool: string }

/**
 * How the model samples and how long it may answer; every field is optional, and one left
 * out is the provider's default. Set per agent and per run (`Agent.make({ settings })`,
 * `Agent.run(agent, { settings })`; the run's win field by field), passed by every adapter in
 * its provider's wire shape (`docs/providers.md` says which provider ignores what).
 *
 * @example
 * ```ts
 * import type { ChatModel } from "@agentfx/core"
 *
 * const precise: ChatModel.ModelSettings = { temperature: 0, maxOutputTokens: 500, stop: ["\n\n"], parallelToolCalls: false }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelSettings {
  /** Sampling temperature, from 0 to 2. */
  readonly temperature?: number
  /** Nucleus sampling: the probability mass to sample from, in (0, 1]. */
  readonly topP?: number
  /** The most tokens of one answer. */
  readonly maxOutputTokens?: number
  /** Sequences that end the answer. */
  readonly stop?: ReadonlyArray<string>
  /** `false`: at most one tool call per answer. */
  readonly parallelToolCalls?: boolean
}

/**
 * The shape of a final answer: JSON matching `schema` (an object schema, from the agent's
 * `output`). Adapters ask their provider for it natively.
 *
 * @since 0.1.0
 * @category models
 */
export interface OutputFormat {
  readonly name: string
  readonly schema: JsonSchema.JsonSchema
}

/**
 * A message a model is sent: any message but a compaction entry, which stays in the history
 * (the loop sends what `ContextWindow.view` derives from it).
 *
 * @example
 * ```ts
 * import { ChatModel, Message } from "@agentfx/core"
 *
 * const sent: ReadonlyArray<ChatModel.ModelMessage> = [Message.user("Weather in Oslo?")]
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type ModelMessage = Exclude<Message, CompactionMessage>

/**
 * One model call.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatRequest {
  /** The agent's system prompt, if any. */
  readonly system: string | undefined
  /** The conversation as the model is sent it, oldest first: the history, or its view under the agent's context policy. */
  readonly messages: ReadonlyArray<ModelMessage>
  readonly tools: ReadonlyArray<ToolDefinition>
  readonly toolChoice: ToolChoice
  /** Sampling and length settings (absent: the provider's defaults). */
  readonly settings?: ModelSettings | undefined
  /** The final answer must be JSON of this shape (absent: free text). */
  readonly output?: OutputFormat | undefined
  /** The run that asks (absent outside a run): for logs, caches, and scripts that follow one run. */
  readonly runId?: string | undefined
}

/**
 * Why the model stopped. `refusal`: the model declined to answer (OpenAI's `refusal`
 * content, Anthropic's `refusal` stop reason); the response's `text` is the refusal.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { ChatModel } from "@agentfx/core"
 *
 * Schema.is(ChatModel.FinishReason)("tool-calls") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const FinishReason = Schema.Literals([
  "stop",
  "tool-calls",
  "length",
  "content-filter",
  "refusal",
  "error",
  "other",
  "unknown"
])

/**
 * @since 0.1.0
 * @category models
 */
export type FinishReason = typeof FinishReason.Type

/**
 * Token counts of one call, or of a whole run when summed. `inputTokens` counts every token
 * of the prompt, cached or not; `outputTokens` every generated token, reasoning included;
 * `totalTokens` is their sum (the rule of every adapter of `@agentfx/ai`).
 *
 * @example
 * ```ts
 * import { ChatModel } from "@agentfx/core"
 *
 * const usage: ChatModel.Usage = { inputTokens: 12, outputTokens: 3, totalTokens: 15 }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Usage = Schema.Struct({
  inputTokens: Schema.Number,
  outputTokens: Schema.Number,
  totalTokens: Schema.Number
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Usage extends Schema.Schema.Type<typeof Usage> {}

/**
 * No tokens.
 *
 * @example
 * ```ts
 * import { ChatModel } from "@agentfx/core"
 *
 * ChatModel.addUsage(ChatModel.emptyUsage, ChatModel.emptyUsage) // all zeros
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const emptyUsage: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 }

/**
 * Whether a value is a token count: a finite number, not negative (`1e400` in JSON reads as
 * `Infinity`). A count that is not one is taken as not sent — 0 — by the loop and by every
 * adapter of `@agentfx/ai` (decision 066).
 *
 * @example
 * ```ts
 * import { ChatModel } from "@agentfx/core"
 *
 * ChatModel.isTokenCount(12) // true
 * ChatModel.isTokenCount(Number.POSITIVE_INFINITY) // false
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const isTokenCount = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && value >= 0

/**
 * The sum of two usages (token counts, as {@link isTokenCount} says), each count saturating at
 * `Number.MAX_VALUE`: a sum too large for a number stays the largest finite one, never
 * `Infinity` — which JSON writes as `null`, so a run's checkpoint could not be read back. The
 * run's usage is summed here only (decision 059).
 *
 * @example
 * ```ts
 * import { ChatModel } from "@agentfx/core"
 *
 * ChatModel.addUsage(ChatModel.emptyUsage, { inputTokens: 3, outputTokens: 2, totalTokens: 5 })
 * const huge = { inputTokens: 1e308, outputTokens: 0, totalTokens: 1e308 }
 * ChatModel.addUsage(huge, huge).totalTokens // Number.MAX_VALUE
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const addUsage = (a: Usage, b: Usage): Usage =>
  isZero(b) ? a : isZero(a) ? b : {
    inputTokens: saturated(a.inputTokens + b.inputTokens),
    outputTokens: saturated(a.outputTokens + b.outputTokens),
    totalTokens: saturated(a.totalTokens + b.totalTokens)
  }

const saturated = (sum: number) => Number.isFinite(sum) ? sum : Number.MAX_VALUE

const isZero = (usage: Usage) => usage.inputTokens === 0 && usage.outputTokens === 0 && usage.totalTokens === 0

/**
 * What the model answered.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChatResponse {
  readonly text: string
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly finishReason: FinishReason
  readonly usage: Usage
  /**
   * Who answered, as OpenTelemetry's GenAI conventions name providers (`"openai"`,
   * `"anthropic"`, …), when the adapter knows: the model call's `gen_ai.provider.name`.
   */
  readonly provider?: string | undefined
  /**
   * Which model answered (its service's `model`), when known: set by {@link fallback} to the
   * step that answered, and then the model call's `gen_ai.request.model`.
   */
  readonly model?: string | undefined
  /**
   * Why the model stopped, in the provider's own words (`"end_turn"`, `"tool_calls"`, …), when
   * the adapter has them: the model call's `gen_ai.response.finish_reasons` (else `[finishReason]`).
   */
  readonly providerFinishReasons?: ReadonlyArray<string> | undefined
  /**
   * The model's reasoning that its provider requires back (Anthropic's thinking blocks, OpenAI's
   * encrypted reasoning items), each marked with the provider that made it: the loop keeps it in
   * the assistant message, and an adapter sends back only its own provider's.
   */
  readonly reasoning?: ReadonlyArray<ReasoningPart> | undefined
  /**
   * Files the model answered with (images it generated: OpenAI's `image_generation_call`, an
   * `images` list of a Chat Completions server, `effect/ai` file parts), in the order they came:
   * the loop keeps them in the assistant message, after its text (decision 164). Each must be a
   * valid `Part.FilePart` (a run's checkpoint holds it).
   */
  readonly files?: ReadonlyArray<FilePart> | undefined
}

/**
 * A piece of a streamed answer: text as it arrives, then the whole response once.
 *
 * @since 0.1.0
 * @category models
 */
export type StreamPart =
  | { readonly _tag: "TextDelta"; readonly text: string }
  | { readonly _tag: "Done"; readonly response: ChatResponse }

/**
 * Why a model call failed. `rate-limited`, `unavailable` (5xx) and `network` are transient
 * (adapters retry them); the others fail the run.
 *
 * @example
 * ```ts
 * import { ChatModel } from "@agentfx/core"
 *
 * new ChatModel.ModelError({ reason: "unavailable", message: "HTTP 503", status: 503 }).isTransient // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelErrorReason = Schema.Literals([
  "rate-limited",
  "unavailable",
  "network",
  "invalid-request",
  "unauthorized",
  "invalid-response",
  "script-exhausted",
  "other"
])

/**
 * A model call failed.
 *
 * @example
 * ```ts
 * import { ChatModel } from "@agentfx/core"
 *
 * const error = new ChatModel.ModelError({ reason: "rate-limited", message: "HTTP 429", status: 429 })
 * error.isTransient // true
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ModelError extends Schema.TaggedError<ModelError>("@agentfx/core/ModelError")("ModelError", {
  reason: ModelErrorReason,
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  retryAfterMillis: Schema.optional(Schema.Number)
}) {
  /**
   * True when trying again may succeed.
   *
   * @since 0.1.0
   */
  get isTransient(): boolean {
    return this.reason === "rate-limited" || this.reason === "unavailable" || this.reason === "network"
  }
}

/**
 * The model the loop talks to. Provide one Layer: a provider adapter from `@agentfx/ai`,
 * or `ScriptedChatModel.layer` in tests and offline examples.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ChatModel } from "@agentfx/core"
 *
 * const EchoModel = Layer.succeed(ChatModel.ChatModel, ChatModel.fromGenerate((request) =>
 *   Effect.succeed({
 *     text: `you said ${request.messages.length} things`,
 *     toolCalls: [],
 *     finishReason: "stop",
 *     usage: ChatModel.emptyUsage
 *   })
 * ))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class ChatModel extends Context.Service<ChatModel, ChatModel.Service>()("@agentfx/core/ChatModel") {}

/**
 * @since 0.1.0
 * @category services
 */
export declare namespace ChatModel {
  /**
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /** The model's name, for telemetry (`gen_ai.request.model`), when the adapter knows it. */
    readonly model?: string | undefined
    /**
     * Who answers, as OpenTelemetry's GenAI conventions name providers (`"openai"`, …), when the
     * adapter knows it: the model call's `gen_ai.provider.name`, set before the call, so that a
     * call that fails carries it too.
     */
    readonly provider?: string | undefined
    /** One model call. Interrupting it must abort the underlying request. */
    readonly generate: (request: ChatRequest) => Effect.Effect<ChatResponse, ModelError>
    /**
     * The same call, streamed: `TextDelta`s as text arrives, then exactly one `Done` with
     * the whole response (text, tool calls, finish reason, usage). Interrupting the stream
     * must abort the underlying request.
     */
    readonly stream: (request: ChatRequest) => Stream.Stream<StreamPart, ModelError>
    /** Set by `fromGenerate`: `stream` does not deliver text incrementally. */
    readonly [NotStreaming]?: true
  }
}

/**
 * A model that does not stream: its `stream` emits the whole response as one `TextDelta`
 * (when there is text) and the `Done`.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ChatModel } from "@agentfx/core"
 *
 * const Echo = Layer.succeed(ChatModel.ChatModel, ChatModel.fromGenerate((request) =>
 *   Effect.succeed({ text: `${request.messages.length} messages`, toolCalls: [], finishReason: "stop", usage: ChatModel.emptyUsage })
 * ))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromGenerate = (
  generate: (request: ChatRequest) => Effect.Effect<ChatResponse, ModelError>
): ChatModel.Service => ({
  [NotStreaming]: true,
  generate,
  stream: (request) =>
    Stream.fromIterableEffect(Effect.map(generate(request), (response): Array<StreamPart> =>
      response.text.length > 0
        ? [{ _tag: "TextDelta", text: response.text }, { _tag: "Done", response }]
        : [{ _tag: "Done", response }]
    ))
})

/**
 * Marks a service whose `stream` is derived from `generate` (see {@link fromGenerate}): the
 * loop then calls `generate` directly — an Effect `Stream` costs ~0.2 ms per model call —
 * and emits the text as one `TextDelta`.
 *
 * @since 0.1.0
 * @category symbols
 */
export const NotStreaming: unique symbol = Symbol.for("@agentfx/core/ChatModel/NotStreaming")

/**
 * True when the model delivers text incrementally.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatModel } from "@agentfx/core"
 *
 * const model = ChatModel.fromGenerate(() => Effect.die("unused"))
 * ChatModel.streams(model) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const streams = (model: ChatModel.Service): boolean => !(NotStreaming in model)

/**
 * A model that only streams: its `generate` runs the stream and returns the `Done` response.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { ChatModel } from "@agentfx/core"
 *
 * const model = ChatModel.fromStream(() =>
 *   Stream.make<Array<ChatModel.StreamPart>>(
 *     { _tag: "TextDelta", text: "Hel" },
 *     { _tag: "TextDelta", text: "lo" },
 *     { _tag: "Done", response: { text: "Hello", toolCalls: [], finishReason: "stop", usage: ChatModel.emptyUsage } }
 *   )
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromStream = (
  stream: (request: ChatRequest) => Stream.Stream<StreamPart, ModelError>
): ChatModel.Service => ({
  stream,
  generate: (request) =>
    Stream.runFoldEffect(stream(request), (): ChatResponse | undefined => undefined, (done, part) =>
      Effect.succeed(part._tag === "Done" ? part.response : done)).pipe(
        Effect.flatMap((response) =>
          response === undefined
            ? Effect.fail(new ModelError({ reason: "invalid-response", message: "the model's stream ended without a response" }))
            : Effect.succeed(response)
        )
      )
})

/**
 * A model that falls back to other models when a call fails: a Layer over an `ExecutionPlan`
 * whose steps each provide a `ChatModel` (any adapter's Layer, or a built context). A call
 * tries the first step's model — `attempts` times, as its `schedule` spaces them, while its
 * `while` says so of the `ModelError` — then the next step's, whose `while` decides whether
 * that error is one to fall back on; the last error fails the call. Each step's Layer is built
 * once, with this Layer (not per call); only typed `ModelError`s move the plan on (a defect or
 * an interruption ends the call at once), and a `while` that fails is a defect. A streamed call
 * is retried or moved on only until its first part reached the caller: text already shown is
 * never restarted on another model — the failure then ends the stream (decision 019). The
 * response says which model answered (`ChatResponse.model`, `provider`: the answering step's),
 * and so do the model call's span (`gen_ai.request.model`, `gen_ai.provider.name`) and its
 * `ModelResponded` event; under a tracer each attempt has its own `agentfx.model.attempt` span.
 *
 * **The plan owns the retries.** Each attempt is one call of its step's model, made with
 * {@link RetriedByCaller} set: the adapters of `@agentfx/ai` then send one request and leave
 * their own `retry` unused, so a step's `attempts` is the number of requests its model gets. A
 * step's next attempt waits the longer of its `schedule`'s delay and the wait the failed
 * request's server asked for (`ModelError.retryAfterMillis`, from `Retry-After`); a server that
 * asks for more than `options.maxRetryAfter` (default 60 seconds) is not tried again: the plan
 * moves on to its next step at once. Moving on to the next step waits for no `Retry-After` (it
 * was another server's); it is spaced by that step's `schedule`, as `ExecutionPlan` does.
 *
 * @example
 * ```ts
 * import { ExecutionPlan, Layer, Schedule } from "effect"
 * import { ChatModel } from "@agentfx/core"
 *
 * declare const Primary: Layer.Layer<ChatModel.ChatModel>
 * declare const Secondary: Layer.Layer<ChatModel.ChatModel>
 *
 * // the primary: 2 requests at most, 1 s apart (longer when its Retry-After asks for up to 60 s),
 * // while the failure may pass; then the secondary: 1 request, for any failure but a refused one
 * const ModelLive = ChatModel.fallback(ExecutionPlan.make(
 *   { provide: Primary, attempts: 2, schedule: Schedule.spaced("1 second"), while: (e: ChatModel.ModelError) => e.isTransient },
 *   { provide: Secondary, while: (e: ChatModel.ModelError) => e.reason !== "invalid-request" }
 * ))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const fallback = <I, E, R>(
  plan: ExecutionPlan.ExecutionPlan<{ provides: ChatModel; input: I; error: E; requirements: R }> & TakesModelError<I>,
  options?: FallbackOptions
): Layer.Layer<ChatModel, E, Exclude<R, Scope.Scope>> =>
  Fallback.make(ChatModel, NotStreaming, RetriedByCaller, plan as Fallback.Plan<E, R>, options)

/**
 * Options of {@link fallback}.
 *
 * @since 0.2.0
 * @category models
 */
export interface FallbackOptions {
  /**
   * The longest `Retry-After` a step waits for before trying its model again; a server asking
   * for longer (a spent daily quota, say) moves the plan on to its next step at once. Default
   * 60 seconds, as the adapters' own `retry.maxRetryAfter`.
   */
  readonly maxRetryAfter?: Duration.Input | undefined
}

/**
 * True while the caller retries this model call itself: set by {@link fallback} for each attempt
 * of its plan. A model that retries transient failures on its own (every adapter of
 * `@agentfx/ai`, through `ModelRetry`) then makes one attempt and fails with its error, so that
 * the plan's `attempts` count requests and its waits are the only ones. Default `false`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatModel } from "@agentfx/core"
 *
 * // a model of your own that retries, unless a plan retries it
 * declare const once: Effect.Effect<ChatModel.ChatResponse, ChatModel.ModelError>
 * const call = Effect.flatMap(ChatModel.RetriedByCaller, (byCaller) => byCaller ? once : Effect.retry(once, { times: 2 }))
 * ```
 *
 * @since 0.2.0
 * @category references
 */
export const RetriedByCaller: Context.Reference<boolean> = Context.Reference<boolean>("@agentfx/core/ChatModel/RetriedByCaller", {
  defaultValue: () => false
})

/**
 * What {@link fallback} asks of a plan's steps: their `while` and `schedule` take the failed
 * call's `ModelError` (or anything, `unknown`).
 *
 * @since 0.2.0
 * @category type-level
 */
export type TakesModelError<I> = [ModelError] extends [I] ? unknown
  : { readonly "a step's while and schedule must take a ChatModel.ModelError": I }
