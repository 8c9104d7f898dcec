/**
 * A batch that a crash cut off, and the rule for each of its calls — shared by
 * `Agent.recover` and by the next turn on the crashed run's conversation: a call whose result
 * was recorded keeps it; a call recorded as started without a result runs again only when its
 * tool is `idempotent`, else it is cancelled; a call that never started runs.
 */
import * as Effect from "effect/Effect"
import type { Any } from "../Agent.js"
import type * as Checkpoint from "../Checkpoint.js"
import type { RunRecord, RunStore } from "../RunStore.js"
import type { Outcome, ToolCall } from "../ToolCall.js"
import { runRecordedCalls } from "./batch.js"
import type { BatchItem } from "./batchItem.js"
import { fromCheckpoint, runs, Done } from "./batchItem.js"
import * as CheckpointCodec from "./checkpoint.js"
import type { RunState } from "./runState.js"

const cancelled = (call: ToolCall): BatchItem => Done({ call, outcome: { _tag: "Cancelled", callId: call.id, toolName: call.name } })

/** The batch with the rule applied: an item left to run runs. A call that waits for a person has no place in a running batch: it is cancelled. */
export const afterCrash = (
  agent: Any,
  batch: ReadonlyArray<Checkpoint.BatchItem>,
  outcomes: ReadonlyArray<Outcome>,
  started: ReadonlyArray<string>
): Array<BatchItem> => {
  const results = new Map(outcomes.map((outcome): [string, Outcome] => [outcome.callId, outcome]))
  const begun = new Set(started)
  return batch.map((recorded): BatchItem => {
    const item = fromCheckpoint(recorded)
    if (item._tag === "Done") return item
    if (item._tag === "Waiting") return cancelled(item.call)
    const result = results.get(item.call.id)
    if (result !== undefined) return Done({ call: item.call, outcome: result })
    return !begun.has(item.call.id) || agent.toolkit.entries.get(item.call.name)?.idempotent === true ? item : cancelled(item.call)
  })
}

/** A crashed run's batch, the crash rule applied to what the store recorded of it: read after the run was taken over (`RunStore.takeOver`), so that it is all its writer did. */
export const recordedBatch = Effect.fnUntraced(function*(
  agent: Any,
  store: RunStore.Service,
  runId: string,
  batch: ReadonlyArray<Checkpoint.BatchItem>
) {
  const [outcomes, started] = yield* Effect.all([store.outcomes(runId), store.started(runId)])
  return afterCrash(agent, batch, outcomes, started)
})

/**
 * The results of a crashed run's batch, for the turn that supersedes it (`run`), once that turn
 * has taken the run over (`taken`): the crash rule applied, the calls left to run run now, recorded in the
 * crashed run's record (still running: a crash of this turn leaves them to the next). A record
 * this agent cannot read (another agent's run) gives its recorded results only.
 */
export const finishCrashed = Effect.fnUntraced(function*(agent: Any, run: RunState, taken: RunRecord) {
  const decoded = yield* CheckpointCodec.decode(agent, taken.checkpoint).pipe(Effect.catchTag("InvalidCheckpoint", () => Effect.succeed(undefined)))
  if (decoded === undefined) return yield* run.store.outcomes(taken.runId)
  const batch = yield* recordedBatch(agent, run.store, taken.runId, decoded.checkpoint.batch)
  const toRun = batch.filter(runs)
  const ran = toRun.length === 0
    ? []
    : yield* runRecordedCalls(agent, run, { runId: taken.runId, version: taken.version, unrecorded: undefined }, toRun)
  let next = 0
  return batch.map((item) => item._tag === "Done" ? item.outcome : ran[next++]!)
})
