/**
 * Middleware wraps four levels of a run — the turn, each iteration, each model call, each
 * tool call — as `(input, next) => Effect`. Several middlewares compose as an onion in
 * declaration order: the first declared is the outermost.
 *
 * @since 0.1.0
 */
import type { Effect, Option } from "effect"
import type { ResumeError, RunError } from "./AgentError.js"
import type { Purpose } from "./AgentEvent.js"
import type * as AgentExit from "./AgentExit.js"
import type { ChatRequest, ChatResponse, ModelError } from "./ChatModel.js"
import type { Result, ToolCall } from "./ToolCall.js"
import type * as Toolkit from "./Toolkit.js"

/**
 * A turn: one `Agent.run`, or one `Agent.resume`.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnInput {
  readonly agent: string
  readonly runId: string
  readonly conversationId: string
  readonly kind: "run" | "resume"
}

/**
 * One iteration: a model call and the batch it asks for.
 *
 * @since 0.1.0
 * @category models
 */
export interface IterationInput {
  readonly runId: string
  readonly conversationId: string
  readonly iteration: number
}

/**
 * One model call: the agent's own (`purpose: "answer"`), or the call that summarizes older
 * messages under a `ContextWindow.summarize` policy (`"compaction"`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelInput extends IterationInput {
  readonly request: ChatRequest
  readonly purpose: Purpose
}

/**
 * One tool call, after its gate let it through. `tool` is `undefined` for an unknown tool.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolInput {
  readonly runId: string
  readonly conversationId: string
  readonly call: ToolCall
  readonly tool: Toolkit.Entry | undefined
  readonly state: { readonly [slot: string]: unknown }
}

/**
 * A layer of the onion: do something around `next`, which runs the inner layers and the
 * level itself. Call `next` once (or not at all, to answer in its place).
 *
 * @since 0.1.0
 * @category models
 */
export type Around<I, A, E, R> = (input: I, next: (input: I) => Effect.Effect<A, E>) => Effect.Effect<A, E, R>

/**
 * A middleware: any of the four levels.
 *
 * - `turn` sees the run's exit (or its failure);
 * - `iteration` sees `Some(exit)` when the iteration ended the run, `None` when the loop goes on;
 * - `model` sees the request and the response (it may rewrite either, or retry) of every model
 *   call, a context policy's summary call included (`purpose: "compaction"`);
 * - `tool` runs **outside** the tool's timeout and sees every result, timeouts included
 *   (`Failed` with a `ToolTimeout`); the wait of an approval never reaches it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Middleware<R = never> {
  readonly turn?: Around<TurnInput, AgentExit.AgentExit<any>, ResumeError, R>
  readonly iteration?: Around<IterationInput, Option.Option<AgentExit.AgentExit<any>>, RunError, R>
  readonly model?: Around<ModelInput, ChatResponse, ModelError, R>
  readonly tool?: Around<ToolInput, Result, never, R>
}

/**
 * The services a middleware needs.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Requirements<M> = M extends Middleware<infer R> ? R : never

/**
 * Defines a middleware (a typed identity, for inference).
 *
 * @example
 * ```ts
 * import { Clock, Effect } from "effect"
 * import { Middleware } from "@agentfx/core"
 *
 * const timing = Middleware.make({
 *   tool: (input, next) =>
 *     Effect.gen(function*() {
 *       const start = yield* Clock.currentTimeMillis
 *       const result = yield* next(input)
 *       yield* Effect.logInfo(`${input.call.name}: ${result._tag} in ${(yield* Clock.currentTimeMillis) - start} ms`)
 *       return result
 *     })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <R = never>(middleware: Middleware<R>): Middleware<R> => middleware
