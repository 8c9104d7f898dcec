/**
 * What the inbox shows of a paused run's record: its checkpoint decoded, each pending call
 * found in the paused batch (a sub-agent's call inside its parent's suspended outcome), with
 * its tool's description and JSON Schema when the agent has the tool, and why it waits.
 */
import type { Agent, RunStore, ToolCall, ToolError } from "@agentfx/core"
import { Checkpoint } from "@agentfx/core"
import { Effect, Schema } from "effect"
import type { PendingCall, RunDetail, RunSummary } from "../InboxApi.js"
import { Unavailable } from "../InboxApi.js"

interface Found {
  readonly call: ToolCall.ToolCall
  readonly error: ToolError.ToolFailure | undefined
  /** What the gate that paused it said, as recorded. */
  readonly why: string | undefined
  /** A sub-agent's call: its tool is the child's, which the inbox cannot see. */
  readonly nested: boolean
}

const decodeCheckpoint = Schema.decodeUnknownEffect(Checkpoint.AnyVersion)

/** The record's checkpoint, or `Unavailable` naming the run and what is wrong with it. */
export const checkpointOf = (record: RunStore.RunRecord): Effect.Effect<Checkpoint.Checkpoint, Unavailable> =>
  decodeCheckpoint(record.checkpoint).pipe(
    Effect.mapError((error) =>
      new Unavailable({ message: `The record of run ${record.runId} cannot be read: ${error.message}` })
    )
  )

const find = (batch: Checkpoint.Checkpoint["batch"], id: string): Found | undefined => {
  for (const item of batch) {
    if (item.call.id === id) {
      return { call: item.call, error: item.outcome?._tag === "Failed" ? item.outcome.error : undefined, why: item.why, nested: false }
    }
  }
  for (const item of batch) {
    if (item.outcome?._tag !== "Suspended") continue
    for (const child of item.outcome.pending) {
      if (`${item.call.id}/${child.call.id}` === id) return { call: { ...child.call, id }, error: child.error, why: child.why, nested: true }
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
export const accepts = (kind: Checkpoint.Kind): Array<string> => {
  switch (kind) {
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

/** Why a pending call waits for a person: its environment failure, or what the gate that paused it said. */
const whyCall = ({ error, nested, why }: Found): string => {
  if (error !== undefined) return `it failed with an ${error.reason} error: ${error.message}`
  if (why !== undefined) return why
  return nested ? "the sub-agent's gate paused it, and gave no reason" : "the agent's gate paused it, and gave no reason"
}

/** Why the run waits, in a sentence. */
const whyRun = (agent: Agent.Any, cp: Checkpoint.Checkpoint): string => {
  const calls = `${cp.pending.length} call${cp.pending.length === 1 ? "" : "s"}`
  switch (cp.kind) {
    case "approval":
      return `its gate asked a person about ${calls}: nothing of the batch runs before they are decided`
    case "environment":
      return `${calls} failed with an environment error: Retry runs ${cp.pending.length === 1 ? "it" : "them"} again once the cause is fixed, Report gives the error${cp.pending.length === 1 ? "" : "s"} to the model`
    case "max-iterations":
      return `no answer after ${agent.maxIterations} iteration${agent.maxIterations === 1 ? "" : "s"} (the agent's maxIterations): Continue allows as many again`
    case "budget": {
      const limits = Object.entries(cp.budget ?? {}).filter(([, allowed]) => allowed !== undefined).map(([limit, allowed]) => `${limit} ${allowed}`)
      return `it reached a limit of its budget (${limits.join(", ")}): Continue with the limit raised`
    }
    case "running":
      return "it is running"
  }
}

/** A paused run as the list shows it. */
export const summary = (record: RunStore.RunRecord, cp: Checkpoint.Checkpoint, now: number): RunSummary => ({
  runId: record.runId,
  agent: record.agent,
  conversationId: record.conversationId,
  ephemeral: record.ephemeral,
  revision: record.version,
  kind: cp.kind,
  pausedAt: cp.pausedAt,
  ageMillis: Math.max(0, now - cp.pausedAt),
  pending: pendingOf(cp).map(({ call }) => ({ callId: call.id, toolName: call.name, args: call.args }))
})

/** A paused run with everything a person needs to decide it. */
export const detail = (agent: Agent.Any, record: RunStore.RunRecord, cp: Checkpoint.Checkpoint, now: number): RunDetail => ({
  ...summary(record, cp, now),
  why: whyRun(agent, cp),
  pending: pendingOf(cp).map((found): PendingCall => {
    const { call, error, nested } = found
    const entry = nested ? undefined : agent.toolkit.entries.get(call.name)
    return {
      callId: call.id,
      toolName: call.name,
      description: entry?.description ?? null,
      parameters: entry?.parametersJsonSchema ?? null,
      args: call.args,
      why: whyCall(found),
      ...(error === undefined ? {} : { error: { reason: error.reason, message: error.message } })
    }
  }),
  messages: cp.messages,
  accepts: accepts(cp.kind)
})
