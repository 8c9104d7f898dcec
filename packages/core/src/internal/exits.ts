/**
 * How a run ends: completed, or paused with its checkpoint.
 */
import { Effect } from "effect"
import type * as Agent from "../Agent.js"
import type * as AgentExit from "../AgentExit.js"
import type * as Checkpoint from "../Checkpoint.js"
import * as CheckpointCodec from "./checkpoint.js"
import type { BatchItem, RunState } from "./runState.js"
import { nestedId } from "./suspension.js"

/** The run as a checkpoint. */
export const checkpointOf = (
  agent: Agent.Any,
  run: RunState,
  reason: Checkpoint.Reason,
  batch: ReadonlyArray<BatchItem>,
  pending: ReadonlyArray<string>
) =>
  CheckpointCodec.encode(agent, {
    runId: run.runId,
    conversationId: run.conversationId,
    ephemeral: run.ephemeral,
    reason,
    iteration: run.iteration,
    messages: run.history,
    batch: batch.map((item) => item.outcome === undefined ? { call: item.call } : { call: item.call, outcome: item.outcome }),
    pending,
    usage: run.usage,
    outcomes: run.outcomes
  }, run.state)

/** Pauses the run: a value, not an error. */
export const pause = (
  agent: Agent.Any,
  run: RunState,
  reason: "approval" | "environment",
  batch: ReadonlyArray<BatchItem>,
  pending: ReadonlyArray<AgentExit.PendingCall>
): Effect.Effect<AgentExit.Paused> =>
  Effect.map(
    checkpointOf(agent, run, reason, batch, pending.map((p) => p.call.id)),
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

