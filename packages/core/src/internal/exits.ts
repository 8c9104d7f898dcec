/**
 * How a run ends, and what its record says: completed, or paused with its checkpoint (written
 * to the run store first: the record is the authority, the checkpoint a copy).
 */
import { Clock, Effect } from "effect"
import type * as Agent from "../Agent.js"
import { RunAlreadyResumed } from "../AgentError.js"
import type * as AgentExit from "../AgentExit.js"
import type * as Checkpoint from "../Checkpoint.js"
import type { StoreError } from "../RunStore.js"
import * as CheckpointCodec from "./checkpoint.js"
import type { BatchItem, RunState } from "./runState.js"
import { nestedId } from "./suspension.js"

/** The run as a checkpoint at record version `revision`. */
export const checkpointOf = (
  agent: Agent.Any,
  run: RunState,
  reason: Checkpoint.Reason,
  batch: ReadonlyArray<BatchItem>,
  pending: ReadonlyArray<string>,
  revision: number,
  pausedAt: number
) =>
  CheckpointCodec.encode(agent, {
    runId: run.runId,
    revision,
    pausedAt,
    conversationId: run.conversationId,
    ephemeral: run.ephemeral,
    reason,
    iteration: run.iteration,
    messages: run.history,
    batch: batch.map((item) =>
      item.outcome !== undefined
        ? { call: item.call, outcome: item.outcome }
        : { call: item.call, ...(item.verdict === undefined ? {} : { verdict: item.verdict }) }
    ),
    pending,
    usage: run.usage,
    outcomes: run.outcomes
  }, run.state)

/**
 * Records the run's stop in the store — a new paused record, or its running record turned
 * paused — and returns its checkpoint, a copy of the record's. A record that moved on meanwhile
 * (another process recovered the run) is `RunAlreadyResumed`.
 */
export const recordStop = Effect.fnUntraced(function*(
  agent: Agent.Any,
  run: RunState,
  reason: Exclude<Checkpoint.Reason, "running">,
  batch: ReadonlyArray<BatchItem>,
  pending: ReadonlyArray<string>
) {
  const now = yield* Clock.currentTimeMillis
  const revision = (run.version ?? 0) + 1
  const checkpoint = yield* checkpointOf(agent, run, reason, batch, pending, revision, now)
  if (run.version === undefined) {
    const inserted = yield* run.store.insert({
      runId: run.runId,
      agent: agent.name,
      conversationId: run.conversationId,
      ephemeral: run.ephemeral,
      status: "paused",
      version: revision,
      createdAt: now,
      updatedAt: now,
      checkpoint
    })
    if (!inserted) return yield* new RunAlreadyResumed({ runId: run.runId, status: "finished" })
  } else {
    const next = yield* run.store.transition(run.runId, {
      from: { status: "running", version: run.version },
      to: "paused",
      checkpoint
    })
    if (next === undefined) return yield* lost(run)
  }
  run.version = revision
  return checkpoint
})

/**
 * A durable store's record of the batch a run is about to execute — the history up to the
 * model's calls, each call's verdict or outcome — so that a crash during the batch can be
 * recovered (`Agent.recover`); each call's result is recorded as it ends (`batch.ts`). Nothing
 * for a store that is not durable.
 */
export const recordBatch = Effect.fnUntraced(function*(agent: Agent.Any, run: RunState, batch: ReadonlyArray<BatchItem>) {
  if (!run.store.durable || run.version === undefined) return
  const now = yield* Clock.currentTimeMillis
  const checkpoint = yield* checkpointOf(agent, run, "running", batch, [], run.version + 1, now)
  const next = yield* run.store.transition(run.runId, { from: { status: "running", version: run.version }, to: "running", checkpoint })
  if (next === undefined) return yield* lost(run)
  run.version = next.version
})

/** The refusal for a run whose record another process took over. */
export const lost = (run: RunState): Effect.Effect<never, RunAlreadyResumed | StoreError> =>
  Effect.flatMap(run.store.get(run.runId), (record) =>
    Effect.fail(new RunAlreadyResumed({ runId: run.runId, status: record._tag === "Some" ? record.value.status : "finished" })))

/** Pauses the run: recorded, then a value, not an error. */
export const pause = (
  agent: Agent.Any,
  run: RunState,
  reason: "approval" | "environment",
  batch: ReadonlyArray<BatchItem>,
  pending: ReadonlyArray<AgentExit.PendingCall>
): Effect.Effect<AgentExit.Paused, RunAlreadyResumed | StoreError> =>
  Effect.map(
    recordStop(agent, run, reason, batch, pending.map((p) => p.call.id)),
    (checkpoint): AgentExit.Paused => ({
      _tag: "Paused",
      runId: run.runId,
      conversationId: run.conversationId,
      reason,
      pending,
      checkpoint
    })
  )

/** The calls of a batch that a person must decide: suspended calls' children (with nested ids), or the calls themselves. */
export const pendingOf = (items: ReadonlyArray<BatchItem>): Array<AgentExit.PendingCall> =>
  items.flatMap((item): Array<AgentExit.PendingCall> => {
    const outcome = item.outcome
    if (outcome?._tag === "Suspended") {
      return outcome.pending.map((child) => ({ ...child, call: { ...child.call, id: nestedId(item.call.id, child.call.id) } }))
    }
    return [outcome?._tag === "Failed" ? { call: item.call, error: outcome.error } : { call: item.call }]
  })

/** The run, completed with `text`. */
export const completed = (run: RunState, text: string): AgentExit.Completed => ({
  _tag: "Completed",
  runId: run.runId,
  conversationId: run.conversationId,
  text,
  messages: run.history,
  state: run.state,
  toolCalls: run.outcomes,
  usage: run.usage
})
