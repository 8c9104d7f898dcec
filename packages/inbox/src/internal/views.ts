/**
 * What the inbox shows of a paused run's record: its checkpoint decoded, each pending call
 * found in the paused batch (a sub-agent's call inside its parent's suspended outcome), with
 * its tool's description and JSON Schema when the agent has the tool.
 */
import type { Agent, RunStore, ToolCall, ToolError } from "@agentfx/core"
import { Checkpoint } from "@agentfx/core"
import { Effect, ParseResult, Schema } from "effect"
import type { PendingCall, RunDetail, RunSummary } from "../InboxApi.js"
import { Unavailable } from "../InboxApi.js"

interface Found {
  readonly call: ToolCall.ToolCall
  readonly error: ToolError.ToolFailure | undefined
  /** A sub-agent's call: its tool is the child's, which the inbox cannot see. */
  readonly nested: boolean
}

const decodeCheckpoint = Schema.decodeUnknown(Checkpoint.Checkpoint)

/** The record's checkpoint, or `Unavailable` naming the run and what is wrong with it. */
export const checkpointOf = (record: RunStore.RunRecord): Effect.Effect<Checkpoint.Checkpoint, Unavailable> =>
  decodeCheckpoint(record.checkpoint).pipe(
    Effect.mapError((error) =>
      new Unavailable({ message: `The record of run ${record.runId} cannot be read: ${ParseResult.TreeFormatter.formatErrorSync(error)}` })
    )
  )

const find = (batch: Checkpoint.Checkpoint["batch"], id: string): Found | undefined => {
  for (const item of batch) {
    if (item.call.id === id) {
      return { call: item.call, error: item.outcome?._tag === "Failed" ? item.outcome.error : undefined, nested: false }
    }
  }
  for (const item of batch) {
    if (item.outcome?._tag !== "Suspended") continue
    for (const child of item.outcome.pending) {
      if (`${item.call.id}/${child.call.id}` === id) return { call: { ...child.call, id }, error: child.error, nested: true }
    }
  }
  return undefined
}

const pendingOf = (cp: Checkpoint.Checkpoint): Array<Found> =>
  cp.pending.flatMap((id) => {
    const found = find(cp.batch, id)
    return found === undefined ? [] : [found]
  })

/** The decisions that fit a pause. */
export const accepts = (reason: Checkpoint.Reason): Array<string> => {
  switch (reason) {
    case "approval":
      return ["ApproveAll", "RejectAll", "ByCall"]
    case "environment":
      return ["Retry", "Report"]
    case "max-iterations":
    case "budget":
      return ["Continue"]
    case "running":
      return []
  }
}

/** A paused run as the list shows it. */
export const summary = (record: RunStore.RunRecord, cp: Checkpoint.Checkpoint, now: number): RunSummary => ({
  runId: record.runId,
  agent: record.agent,
  conversationId: record.conversationId,
  ephemeral: record.ephemeral,
  revision: record.version,
  reason: cp.reason,
  pausedAt: cp.pausedAt,
  ageMillis: Math.max(0, now - cp.pausedAt),
  pending: pendingOf(cp).map(({ call }) => ({ callId: call.id, toolName: call.name, args: call.args }))
})

/** A paused run with everything a person needs to decide it. */
export const detail = (agent: Agent.Any, record: RunStore.RunRecord, cp: Checkpoint.Checkpoint, now: number): RunDetail => ({
  ...summary(record, cp, now),
  pending: pendingOf(cp).map(({ call, error, nested }): PendingCall => {
    const entry = nested ? undefined : agent.toolkit.entries.get(call.name)
    return {
      callId: call.id,
      toolName: call.name,
      description: entry?.description ?? null,
      parameters: entry?.parametersJsonSchema ?? null,
      args: call.args,
      ...(error === undefined ? {} : { error: { reason: error.reason, message: error.message } })
    }
  }),
  messages: cp.messages,
  accepts: accepts(cp.reason)
})
