/**
 * A batch that a crash cut off, and the rule for each of its calls — shared by
 * `Agent.recover` and by the next turn on the crashed run's conversation: a call whose result
 * was recorded keeps it; a call recorded as started without a result runs again only when its
 * tool is `idempotent`, else it is cancelled; a call that never started runs.
 */
import { Effect, Option } from "effect"
import type { Any } from "../Agent.js"
import type { RunRecord, RunStore, StoreError } from "../RunStore.js"
import type { Outcome, ToolCall } from "../ToolCall.js"
import { runRecordedCalls } from "./batch.js"
import * as CheckpointCodec from "./checkpoint.js"
import type { BatchItem, RunState } from "./runState.js"

const cancelled = (call: ToolCall): Outcome => ({ _tag: "Cancelled", callId: call.id, toolName: call.name })

/** The batch with the rule applied: an item without outcome is to run. */
export const settle = (
  agent: Any,
  batch: ReadonlyArray<BatchItem>,
  outcomes: ReadonlyArray<Outcome>,
  started: ReadonlyArray<string>
): Array<BatchItem> => {
  const results = new Map(outcomes.map((outcome): [string, Outcome] => [outcome.callId, outcome]))
  const begun = new Set(started)
  return batch.map((item): BatchItem => {
    if (item.outcome !== undefined) return item
    const result = results.get(item.call.id)
    if (result !== undefined) return { call: item.call, outcome: result }
    return !begun.has(item.call.id) || agent.toolkit.entries.get(item.call.name)?.idempotent === true
      ? item
      : { call: item.call, outcome: cancelled(item.call) }
  })
}

/** A crashed run's batch settled from what the store recorded of it: read after the run was taken over (`RunStore.takeOver`), so that it is all its writer did. */
export const recordedBatch = Effect.fnUntraced(function*(agent: Any, store: RunStore.Service, runId: string, batch: ReadonlyArray<BatchItem>) {
  const [outcomes, started] = yield* Effect.all([store.outcomes(runId), store.started(runId)])
  return settle(agent, batch, outcomes, started)
})

/**
 * Takes a crashed run over (`RunStore.takeOver`): from then on its writer, should it still be
 * alive (its leases lapsed), records and starts nothing more. A record its writer moved
 * meanwhile (ending a batch) is read again and taken over as it is now; `undefined` once it
 * is no longer running.
 */
export const takeOverLatest = (store: RunStore.Service, record: RunRecord): Effect.Effect<RunRecord | undefined, StoreError> =>
  Effect.flatMap(store.takeOver(record.runId, record.version), (taken) =>
    taken !== undefined
      ? Effect.succeed(taken)
      : Effect.flatMap(store.get(record.runId), (now) =>
        Option.isSome(now) && now.value.status === "running" ? takeOverLatest(store, now.value) : Effect.succeed(undefined)))

/**
 * The results of a crashed run's batch, for the turn that supersedes it (`run`), once that turn
 * has taken the run over (`taken`): settled, the calls left to run run now, recorded in the
 * crashed run's record (still running: a crash of this turn leaves them to the next). A record
 * this agent cannot read (another agent's run) gives its recorded results only.
 */
export const finishCrashed = Effect.fnUntraced(function*(agent: Any, run: RunState, taken: RunRecord) {
  const decoded = yield* CheckpointCodec.decode(agent, taken.checkpoint).pipe(Effect.catchTag("InvalidCheckpoint", () => Effect.succeed(undefined)))
  if (decoded === undefined) return yield* run.store.outcomes(taken.runId)
  const batch = yield* recordedBatch(agent, run.store, taken.runId, decoded.checkpoint.batch)
  const toRun = batch.filter((item) => item.outcome === undefined)
  const ran = toRun.length === 0
    ? []
    : yield* runRecordedCalls(agent, run, { runId: taken.runId, version: taken.version, unrecorded: undefined }, toRun)
  let next = 0
  return batch.map((item) => item.outcome ?? ran[next++]!)
})
