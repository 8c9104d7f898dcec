/**
 * A run's outcome as its reply: from the `AgentExit` or the error of the run that just
 * happened, or from the run store's record (a redelivered message that finds its run paused or
 * ended).
 */
import type { Agent, AgentExit, Checkpoint, RunStore } from "@agentfx/core"
import { Cause, Effect, Schema } from "effect"
import * as RunOutcome from "../RunOutcome.js"

/**
 * The core's errors that refuse a message before it changed anything: the run stays as it
 * was (a decision on a paused run leaves it paused and resumable). Every other error ends the
 * run: it is a `Failed` outcome.
 */
const refusals: ReadonlySet<string> = new Set([
  "InvalidRunInput",
  "ConversationBusy",
  "InvalidCheckpoint",
  "UnknownDecision",
  "IncompleteDecisions",
  "InvalidEditedArguments",
  "DecisionMismatch",
  "ConversationDiverged",
  "RunAlreadyResumed",
  "RunNotFound",
  "SteerRefused"
])

/** The outcome of an exit of `agent`'s run. */
export const fromExit = (agent: Agent.Any, exit: AgentExit.AgentExit): Effect.Effect<RunOutcome.RunOutcome> =>
  exit._tag === "Completed"
    ? Effect.map(
      agent.output === undefined
        ? Effect.succeed(undefined)
        : Effect.orDie(Schema.encodeEffect(agent.output.schema as Schema.Codec<unknown, unknown>)(exit.value)),
      (output) =>
        RunOutcome.Completed.make({
          runId: exit.runId,
          conversationId: exit.conversationId,
          text: exit.text,
          ...(output === undefined ? {} : { output })
        })
    )
    : Effect.succeed(RunOutcome.Paused.make({
      runId: exit.runId,
      conversationId: exit.conversationId,
      kind: exit.kind,
      revision: exit.checkpoint.revision,
      pending: exit.pending.map((p) => ({
        callId: p.call.id,
        toolName: p.call.name,
        args: p.call.args,
        ...(p.why === undefined ? {} : { why: p.why }),
        ...(p.error === undefined ? {} : { error: p.error.message })
      }))
    }))

interface Tagged {
  readonly _tag: string
  readonly message: string
  /** The run a steer was about (`Steered`: the run that took the input; `SteerRefused`: the run that paused). */
  readonly runId?: string
  readonly conversationId?: string
  readonly status?: RunOutcome.Refused["status"]
  readonly decidedBy?: string | undefined
}

/** `error` as the refusal of a message on run `runId`. */
export const refused = (runId: string, error: Tagged): RunOutcome.Refused =>
  new RunOutcome.Refused({
    runId,
    reason: error._tag,
    message: error.message,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.decidedBy === undefined ? {} : { decidedBy: error.decidedBy })
  })

/**
 * A failure of a run: a refusal (the run unchanged) fails the message — a `SteerRefused` naming
 * the run that paused; a steered input is the `Steered` answer; anything else is its `Failed`
 * outcome (a turn a newer message cancelled: `TurnInterrupted`).
 */
export const fromError = (runId: string, error: Tagged): Effect.Effect<RunOutcome.RunOutcome, RunOutcome.Refused> =>
  error._tag === "Steered" && error.runId !== undefined && error.conversationId !== undefined
    ? Effect.succeed(RunOutcome.Steered.make({ runId, conversationId: error.conversationId, takenBy: error.runId }))
    : refusals.has(error._tag)
    ? Effect.fail(refused(error._tag === "SteerRefused" && error.runId !== undefined ? error.runId : runId, error))
    : Effect.succeed(RunOutcome.Failed.make({ runId, error: error._tag, message: error.message }))

/** A refusal that came after its run's first event (the run moved, then stopped on it), as the run's failure. */
export const failedBy = (refusal: RunOutcome.Refused): RunOutcome.RunOutcome =>
  RunOutcome.Failed.make({ runId: refusal.runId, error: refusal.reason, message: refusal.message })

/** A start whose run id names another run (another agent's, another conversation's). */
export const runIdTaken = (runId: string): Tagged => ({
  _tag: "InvalidRunInput",
  message: `Invalid run input: run id ${JSON.stringify(runId)} is taken by another run`
})

/** A run interrupted by a cancel while it was driven: it ended failed (the cancel recorded it). */
export const fromCancel = (runId: string, cancelledBy: string | undefined): RunOutcome.RunOutcome =>
  RunOutcome.Failed.make({ runId, error: "Cancelled", message: `Run ${runId} was cancelled${cancelledBy === undefined ? "" : ` by ${cancelledBy}`}` })

/** A run the store remembers only as finished (its record no longer kept). */
export const fromFinished = (runId: string, finished: RunStore.Finished): RunOutcome.RunOutcome =>
  RunOutcome.Ended.make({ runId, status: finished.status, ...(finished.decidedBy === undefined ? {} : { decidedBy: finished.decidedBy }) })

/** A defect of a run (a bug, never retried): its `Failed` outcome. Interruption is not caught: the message is redelivered. */
export const fromDefect = (runId: string, defect: unknown): RunOutcome.RunOutcome =>
  RunOutcome.Failed.make({ runId, error: "Defect", message: Cause.pretty(Cause.die(defect)) })

/** The outcome a paused or ended record stands for (a message redelivered after its run moved on). */
export const fromRecord = (record: RunStore.RunRecord): RunOutcome.RunOutcome => {
  if (record.status === "completed" || record.status === "failed") {
    return RunOutcome.Ended.make({ runId: record.runId, status: record.status, ...(record.decidedBy === undefined ? {} : { decidedBy: record.decidedBy }) })
  }
  const checkpoint = record.checkpoint as Checkpoint.Encoded
  if (checkpoint.reason === "approval" || checkpoint.reason === "environment") {
    const pending = new Set(checkpoint.pending)
    return RunOutcome.Paused.make({
      runId: record.runId,
      conversationId: record.conversationId,
      kind: checkpoint.reason,
      revision: checkpoint.revision,
      pending: checkpoint.batch.filter((item) => pending.has(item.call.id)).map((item) => ({
        callId: item.call.id,
        toolName: item.call.name,
        args: item.call.args,
        ...(item.reason === undefined ? {} : { why: item.reason })
      }))
    })
  }
  return RunOutcome.Failed.make({
    runId: record.runId,
    error: checkpoint.reason === "budget" ? "BudgetExceeded" : "MaxIterationsReached",
    message: `Run ${record.runId} stopped at its ${checkpoint.reason === "budget" ? "budget" : "iteration limit"}: decide it with a Continue decision`
  })
}
