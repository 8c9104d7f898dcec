/**
 * The state of one run as the loop advances it, and its history.
 */
import { Effect } from "effect"
import type * as Agent from "../Agent.js"
import type * as AgentExit from "../AgentExit.js"
import type { Usage } from "../ChatModel.js"
import { ChatMemory } from "../ChatMemory.js"
import type { Message, ToolResultMessage } from "../Message.js"
import type { Outcome, ToolCall } from "../ToolCall.js"
import { modelContent } from "../ToolCall.js"
import type { Emitter } from "./events.js"
import type { Resumption } from "./suspension.js"

/** The state of one run as the loop advances it (owned by the run's fiber). */
export interface RunState extends Emitter {
  /** Whether a tracer is installed (checked once, when the run starts): spans are made only then. */
  readonly traced: boolean
  readonly ephemeral: boolean
  readonly history: Array<Message>
  state: { [slot: string]: unknown }
  /** Model calls made since the iteration budget (re)started. */
  iteration: number
  usage: Usage
  readonly outcomes: Array<Outcome>
}

/** One call of a batch: decided calls carry their outcome; the rest run (or await a decision when pending). */
export interface BatchItem {
  readonly call: ToolCall
  readonly outcome?: Outcome | undefined
  /** For a suspended call being resumed: what its handler continues from. */
  readonly resumption?: Resumption | undefined
}

/**
 * What follows an iteration, given the run's exit or `undefined` to iterate again. A
 * module-level function of the run, not a closure over it: one allocation less per
 * iteration, and nothing more kept while a tool runs.
 */
export type Next<A> = (agent: Agent.Any, run: RunState, exit: AgentExit.AgentExit | undefined) => Effect.Effect<A, Agent.RunError, any>

/**
 * Appends messages to the run's history and, unless the conversation is ephemeral, to
 * memory: an ephemeral conversation lives in the run (and its checkpoints) only
 * (docs/decisions/004-ephemeral-conversations.md).
 */
export const appendMessages = (run: RunState, messages: ReadonlyArray<Message>) =>
  appendThen(run, messages, () => Effect.void)

/** `appendMessages`, then `k`; for an ephemeral conversation, at once, with no effect of its own. */
export const appendThen = <A, E, R>(run: RunState, messages: ReadonlyArray<Message>, k: () => Effect.Effect<A, E, R>) => {
  if (run.ephemeral) {
    for (const message of messages) run.history.push(message)
    return k()
  }
  return Effect.flatMap(ChatMemory, (memory) => {
    for (const message of messages) run.history.push(message)
    return Effect.flatMap(memory.append(run.conversationId, messages), k)
  })
}

/** The tool-result message the model is shown for an outcome. */
export const resultMessage = (outcome: Outcome): ToolResultMessage => ({
  _tag: "ToolResult",
  callId: outcome.callId,
  toolName: outcome.toolName,
  ...modelContent(outcome)
})

