/**
 * The typed failures of building, running and resuming an agent. A pause is not among
 * them: it is an `AgentExit`.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type { ModelError } from "./ChatModel.js"
import type { MemoryError } from "./ChatMemory.js"
import type * as Budget from "./Budget.js"
import type * as Checkpoint from "./Checkpoint.js"
import type { ConversationBusy, SteerRefused, Steered, StoreError, TurnInterrupted } from "./RunStore.js"

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/**
 * `Agent.make` refused its options; `problems` names every one.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { Agent } from "@agentfx/core"
 *
 * const checked = Agent.validate({ maxIterations: 0 })
 * if (Result.isFailure(checked)) console.error(checked.failure.problems) // ["maxIterations 0 is not a positive integer"]
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidAgent extends Data.TaggedError("InvalidAgent")<{ readonly problems: ReadonlyArray<string> }> {
  override get message(): string {
    return `Invalid agent (${plural(this.problems.length, "problem")}): ${this.problems.join("; ")}`
  }
}

/**
 * `Agent.run` was given input it cannot use (e.g. state for slots the agent does not have).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * Agent.run(agent, { input: "hi", state: { unknownSlot: 1 } }).pipe(
 *   Effect.catchTag("InvalidRunInput", (e) => Effect.logError(e.problems))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidRunInput extends Data.TaggedError("InvalidRunInput")<{ readonly problems: ReadonlyArray<string> }> {
  override get message(): string {
    return `Invalid run input: ${this.problems.join("; ")}`
  }
}

/**
 * The run used its `maxIterations` model calls without an answer. `checkpoint` continues it:
 * `Agent.resume(agent, error.checkpoint, Decision.continue())`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * const program = Agent.run(agent, { input: "go" }).pipe(
 *   Effect.catchTag("MaxIterationsReached", (e) => Agent.resume(agent, e.checkpoint, Decision.continue()))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class MaxIterationsReached extends Data.TaggedError("MaxIterationsReached")<{
  readonly maxIterations: number
  readonly checkpoint: Checkpoint.Encoded
}> {
  override get message(): string {
    return `No answer after ${
      plural(this.maxIterations, "iteration")
    }; resume the checkpoint with Decision.continue() to go on`
  }
}

/**
 * A limit of the run's budget was reached: the run stopped before its next model call or
 * batch. `checkpoint` continues it — `Agent.resume(agent, error.checkpoint, Decision.continue({
 * raise: { [limit]: more } }))` (or resume by run id).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * const program = Agent.run(agent, { input: "go", budget: { tokens: 10_000 } }).pipe(
 *   Effect.catchTag("BudgetExceeded", (e) =>
 *     Agent.resume(agent, e.checkpoint, Decision.continue({ raise: { [e.limit]: e.allowed * 2 } })))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class BudgetExceeded extends Data.TaggedError("BudgetExceeded")<{
  readonly limit: Budget.Limit
  readonly allowed: number
  readonly used: number
  readonly checkpoint: Checkpoint.Encoded
}> {
  override get message(): string {
    return `Budget reached: ${this.limit} ${this.used} of ${this.allowed}; resume the checkpoint with Decision.continue({ raise }) to go on`
  }
}

/**
 * The model's final answer did not match the agent's `output` schema, after `outputRetries`
 * answers fed back with the problem. `text` is the last answer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * Agent.run(agent, { input: "extract" }).pipe(
 *   Effect.catchTag("InvalidOutput", (e) => Effect.logWarning(e.message))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidOutput extends Data.TaggedError("InvalidOutput")<{ readonly problem: string; readonly text: string }> {
  override get message(): string {
    return `The model's answer does not match the output schema: ${this.problem}`
  }
}

/**
 * The run's context policy (`ContextWindow`) could not bring a model call under its
 * `maxTokens`: the newest messages alone — the last tool call with its results, or the last
 * message, which no policy cuts — with the system prompt and the tool definitions (and, after
 * a summary, the summary) are estimated at `tokens`. The conversation is kept as it was; raise
 * `maxTokens`, lower `keepLast`, or make tool results smaller.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * Agent.run(agent, { input: "go" }).pipe(
 *   Effect.catchTag("ContextOverflow", (e) => Effect.logError(`${e.tokens} tokens, limit ${e.maxTokens}`))
 * )
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class ContextOverflow extends Data.TaggedError("ContextOverflow")<{
  readonly maxTokens: number
  readonly tokens: number
  readonly detail: string
}> {
  override get message(): string {
    return `The model call cannot be brought under the context limit: ${this.detail} (about ${this.tokens} tokens, limit ${this.maxTokens})`
  }
}

/**
 * The summary call of a `ContextWindow.summarize` policy failed: the model failed (`reason:
 * "model"`, its `ModelError` in `error`), or it answered without any text (`"empty"`). Nothing
 * was compacted: the conversation is as it was before the call, and the run stopped before its
 * own model call.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * Agent.run(agent, { input: "go" }).pipe(
 *   Effect.catchTag("CompactionFailed", (e) => Effect.logError(e.message, e.error))
 * )
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class CompactionFailed extends Data.TaggedError("CompactionFailed")<{
  readonly reason: "model" | "empty"
  readonly error?: ModelError | undefined
}> {
  override get message(): string {
    return this.reason === "model"
      ? `The summary call of the context policy failed: ${this.error?.message ?? "the model failed"}`
      : "The summary call of the context policy answered without a summary"
  }
}

/**
 * The checkpoint cannot be resumed by this agent. `reason`: `malformed` (not a checkpoint,
 * fields of the wrong shape, or nested too deep), `version` (another format version), `agent`
 * (another agent's), `tools` (names tools this agent does not have), `signature` (missing or
 * not matching the agent's `checkpointSecret`: tampered or foreign), `state` (slots this agent
 * does not declare, or values its slot schemas reject), `expired` (paused as long ago as the
 * store remembers finished runs, or longer: it can no longer be told apart from a replay), `verdicts` (a
 * call that no verdict allowed to run: a forgery, or a gate that now decides otherwise),
 * `conversation` (names another conversation than its run's record).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * Agent.resume(agent, { not: "a checkpoint" }, Decision.approveAll()).pipe(
 *   Effect.catchTag("InvalidCheckpoint", (e) => Effect.logError(`${e.reason}: ${e.detail}`))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidCheckpoint extends Data.TaggedError("InvalidCheckpoint")<{
  readonly reason: "malformed" | "version" | "agent" | "tools" | "signature" | "state" | "expired" | "verdicts" | "conversation" | "revision"
  readonly detail: string
}> {
  override get message(): string {
    return `Invalid checkpoint (${this.reason}): ${this.detail}`
  }
}

/**
 * The decision names calls that are not pending in this checkpoint. Nothing was consumed.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * declare const checkpoint: unknown
 * Agent.resume(agent, checkpoint, Decision.byCall({ "no-such-call": Decision.approve() })).pipe(
 *   Effect.catchTag("UnknownDecision", (e) => Effect.logError(e.callIds, e.pending))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownDecision extends Data.TaggedError("UnknownDecision")<{
  readonly callIds: ReadonlyArray<string>
  readonly pending: ReadonlyArray<string>
}> {
  override get message(): string {
    return `Decisions for calls that are not pending: ${this.callIds.join(", ")} (pending: ${this.pending.join(", ")})`
  }
}

/**
 * Pending calls were left without a decision. Nothing was consumed.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * declare const checkpoint: unknown
 * Agent.resume(agent, checkpoint, Decision.byCall({})).pipe(
 *   Effect.catchTag("IncompleteDecisions", (e) => Effect.logError(`still to decide: ${e.callIds.join(", ")}`))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class IncompleteDecisions extends Data.TaggedError("IncompleteDecisions")<{
  readonly callIds: ReadonlyArray<string>
}> {
  override get message(): string {
    return `No decision for pending ${plural(this.callIds.length, "call")}: ${this.callIds.join(", ")}`
  }
}

/**
 * Edited arguments of approved calls do not decode with their tools' schemas, or they (or a
 * `Reply`'s value) are beyond the agent's `limits` (depth, size) or not JSON (a `NaN`, a `Date`,
 * given from JavaScript); `problems` names each call and what is wrong. Nothing was consumed.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * declare const checkpoint: unknown
 * Agent.resume(agent, checkpoint, Decision.byCall({ call_1: Decision.approve({ args: { amount: "lots" } }) })).pipe(
 *   Effect.catchTag("InvalidEditedArguments", (e) => Effect.logError(e.problems))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidEditedArguments extends Data.TaggedError("InvalidEditedArguments")<{
  readonly problems: ReadonlyArray<{ readonly callId: string; readonly toolName: string; readonly message: string }>
}> {
  override get message(): string {
    return `Invalid edited arguments: ${this.problems.map((p) => `${p.callId} (${p.toolName}): ${p.message}`).join("; ")}`
  }
}

/**
 * The decision does not fit the pause: approval pauses take `approveAll`/`rejectAll`/`byCall`,
 * environment pauses `retry`/`proceed`, `MaxIterationsReached` and `BudgetExceeded` `continue`. Nothing was consumed.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * declare const approvalCheckpoint: unknown
 * Agent.resume(agent, approvalCheckpoint, Decision.retry()).pipe(
 *   Effect.catchTag("DecisionMismatch", (e) => Effect.logError(`use ${e.accepted.join(" or ")}`))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class DecisionMismatch extends Data.TaggedError("DecisionMismatch")<{
  readonly decision: string
  /** The kind of stop the run is in (`Checkpoint.kind`). */
  readonly kind: Checkpoint.Kind
  readonly accepted: ReadonlyArray<string>
}> {
  override get message(): string {
    return `Decision ${this.decision} cannot resume a run stopped for ${this.kind} (use ${this.accepted.join(" or ")})`
  }
}

/**
 * The conversation in memory moved on since the checkpoint was taken (another turn ran,
 * or this checkpoint was already resumed). Resuming would duplicate or lose messages.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * declare const checkpoint: unknown
 * Agent.resume(agent, checkpoint, Decision.approveAll()).pipe(
 *   Effect.catchTag("ConversationDiverged", () => Effect.logWarning("already resumed"))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ConversationDiverged extends Data.TaggedError("ConversationDiverged")<{
  readonly conversationId: string
  readonly expectedMessages: number
  readonly foundMessages: number
  /** The first message (counted from 1) where memory and the checkpoint differ: past the shorter one when it is a prefix of the other. */
  readonly firstDifference: number
}> {
  override get message(): string {
    const counts = `memory holds ${this.foundMessages} message${this.foundMessages === 1 ? "" : "s"}, the checkpoint ${this.expectedMessages}`
    const where = `Conversation "${this.conversationId}" in memory`
    if (this.firstDifference > Math.min(this.foundMessages, this.expectedMessages)) {
      return this.foundMessages > this.expectedMessages
        ? `${where} went on past the checkpoint (${counts}, the first ${this.expectedMessages} alike): it was resumed already or another turn ran since`
        : `${where} is shorter than the checkpoint (${counts}, the first ${this.foundMessages} alike): it was cut since the checkpoint was taken`
    }
    return `${where} differs from the checkpoint at message #${this.firstDifference} (${counts}): the checkpoint is of another conversation, or this one was rewritten since`
  }
}

/**
 * The run was already resumed (or recovered) by someone else: its record is no longer paused
 * at the checkpoint's revision. `status` is where the run is now (`finished`: it ended and its
 * record is no longer kept). Nothing was consumed, nothing ran.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * Agent.resume(agent, "run-1", Decision.approveAll()).pipe(
 *   Effect.catchTag("RunAlreadyResumed", (e) => Effect.logWarning(`run ${e.runId} is ${e.status}`))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunAlreadyResumed extends Data.TaggedError("RunAlreadyResumed")<{
  readonly runId: string
  readonly status: "running" | "paused" | "completed" | "failed" | "finished"
  /** Who decided the resume that won, when the store knows it. */
  readonly decidedBy?: string | undefined
}> {
  override get message(): string {
    const by = this.decidedBy === undefined ? "" : ` by ${this.decidedBy}`
    return this.status === "paused"
      ? `Run ${this.runId} was resumed already${by} and paused again: decide on its current pause (resume it by run id)`
      : `Run ${this.runId} was already decided${by}: it is ${this.status} now`
  }
}

/**
 * No run with this id is paused here: the store has no record of it (never paused, or
 * finished and forgotten) — or, for `Agent.recover`, none that is running.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * Agent.resume(agent, "no-such-run", Decision.approveAll()).pipe(
 *   Effect.catchTag("RunNotFound", (e) => Effect.logWarning(e.message))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunNotFound extends Data.TaggedError("RunNotFound")<{ readonly runId: string }> {
  override get message(): string {
    return `No record of run ${this.runId} in the run store`
  }
}

/**
 * How `Agent.run` can fail. A pause is not a failure.
 *
 * @since 0.1.0
 * @category errors
 */
export type RunError =
  | ModelError
  | MemoryError
  | StoreError
  | ConversationBusy
  | Steered
  | SteerRefused
  | TurnInterrupted
  | RunAlreadyResumed
  | MaxIterationsReached
  | BudgetExceeded
  | InvalidOutput
  | InvalidRunInput
  | ContextOverflow
  | CompactionFailed

/**
 * How `Agent.resume` can fail. After any of the decision, checkpoint or claim errors nothing
 * was consumed: the run stays paused and resumable.
 *
 * @since 0.1.0
 * @category errors
 */
export type ResumeError =
  | RunError
  | InvalidCheckpoint
  | UnknownDecision
  | IncompleteDecisions
  | InvalidEditedArguments
  | DecisionMismatch
  | ConversationDiverged
  | RunAlreadyResumed
  | RunNotFound
