/**
 * The state of one run as the loop advances it, and its history.
 */
import { Effect } from "effect"
import type { RunAlreadyResumed } from "../AgentError.js"
import type * as AgentExit from "../AgentExit.js"
import type { Budget } from "../Budget.js"
import type { ChatModel, ModelSettings, ToolChoice, Usage } from "../ChatModel.js"
import type { ToolCallingManager } from "../ToolCallingManager.js"
import { ChatMemory, type MemoryError } from "../ChatMemory.js"
import type { Message, ToolResultMessage } from "../Message.js"
import type { Outcome, ToolCall } from "../ToolCall.js"
import { modelContent } from "../ToolCall.js"
import type { RunStore, StoreError } from "../RunStore.js"
import type { Observer, Watchers } from "./observe.js"
import type { Resumption } from "./suspension.js"

/** The state of one run as the loop advances it (owned by the run's fiber). */
export interface RunState extends Watchers {
  readonly ephemeral: boolean
  readonly history: Array<Message>
  state: { [slot: string]: unknown }
  /** Model calls made since the iteration budget (re)started. */
  iteration: number
  /** Model calls made by the run (across resumes). */
  modelCalls: number
  /** The run's budget: the agent's, with the run's limits and the raises of its resumes. */
  budget: Budget | undefined
  /** The settings of the run's model calls: the agent's, with the run's own over them. */
  readonly settings: ModelSettings
  /** The run's own settings (`RunOptions.settings`), kept in its checkpoints: a resume merges them over the agent's again. */
  readonly runSettings: ModelSettings | undefined
  /** The next model call's tool choice (the run's first call: the run's or agent's; then `"auto"`, after a resume too). */
  toolChoice: ToolChoice
  /** Final answers of this turn fed back for not matching the agent's `output`. */
  outputRetries: number
  usage: Usage
  readonly outcomes: Array<Outcome>
  /** What observes the run's levels, decided when it starts. */
  readonly observe: Observer
  /** Where the run is recorded. */
  readonly store: RunStore.Service
  /** The model the run talks to, read from its fiber when it starts (a run's context does not change). */
  readonly model: ChatModel.Service
  /** The manager of the run's batches, read likewise. */
  readonly manager: ToolCallingManager.Service
  /** The version of the run's record in the store; `undefined` while it has none (a run of an in-memory store that has not paused). */
  version: number | undefined
  /** The first failure to record a call's start or result in a durable store, or its refusal (the run was lost), if any (the batch then fails with it). */
  unrecorded: StoreError | RunAlreadyResumed | undefined
  /** What follows an iteration: the run's exit, or the next iteration (`loop.ts`). */
  readonly next: (exit: AgentExit.AgentExit | undefined) => Effect.Effect<AgentExit.AgentExit, any, any>
}

/**
 * One call of a batch. A call decided without running carries its `outcome` (a gate's or a
 * person's reject or reply, or a result already recorded); the others run, with their
 * arguments once decoded (`args`), or wait for a person (`pending`).
 */
export interface BatchItem {
  readonly call: ToolCall
  readonly outcome?: Outcome | undefined
  /** `true` once the call's arguments were decoded with its tool's `parameters` (before the gate): then `args` holds them. */
  readonly decoded?: true | undefined
  readonly args?: unknown
  /** For a suspended call being resumed: what its handler continues from. */
  readonly resumption?: Resumption | undefined
  /** For a call without outcome: what the gate (or, on resume, the person) said of it. */
  readonly verdict?: "proceed" | "pause" | undefined
  /** For a call the gate paused: why, as the gate said (`Gate.pause({ reason })`). */
  readonly reason?: string | undefined
}

/**
 * Appends messages to the run's history and, unless the conversation is ephemeral, to
 * memory: an ephemeral conversation lives in the run (and its checkpoints) only
 * (docs/decisions/004-ephemeral-conversations.md).
 */
export const appendMessages = (run: RunState, messages: ReadonlyArray<Message>): Effect.Effect<void, MemoryError> => {
  for (const message of messages) run.history.push(message)
  return run.ephemeral ? Effect.void : Effect.flatMap(ChatMemory, (memory) => memory.append(run.conversationId, messages))
}

/** The tool-result message the model is shown for an outcome. */
export const resultMessage = (outcome: Outcome): ToolResultMessage => ({
  _tag: "ToolResult",
  callId: outcome.callId,
  toolName: outcome.toolName,
  ...modelContent(outcome)
})
