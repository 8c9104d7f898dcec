/**
 * The state of one run as the loop advances it, and its history.
 */
import * as Effect from "effect/Effect"
import type { RunAlreadyResumed } from "../AgentError.js"
import type * as Agent from "../Agent.js"
import type { Budget } from "../Budget.js"
import type { ChatModel, ModelSettings, ToolChoice, Usage } from "../ChatModel.js"
import { addUsage, isTokenCount } from "../ChatModel.js"
import type * as ContextWindow from "../ContextWindow.js"
import type { ToolCallingManager } from "../ToolCallingManager.js"
import { ChatMemory, type MemoryError } from "../ChatMemory.js"
import type { Message, ToolResultMessage } from "../Message.js"
import type { Outcome } from "../ToolCall.js"
import { modelContent } from "../ToolCall.js"
import type { RunStore, StoreError } from "../RunStore.js"
import type { Observer, Watchers } from "./observe.js"
import type { PendingBatch, Recorder } from "./record.js"

/** The state of one run as the loop advances it (owned by the run's fiber). */
export interface RunState extends Watchers {
  readonly agent: Agent.Any
  readonly ephemeral: boolean
  /** The conversation as the run sees it; replaced, not grown, while short (`appendMessages`). */
  history: Array<Message>
  state: { [slot: string]: unknown }
  /** Model calls made since the iteration budget (re)started. */
  iteration: number
  /** Model calls made by the run (across resumes). */
  modelCalls: number
  /** The run's budget: the agent's, with the run's limits and the raises of its resumes. */
  budget: Budget | undefined
  /** The run's own settings (`RunOptions.settings`), over the agent's in its model calls (`settingsOf`), kept in its checkpoints: a resume merges them over the agent's again. */
  readonly runSettings: ModelSettings | undefined
  /** The next model call's tool choice (the run's first call: the run's or agent's; then `"auto"`, after a resume too). */
  toolChoice: ToolChoice
  /** The run's own context policy (`RunOptions.context`): its model calls' policy when given (else the agent's), kept in its checkpoints like its settings. */
  readonly runContext: ContextWindow.Policy | undefined
  /** The index of the history's last compaction entry (-1: none); `undefined` until the run's first model call looks. */
  compacted: number | undefined
  /** What the run's token estimates are scaled by: how far the estimate of its last model call that reported its input was off. */
  tokenScale: number
  /** The estimate (unscaled) of the last view the run's model was sent under a policy; 0 when not estimated. */
  estimated: number
  /** Final answers of this run fed back for not matching the agent's `output`; kept across its pauses (`Checkpoint.outputRetries`). */
  outputRetries: number
  usage: Usage
  /** The outcomes of the run's calls, in order; `noOutcomes` until its first batch ends (`outcomesOf`). */
  outcomes: Array<Outcome>
  /** What observes the run's levels, decided when it starts. */
  readonly observe: Observer
  /** Where the run is recorded: read here; written through its recorder. */
  readonly store: RunStore.Service
  /** Every write of the run to its record (and to the records it supersedes), chosen once from its store. */
  readonly recorder: Recorder
  /** The model the run talks to, read from its fiber when it starts (a run's context does not change). */
  readonly model: ChatModel.Service
  /** The manager of the run's batches, read likewise. */
  readonly manager: ToolCallingManager.Service
  /** The version of the run's record in the store; `undefined` while it has none (a run of an in-memory store that has not paused). */
  version: number | undefined
  /** The first failure to record a call's start or result in a durable store, or its refusal (the run was lost), if any (the batch then fails with it). */
  unrecorded: StoreError | RunAlreadyResumed | undefined
  /** The run's batch, written with its first call's start (`record.ts`); `undefined` once written, or when there is none. */
  pendingBatch: PendingBatch | undefined
  /** The ids of the tool calls in the history, `undefined` until the run's first answer with calls reads them (`callIdsOf`). */
  callIds: Set<string> | undefined
  /**
   * Messages appended to the history but not yet to memory: a durable run whose store writes
   * its conversations (`RunStore.conversations` is its memory) writes them with its next record
   * write, in one step with it (`record.ts`). `undefined` while there are none.
   */
  unwritten: Array<Message> | undefined
}

/**
 * The ids of the calls in the run's history (its conversation's earlier turns included), read
 * once, then kept as calls are admitted: a model that reuses an id gets a fresh one (`admit`).
 */
export const callIdsOf = (run: RunState): Set<string> => {
  if (run.callIds !== undefined) return run.callIds
  const ids = new Set<string>()
  for (const message of run.history) if (message._tag === "Assistant") for (const call of message.toolCalls) ids.add(call.id)
  return (run.callIds = ids)
}

/** The outcomes of a run whose calls have none yet: one frozen array, not one per run (with `noSlots`: 88 B per suspended run, decision 169). */
export const noOutcomes: Array<Outcome> = Object.freeze([]) as never

/** The run's outcomes, to add to: its own array from its first batch on. */
export const outcomesOf = (run: RunState): Array<Outcome> => run.outcomes === noOutcomes ? (run.outcomes = []) : run.outcomes

/** The length up to which a history is copied on append rather than grown. */
const exactUpTo = 16

/**
 * Appends messages to the run's history and, unless the conversation is ephemeral, to
 * memory: an ephemeral conversation lives in the run (and its checkpoints) only
 * (docs/decisions/004-ephemeral-conversations.md). A durable run whose record is written with
 * its conversation (`RunStore.conversations` is its memory) keeps them for its next record
 * write instead (`unwritten`): the record, not the memory, is what a crash is recovered from
 * (decision 161).
 */
export const appendMessages = (run: RunState, messages: ReadonlyArray<Message>): Effect.Effect<void, MemoryError> => {
  const history = run.history
  // a short history is copied at its exact size: an array grown by `push` keeps 16 spare slots,
  // which a run waiting in a tool would keep too (docs/performance.md, round 6)
  if (history.length + messages.length <= exactUpTo) run.history = history.concat(messages)
  else for (const message of messages) history.push(message)
  return run.ephemeral ? Effect.void : Effect.flatMap(ChatMemory, (memory) => {
    if (run.version === undefined || memory !== run.store.conversations || !run.recorder.durable) return memory.append(run.conversationId, messages)
    if (run.unwritten === undefined) run.unwritten = [...messages]
    else for (const message of messages) run.unwritten.push(message)
    return Effect.void
  })
}

/**
 * Adds a model call's usage to the run's: a token count that is no count (infinite, NaN,
 * negative) is taken as 0, as the adapters take it (decision 066), so that the run's usage stays
 * a number its checkpoint can hold.
 */
export const spend = (run: RunState, usage: Usage): void => {
  run.usage = addUsage(
    run.usage,
    isTokenCount(usage.inputTokens) && isTokenCount(usage.outputTokens) && isTokenCount(usage.totalTokens) ? usage : {
      inputTokens: isTokenCount(usage.inputTokens) ? usage.inputTokens : 0,
      outputTokens: isTokenCount(usage.outputTokens) ? usage.outputTokens : 0,
      totalTokens: isTokenCount(usage.totalTokens) ? usage.totalTokens : 0
    }
  )
}

/** The tool-result message the model is shown for an outcome. */
export const resultMessage = (outcome: Outcome): ToolResultMessage => {
  // not a spread of the content: a literal of one shape is made at once (issue 34)
  const { content, files, isError } = modelContent(outcome)
  return files === undefined
    ? { _tag: "ToolResult", callId: outcome.callId, toolName: outcome.toolName, isError, content }
    : { _tag: "ToolResult", callId: outcome.callId, toolName: outcome.toolName, isError, content, files }
}
