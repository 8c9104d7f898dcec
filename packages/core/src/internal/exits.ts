/**
 * How a run ends: completed, or paused with its checkpoint (recorded first, `record.ts`: the
 * record is the authority, the checkpoint a copy).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Agent from "../Agent.js"
import type { RunAlreadyResumed } from "../AgentError.js"
import { InvalidOutput } from "../AgentError.js"
import type { MemoryError } from "../ChatMemory.js"
import { user } from "../Message.js"
import type * as AgentExit from "../AgentExit.js"
import type { StoreError } from "../RunStore.js"
import type { BatchItem } from "./batchItem.js"
import { decodeOutput } from "./output.js"
import type { RunState } from "./runState.js"
import { appendMessages } from "./runState.js"
import { nestedId } from "./suspension.js"

/** Pauses the run: recorded, then a value, not an error. */
export const pause = (
  agent: Agent.Any,
  run: RunState,
  kind: "approval" | "environment",
  batch: ReadonlyArray<BatchItem>,
  pending: ReadonlyArray<AgentExit.PendingCall>
): Effect.Effect<AgentExit.Paused, RunAlreadyResumed | StoreError> =>
  Effect.map(
    run.recorder.stop(agent, run, kind, batch, pending.map((p) => p.call.id)),
    (checkpoint): AgentExit.Paused => ({
      _tag: "Paused",
      runId: run.runId,
      conversationId: run.conversationId,
      kind,
      pending,
      checkpoint
    })
  )

/** The calls of a batch that a person must decide: suspended calls' children (with nested ids), or the calls themselves. */
export const pendingOf = (items: ReadonlyArray<BatchItem>): Array<AgentExit.PendingCall> =>
  items.flatMap((item): Array<AgentExit.PendingCall> => {
    const outcome = item._tag === "Done" ? item.outcome : undefined
    if (outcome?._tag === "Suspended") {
      return outcome.pending.map((child) => ({ ...child, call: { ...child.call, id: nestedId(item.call.id, child.call.id) } }))
    }
    if (outcome?._tag === "Failed") return [{ call: item.call, error: outcome.error }]
    return [item._tag === "Waiting" && item.why !== undefined ? { call: item.call, why: item.why } : { call: item.call }]
  })

/**
 * The run's final answer: completed with `text` — and, for an agent with an `output` schema,
 * `value`, the text decoded with it. An answer that does not decode is fed back to the model
 * (`retry`: while the agent's `outputRetries` allow; `undefined`: iterate again), else the run
 * fails with `InvalidOutput`.
 */
export const finalAnswer = (
  agent: Agent.Any,
  run: RunState,
  text: string,
  retry: boolean
): Effect.Effect<AgentExit.Completed | undefined, InvalidOutput | MemoryError> => {
  if (agent.output === undefined) return Effect.succeed(completed(run, text, undefined))
  const decoded = decodeOutput(agent.output.schema, text, agent.limits)
  if (Result.isSuccess(decoded)) return Effect.succeed(completed(run, text, decoded.success))
  if (!retry || run.outputRetries >= agent.output.retries) return Effect.fail(new InvalidOutput({ problem: decoded.failure, text }))
  run.outputRetries += 1
  return Effect.as(
    appendMessages(run, [user(`Your answer does not match the required output: ${decoded.failure}. Answer again with only the JSON.`)]),
    undefined
  )
}

/** The run, completed with `text` (and `value`, the text decoded with the agent's `output` schema). */
export const completed = (run: RunState, text: string, value: unknown): AgentExit.Completed => ({
  _tag: "Completed",
  runId: run.runId,
  conversationId: run.conversationId,
  text,
  value,
  messages: run.history,
  state: run.state,
  toolCalls: run.outcomes,
  usage: run.usage
})
