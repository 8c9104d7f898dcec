/**
 * A batch that a crash cut off, and the rule for each of its calls — shared by
 * `Agent.recover` and by the next turn on the crashed run's conversation: a call whose result
 * was recorded keeps it; a call recorded as started without a result runs again only when its
 * tool is `idempotent`, else it is cancelled; a call that never started runs.
 */
import { Effect } from "effect"
import type { Any } from "../Agent.js"
import type { RunRecord, RunStore } from "../RunStore.js"
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

/** A crashed run's record decoded, and its batch settled from what the store recorded of it. */
export const crashedBatch = Effect.fnUntraced(function*(agent: Any, store: RunStore.Service, record: RunRecord) {
  const decoded = yield* CheckpointCodec.decode(agent, record.checkpoint)
  const [outcomes, started] = yield* Effect.all([store.outcomes(record.runId), store.started(record.runId)])
  return { decoded, batch: settle(agent, decoded.checkpoint.batch, outcomes, started) }
})

/**
 * The results of a crashed run's batch, for the turn that supersedes it (`run`): settled, the
 * calls left to run run now, recorded in the crashed run's record (still running: a crash of
 * this turn leaves them to the next). A record this agent cannot read (another agent's run)
 * gives its recorded results only.
 */
export const finishCrashed = Effect.fnUntraced(function*(agent: Any, run: RunState, crashed: RunRecord) {
  const found = yield* crashedBatch(agent, run.store, crashed).pipe(Effect.catchTag("InvalidCheckpoint", () => Effect.succeed(undefined)))
  if (found === undefined) return yield* run.store.outcomes(crashed.runId)
  const toRun = found.batch.filter((item) => item.outcome === undefined)
  const ran = toRun.length === 0
    ? []
    : yield* runRecordedCalls(agent, run, { runId: crashed.runId, version: crashed.version, unrecorded: undefined }, toRun)
  let next = 0
  return found.batch.map((item) => item.outcome ?? ran[next++]!)
})
