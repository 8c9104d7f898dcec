/**
 * Lifecycle events of a run, for streams, logs and UIs. Emitting costs nothing when nobody
 * listens; a failing or slow observer never breaks or stalls a run.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import type * as AgentExit from "./AgentExit.js"
import type { FinishReason, Usage } from "./ChatModel.js"
import type { JsonValue } from "./Json.js"
import type { FilePart } from "./Part.js"
import { sinkKey, sinksOf } from "./internal/sinks.js"
import type { ToolFailure } from "./ToolError.js"

/**
 * What every event carries: the run, the conversation, and the time from `Clock` (epoch
 * milliseconds; virtual under `TestClock`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Meta {
  readonly runId: string
  readonly conversationId: string
  readonly timestamp: number
}

/**
 * A run started (`Agent.run`).
 *
 * @since 0.1.0
 * @category models
 */
export interface RunStarted extends Meta {
  readonly _tag: "RunStarted"
  readonly agent: string
  /** The input's text (of its text parts, when it was given as parts). */
  readonly input: string
  /** The input's files, when it had some. */
  readonly files?: ReadonlyArray<FilePart>
}

/**
 * A paused run was resumed (`Agent.resume`).
 *
 * @since 0.1.0
 * @category models
 */
export interface RunResumed extends Meta {
  readonly _tag: "RunResumed"
  readonly agent: string
  readonly decision: string
}

/**
 * Why a model call is made: the agent's own call (`answer`), or the call that summarizes the
 * conversation's older messages under a `ContextWindow.summarize` policy (`compaction`: its
 * text is the summary, never streamed as `TextDelta`s; a UI showing the answer skips it).
 *
 * @since 0.2.0
 * @category models
 */
export type Purpose = "answer" | "compaction"

/**
 * The loop is about to call the model. `messages`: how many messages it is sent.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelCalled extends Meta {
  readonly _tag: "ModelCalled"
  readonly iteration: number
  readonly messages: number
  readonly purpose: Purpose
}

/**
 * A piece of the model's text, as it streams.
 *
 * @since 0.1.0
 * @category models
 */
export interface TextDelta extends Meta {
  readonly _tag: "TextDelta"
  readonly iteration: number
  readonly text: string
}

/**
 * The model answered. `files`: the files it answered with (images it generated), when it did —
 * kept in the history's assistant message too (decision 164). `reasoning`: its reasoning as text
 * a person can read, when it gave some (what a UI shows; decision 165).
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelResponded extends Meta {
  readonly _tag: "ModelResponded"
  readonly iteration: number
  readonly purpose: Purpose
  readonly text: string
  readonly toolCalls: number
  readonly finishReason: FinishReason
  readonly usage: Usage
  readonly durationMillis: number
  /** Which model answered, when known (`ChatResponse.model`: e.g. the step of `ChatModel.fallback` that answered). */
  readonly model?: string | undefined
  /** Its provider, when known (`ChatResponse.provider`). */
  readonly provider?: string | undefined
  /** The files the model answered with (`ChatResponse.files`), when there were some. */
  readonly files?: ReadonlyArray<FilePart> | undefined
  /**
   * The model's reasoning as text (`ChatResponse.reasoning`: each part's `text`, those that have
   * some, joined by a blank line), when it gave readable reasoning. Encrypted or redacted
   * reasoning has none: its parts stay in the history, for the provider only.
   */
  readonly reasoning?: string | undefined
}

/**
 * The conversation was compacted before a model call, under the agent's (or run's)
 * `ContextWindow` policy: a `Compaction` entry was added to the history, and from now on the
 * model is sent the view it derives. `replaces`: how many history entries, from the start,
 * the view no longer sends; `summarized`: whether a summary stands for them (else they were
 * left out); `tokensBefore` and `tokensAfter`: the estimated input of the model call
 * without and with the compaction.
 *
 * @since 0.2.0
 * @category models
 */
export interface ContextCompacted extends Meta {
  readonly _tag: "ContextCompacted"
  readonly iteration: number
  readonly replaces: number
  readonly summarized: boolean
  readonly tokensBefore: number
  readonly tokensAfter: number
}

/**
 * The model's answer asked for more tool calls than the agent's `limits.batchWidth`: the first
 * `batchWidth` go on as a batch (gated, then run); each call past them is not run, and the
 * model reads `Not run: a batch runs at most <batchWidth> calls; call fewer tools at once` as its
 * result (docs/limits.md). Emitted once per such answer, after `ModelResponded` and before any
 * call of the batch is gated or starts.
 *
 * @since 0.2.0
 * @category models
 */
export interface BatchTruncated extends Meta {
  readonly _tag: "BatchTruncated"
  readonly iteration: number
  /** The agent's `limits.batchWidth`: how many of the calls go on. */
  readonly batchWidth: number
  /** How many calls the answer asked for. */
  readonly calls: number
  /** The calls not run, in the answer's order, by the ids the history gives them. */
  readonly notRun: ReadonlyArray<{ readonly callId: string; readonly toolName: string }>
}

/**
 * A tool call starts (after its gate let it through).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolStarted extends Meta {
  readonly _tag: "ToolStarted"
  readonly callId: string
  readonly toolName: string
  readonly args: JsonValue
}

/**
 * A tool call succeeded; `value` is what the model is shown, with `files` when the tool
 * returned some.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolSucceeded extends Meta {
  readonly _tag: "ToolSucceeded"
  readonly callId: string
  readonly toolName: string
  readonly value: JsonValue
  readonly files?: ReadonlyArray<FilePart>
  readonly durationMillis: number
}

/**
 * A tool call failed (not by timing out).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolFailed extends Meta {
  readonly _tag: "ToolFailed"
  readonly callId: string
  readonly toolName: string
  readonly error: ToolFailure
  readonly durationMillis: number
}

/**
 * A tool call timed out (after its retries, if any).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolTimedOut extends Meta {
  readonly _tag: "ToolTimedOut"
  readonly callId: string
  readonly toolName: string
  readonly timeoutMillis: number
  readonly durationMillis: number
}

/**
 * The run paused; `exit` is what `Agent.run` returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunPaused extends Meta {
  readonly _tag: "RunPaused"
  readonly exit: AgentExit.Paused
}

/**
 * The run completed; `exit` is what `Agent.run` returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunCompleted extends Meta {
  readonly _tag: "RunCompleted"
  readonly exit: AgentExit.Completed
}

/**
 * Every lifecycle event.
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * const line = (event: AgentEvent.AgentEvent) =>
 *   event._tag === "ToolStarted" ? `→ ${event.toolName}(${JSON.stringify(event.args)})` : event._tag
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type AgentEvent =
  | RunStarted
  | RunResumed
  | ModelCalled
  | TextDelta
  | ModelResponded
  | ContextCompacted
  | BatchTruncated
  | ToolStarted
  | ToolSucceeded
  | ToolFailed
  | ToolTimedOut
  | RunPaused
  | RunCompleted

const Events = Data.taggedEnum<AgentEvent>()

/**
 * Builds a `RunStarted` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * const event = AgentEvent.RunStarted({ runId: "r1", conversationId: "c1", timestamp: 0, agent: "weather", input: "Weather in Oslo?" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const RunStarted: (fields: Omit<RunStarted, "_tag">) => RunStarted = Events.RunStarted

/**
 * Builds a `RunResumed` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * const event = AgentEvent.RunResumed({ runId: "r1", conversationId: "c1", timestamp: 0, agent: "weather", decision: "ApproveAll" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const RunResumed: (fields: Omit<RunResumed, "_tag">) => RunResumed = Events.RunResumed

/**
 * Builds a `ModelCalled` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * const event = AgentEvent.ModelCalled({ runId: "r1", conversationId: "c1", timestamp: 0, iteration: 1, messages: 1, purpose: "answer" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const ModelCalled: (fields: Omit<ModelCalled, "_tag">) => ModelCalled = Events.ModelCalled

/**
 * Builds a `TextDelta` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * const event = AgentEvent.TextDelta({ runId: "r1", conversationId: "c1", timestamp: 0, iteration: 1, text: "Sun" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const TextDelta: (fields: Omit<TextDelta, "_tag">) => TextDelta = Events.TextDelta

/**
 * Builds a `ModelResponded` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * const event = AgentEvent.ModelResponded({
 *   runId: "r1", conversationId: "c1", timestamp: 0, iteration: 1, purpose: "answer", text: "", toolCalls: 1, finishReason: "tool-calls",
 *   usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, durationMillis: 120
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const ModelResponded: (fields: Omit<ModelResponded, "_tag">) => ModelResponded = Events.ModelResponded

/**
 * Builds a `ContextCompacted` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * const event = AgentEvent.ContextCompacted({
 *   runId: "r1", conversationId: "c1", timestamp: 0, iteration: 4, replaces: 12, summarized: true, tokensBefore: 9000, tokensAfter: 2500
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const ContextCompacted: (fields: Omit<ContextCompacted, "_tag">) => ContextCompacted = Events.ContextCompacted

/**
 * Builds a `BatchTruncated` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * const event = AgentEvent.BatchTruncated({
 *   runId: "r1", conversationId: "c1", timestamp: 0, iteration: 1,
 *   batchWidth: 2, calls: 3, notRun: [{ callId: "c3", toolName: "lookup" }]
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const BatchTruncated: (fields: Omit<BatchTruncated, "_tag">) => BatchTruncated = Events.BatchTruncated

/**
 * Builds a `ToolStarted` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * const event = AgentEvent.ToolStarted({ runId: "r1", conversationId: "c1", timestamp: 0, callId: "t1", toolName: "get_weather", args: { city: "Oslo" } })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const ToolStarted: (fields: Omit<ToolStarted, "_tag">) => ToolStarted = Events.ToolStarted

/**
 * Builds a `ToolSucceeded` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * const event = AgentEvent.ToolSucceeded({ runId: "r1", conversationId: "c1", timestamp: 0, callId: "t1", toolName: "get_weather", value: "Sunny", durationMillis: 3 })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const ToolSucceeded: (fields: Omit<ToolSucceeded, "_tag">) => ToolSucceeded = Events.ToolSucceeded

/**
 * Builds a `ToolFailed` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent, ToolError } from "@agentfx/core"
 *
 * const event = AgentEvent.ToolFailed({
 *   runId: "r1", conversationId: "c1", timestamp: 0, callId: "t1", toolName: "get_weather",
 *   error: ToolError.semantic("unknown city"), durationMillis: 3
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const ToolFailed: (fields: Omit<ToolFailed, "_tag">) => ToolFailed = Events.ToolFailed

/**
 * Builds a `ToolTimedOut` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * const event = AgentEvent.ToolTimedOut({ runId: "r1", conversationId: "c1", timestamp: 0, callId: "t1", toolName: "get_weather", timeoutMillis: 5000, durationMillis: 5000 })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const ToolTimedOut: (fields: Omit<ToolTimedOut, "_tag">) => ToolTimedOut = Events.ToolTimedOut

/**
 * Builds a `RunPaused` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent, type AgentExit } from "@agentfx/core"
 *
 * declare const exit: AgentExit.Paused
 * const event = AgentEvent.RunPaused({ runId: exit.runId, conversationId: exit.conversationId, timestamp: 0, exit })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const RunPaused: (fields: Omit<RunPaused, "_tag">) => RunPaused = Events.RunPaused

/**
 * Builds a `RunCompleted` event: for tests of listeners and UIs (the runtime emits its own).
 *
 * @example
 * ```ts
 * import { AgentEvent, type AgentExit } from "@agentfx/core"
 *
 * declare const exit: AgentExit.Completed
 * const event = AgentEvent.RunCompleted({ runId: exit.runId, conversationId: exit.conversationId, timestamp: 0, exit })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const RunCompleted: (fields: Omit<RunCompleted, "_tag">) => RunCompleted = Events.RunCompleted

/**
 * Pattern-matches an event on its tag.
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * declare const event: AgentEvent.AgentEvent
 * const line = AgentEvent.match(event, {
 *   RunStarted: (e) => `start: ${e.input}`,
 *   RunResumed: (e) => `resumed with ${e.decision}`,
 *   ModelCalled: (e) => `model call #${e.iteration}`,
 *   TextDelta: (e) => e.text,
 *   ModelResponded: (e) => `model: ${e.toolCalls} tool call(s)`,
 *   ContextCompacted: (e) => `compacted: ${e.tokensBefore} → ${e.tokensAfter} tokens`,
 *   BatchTruncated: (e) => `${e.notRun.length} of ${e.calls} calls not run (batchWidth ${e.batchWidth})`,
 *   ToolStarted: (e) => `→ ${e.toolName}`,
 *   ToolSucceeded: (e) => `✓ ${e.toolName}`,
 *   ToolFailed: (e) => `✗ ${e.toolName}: ${e.error.message}`,
 *   ToolTimedOut: (e) => `⏱ ${e.toolName}`,
 *   RunPaused: (e) => `paused (${e.exit.kind})`,
 *   RunCompleted: (e) => `done: ${e.exit.text}`
 * })
 * ```
 *
 * @since 0.1.0
 * @category pattern matching
 */
export const match = Events.$match

/**
 * A type guard for one kind of event.
 *
 * @example
 * ```ts
 * import { AgentEvent } from "@agentfx/core"
 *
 * declare const events: ReadonlyArray<AgentEvent.AgentEvent>
 * const tools = events.filter(AgentEvent.is("ToolStarted")).map((e) => e.toolName)
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const is = Events.$is

/**
 * An event without its `Meta`, as the loop builds it.
 *
 * @since 0.1.0
 * @category models
 */
export type Payload = AgentEvent extends infer E ? E extends AgentEvent ? Omit<E, keyof Meta> : never : never

/**
 * A receiver of events: synchronous and non-blocking. It is called on the run's fiber, as the
 * event happens: a sink that takes time takes it from the run. `AgentEvent.layer` (a buffer and
 * a fiber of its own per observer) and `Agent.stream` (a buffer the consumer drains) are the
 * ways to observe slowly.
 *
 * @since 0.1.0
 * @category models
 */
export type Sink = (event: AgentEvent) => void

/**
 * The receivers of the events of the runs in this fiber. Empty by default, so the loop builds no
 * event at all. `AgentEvent.layer`, `AgentEvent.withSink` and `Agent.stream` add receivers; the
 * receivers of Layers built side by side (`Layer.mergeAll`) all receive.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentEvent } from "@agentfx/core"
 *
 * const listening = Effect.map(AgentEvent.sinks, (sinks) => sinks.length > 0)
 * ```
 *
 * @since 0.1.0
 * @category sinks
 */
export const sinks: Effect.Effect<ReadonlyArray<Sink>> = Effect.map(Effect.context<never>(), sinksOf)

/**
 * Runs `effect` with `sink` receiving the events of the runs in it (besides the receivers
 * already there).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, AgentEvent } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * const events: Array<AgentEvent.AgentEvent> = []
 * const program = Agent.run(agent, { input: "hi" }).pipe(AgentEvent.withSink((event) => void events.push(event)))
 * ```
 *
 * @since 0.1.0
 * @category sinks
 */
export const withSink = (sink: Sink) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, sinkKey(), sink)

/**
 * Options of an observer.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObserverOptions {
  /** Events buffered for a slow observer before newer ones are dropped (default 4096). */
  readonly capacity?: number
}

/**
 * `AgentEvent.layer` was given options it cannot honour.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { AgentEvent } from "@agentfx/core"
 *
 * const program = Layer.build(AgentEvent.layer(() => Effect.void, { capacity: 0 })).pipe(
 *   Effect.catchTag("InvalidObserverOptions", (e) => Effect.logError(e.message)),
 *   Effect.scoped
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidObserverOptions extends Data.TaggedError("InvalidObserverOptions")<{ readonly problem: string }> {
  override get message(): string {
    return `Invalid observer options: ${this.problem}`
  }
}

/**
 * Observes the events of every run that uses this Layer. Each observer has its own buffer
 * and fiber: an observer that fails or dies is logged and keeps receiving; one that is
 * slow, or never returns, loses the events beyond its buffer (logged once) and never
 * stalls the run.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentEvent } from "@agentfx/core"
 *
 * const LogEvents = AgentEvent.layer((event) => Effect.logInfo(event._tag))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  observer: (event: AgentEvent) => Effect.Effect<void, unknown>,
  options?: ObserverOptions
): Layer.Layer<never, InvalidObserverOptions> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const capacity = options?.capacity ?? 4096
      if (!Number.isInteger(capacity) || capacity < 1) {
        return yield* Effect.fail(new InvalidObserverOptions({ problem: `capacity ${capacity} is not a positive integer` }))
      }
      const queue = yield* Queue.dropping<AgentEvent>(capacity)
      let dropped = 0
      let warned = false
      const warnOnce = Effect.suspend(() => {
        if (dropped === 0 || warned) return Effect.void
        warned = true
        return Effect.logWarning(`An agent event observer is too slow: ${dropped} event(s) dropped so far`)
      })
      yield* Queue.take(queue).pipe(
        Effect.tap(() => warnOnce),
        Effect.flatMap((event) => Effect.suspend(() => observer(event))),
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logWarning("An agent event observer failed", cause)
        ),
        Effect.forever,
        // waiting for events once the Layer is built, not from the first time its builder yields
        Effect.forkScoped({ startImmediately: true })
      )
      yield* Effect.addFinalizer(() => Queue.shutdown(queue))
      const sink: Sink = (event) => {
        if (!Queue.offerUnsafe(queue, event)) dropped += 1
      }
      return Context.make(sinkKey(), sink)
    })
  )
