/**
 * How a run ends when it does not fail: it completed, or it paused for a person.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type { Usage } from "./ChatModel.js"
import type * as Checkpoint from "./Checkpoint.js"
import type { Message } from "./Message.js"
import type { Outcome, ToolCall } from "./ToolCall.js"
import type { ToolFailure } from "./ToolError.js"

/**
 * The model answered (or a batch of return-direct tools did).
 *
 * @since 0.1.0
 * @category models
 */
export interface Completed<out State = { readonly [slot: string]: unknown }, out Output = unknown> {
  readonly _tag: "Completed"
  readonly runId: string
  readonly conversationId: string
  /** The answer. */
  readonly text: string
  /** The answer decoded with the agent's `output` schema; `undefined` for an agent without one. */
  readonly value: Output
  /** The whole conversation, this turn included. */
  readonly messages: ReadonlyArray<Message>
  /** The run state after the last batch. */
  readonly state: State
  /** What became of every tool call of this run (across resumes), in order. */
  readonly toolCalls: ReadonlyArray<Outcome>
  /** Tokens of every model call of this run (across resumes). */
  readonly usage: Usage
}

/**
 * A call the person is asked about: to approve (approval pauses), or that failed with an
 * `environment` error (environment pauses).
 *
 * @since 0.1.0
 * @category models
 */
export interface PendingCall {
  readonly call: ToolCall
  /** The failure, for environment pauses. */
  readonly error?: ToolFailure | undefined
  /** Why the gate asked a person, for approval pauses, when it said (`Gate.pause({ why })`; the default gate names the tool's `needsApproval`). */
  readonly why?: string | undefined
}

/**
 * The run needs a person. This is a normal outcome, not an error: store `checkpoint`
 * (plain JSON) and give it to `Agent.resume` with a `Decision`, here or in another process.
 *
 * @since 0.1.0
 * @category models
 */
export interface Paused {
  readonly _tag: "Paused"
  readonly runId: string
  readonly conversationId: string
  /** The kind of pause: calls wait for a person's approval, or failed for a broken environment. */
  readonly kind: "approval" | "environment"
  readonly pending: ReadonlyArray<PendingCall>
  readonly checkpoint: Checkpoint.Encoded
}

/**
 * The typed outcome of `Agent.run` and `Agent.resume`.
 *
 * @example
 * ```ts
 * import { AgentExit } from "@agentfx/core"
 *
 * const show = AgentExit.match({
 *   Completed: (exit) => exit.text,
 *   Paused: (exit) => `paused for ${exit.kind}: ${exit.pending.map((p) => p.call.name).join(", ")}`
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type AgentExit<State = { readonly [slot: string]: unknown }, Output = unknown> = Completed<State, Output> | Paused

interface AgentExitDefinition extends Data.TaggedEnum.WithGenerics<2> {
  readonly taggedEnum: AgentExit<this["A"], this["B"]>
}

const Exits = Data.taggedEnum<AgentExitDefinition>()

/**
 * Pattern-matches an exit on its tag.
 *
 * @example
 * ```ts
 * import { AgentExit } from "@agentfx/core"
 *
 * declare const exit: AgentExit.AgentExit
 * const text = AgentExit.match(exit, { Completed: (done) => done.text, Paused: () => "waiting for a person" })
 * ```
 *
 * @since 0.1.0
 * @category pattern matching
 */
export const match = Exits.$match

/**
 * A type guard for one kind of exit.
 *
 * @example
 * ```ts
 * import { AgentExit } from "@agentfx/core"
 *
 * declare const exit: AgentExit.AgentExit
 * if (AgentExit.is("Paused")(exit)) console.log(exit.pending)
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const is = Exits.$is

/**
 * Builds a `Completed` exit: for tests and tools that replay or display runs (the runtime
 * builds its own).
 *
 * @example
 * ```ts
 * import { AgentExit } from "@agentfx/core"
 *
 * const done = AgentExit.Completed({
 *   runId: "r1", conversationId: "c1", text: "Sunny", value: undefined, messages: [], state: {}, toolCalls: [],
 *   usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const Completed: <State = { readonly [slot: string]: unknown }, Output = unknown>(
  fields: Omit<Completed<State, Output>, "_tag">
) => Completed<State, Output> = Exits.Completed

/**
 * Builds a `Paused` exit: for tests and tools that replay or display runs.
 *
 * @example
 * ```ts
 * import { AgentExit, type Checkpoint } from "@agentfx/core"
 *
 * declare const checkpoint: Checkpoint.Encoded
 * const paused = AgentExit.Paused({
 *   runId: "r1", conversationId: "c1", kind: "approval",
 *   pending: [{ call: { id: "t1", name: "transfer", args: { amount: 5 } } }], checkpoint
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const Paused: (fields: Omit<Paused, "_tag">) => Paused = Exits.Paused
