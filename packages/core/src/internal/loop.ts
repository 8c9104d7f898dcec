/**
 * The one loop: model call → gates → batch → fold state → results → next iteration.
 */
import { Effect } from "effect"
import type * as Agent from "../Agent.js"
import { MaxIterationsReached } from "../AgentError.js"
import type * as AgentExit from "../AgentExit.js"
import { addUsage, ChatModel } from "../ChatModel.js"
import type { Usage } from "../ChatModel.js"
import type * as Checkpoint from "../Checkpoint.js"
import { ChatMemory } from "../ChatMemory.js"
import type { Message, ToolResultMessage } from "../Message.js"
import { assistant } from "../Message.js"
import type { Outcome, ToolCall } from "../ToolCall.js"
import { modelContent } from "../ToolCall.js"
import { ToolCallingManager } from "../ToolCallingManager.js"
import { runBatch } from "./batch.js"
import * as CheckpointCodec from "./checkpoint.js"

/** The state of one run as the loop advances it (owned by the run's fiber). */
export interface RunState {
  readonly runId: string
  readonly conversationId: string
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
}

/** Appends messages to the run's history and to memory. */
export const appendMessages = (run: RunState, messages: ReadonlyArray<Message>) =>
  Effect.flatMap(ChatMemory, (memory) => {
    for (const message of messages) run.history.push(message)
    return memory.append(run.conversationId, messages)
  })

/** The tool-result message the model is shown for an outcome. */
export const resultMessage = (outcome: Outcome): ToolResultMessage => ({
  _tag: "ToolResult",
  callId: outcome.callId,
  toolName: outcome.toolName,
  ...modelContent(outcome)
})

const checkpointOf = (
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
  pending: ReadonlyArray<string>
): Effect.Effect<AgentExit.Paused> =>
  Effect.map(checkpointOf(agent, run, reason, batch, pending), (checkpoint) => ({
    _tag: "Paused",
    runId: run.runId,
    conversationId: run.conversationId,
    reason,
    pending: batch.filter((item) => pending.includes(item.call.id)).map((item) =>
      item.outcome?._tag === "Failed" ? { call: item.call, error: item.outcome.error } : { call: item.call }
    ),
    checkpoint
  }))

const completed = (run: RunState, text: string): AgentExit.Completed => ({
  _tag: "Completed",
  runId: run.runId,
  conversationId: run.conversationId,
  text,
  messages: run.history,
  state: run.state,
  toolCalls: run.outcomes,
  usage: run.usage
})

const directText = (outcomes: ReadonlyArray<Outcome>) =>
  outcomes.map((outcome) => {
    const value = (outcome as { readonly value: unknown }).value
    return typeof value === "string" ? value : JSON.stringify(value)
  }).join("\n")

/**
 * Ends a batch whose every call has an outcome: pauses for the environment when asked to,
 * else records the results (in call order), and completes when every call was a
 * return-direct tool that succeeded (or was answered). `undefined` means: next iteration.
 */
export const finishBatch: (
  agent: Agent.Any,
  run: RunState,
  batch: ReadonlyArray<BatchItem & { readonly outcome: Outcome }>,
  environmentPause: boolean
) => Effect.Effect<AgentExit.AgentExit | undefined, Agent.RunError> =
  Effect.fnUntraced(function*(agent, run, batch, environmentPause) {
    if (environmentPause) {
      const failed = batch.filter((item) => item.outcome._tag === "Failed" && item.outcome.error.errorClass === "environment")
      if (failed.length > 0) return yield* pause(agent, run, "environment", batch, failed.map((item) => item.call.id))
    }
    const outcomes = batch.map((item) => item.outcome)
    for (const outcome of outcomes) run.outcomes.push(outcome)
    yield* appendMessages(run, outcomes.map(resultMessage))
    const direct = batch.length > 0 && batch.every((item) =>
      agent.toolkit.entries.get(item.call.name)?.returnDirect === true &&
      (item.outcome._tag === "Succeeded" || item.outcome._tag === "Replied")
    )
    if (!direct) return undefined
    const text = directText(outcomes)
    yield* appendMessages(run, [assistant(text)])
    return completed(run, text)
  })

/** Gates every call serially, in call order, before any of them runs. */
const gateBatch = Effect.fnUntraced(
  function*(agent: Agent.Any, run: RunState, calls: ReadonlyArray<ToolCall>) {
    const batch: Array<BatchItem> = []
    const pending: Array<string> = []
    for (const call of calls) {
      const verdict = yield* agent.gate({ call, tool: agent.toolkit.entries.get(call.name), state: run.state })
      switch (verdict._tag) {
        case "Proceed":
          batch.push({ call })
          break
        case "Pause":
          batch.push({ call })
          pending.push(call.id)
          break
        case "Reject":
          batch.push({ call, outcome: { _tag: "Rejected", callId: call.id, toolName: call.name, ...(verdict.reason === undefined ? {} : { reason: verdict.reason }) } })
          break
        case "Reply":
          batch.push({ call, outcome: { _tag: "Replied", callId: call.id, toolName: call.name, value: verdict.value } })
          break
      }
    }
    return { batch, pending }
  })

/** Runs the undecided calls of a batch, then finishes it. */
export const executeBatch = (
  agent: Agent.Any,
  run: RunState,
  batch: ReadonlyArray<BatchItem>,
  environmentPause: boolean
) =>
  Effect.flatMap(
    Effect.flatMap(ToolCallingManager, (manager) => runBatch(agent, run, batch, manager)),
    (finished) => finishBatch(agent, run, finished, environmentPause)
  )

/** One iteration; `undefined` means: iterate again. */
const iterate = Effect.fnUntraced(
  function*(agent: Agent.Any, run: RunState) {
    if (run.iteration >= agent.maxIterations) {
      const checkpoint = yield* checkpointOf(agent, run, "max-iterations", [], [])
      return yield* Effect.fail(new MaxIterationsReached({ maxIterations: agent.maxIterations, checkpoint }))
    }
    run.iteration += 1
    const model = yield* ChatModel
    const response = yield* model.generate({
      system: agent.system,
      messages: run.history.slice(),
      tools: agent.toolDefinitions,
      toolChoice: "auto"
    })
    run.usage = addUsage(run.usage, response.usage)
    yield* appendMessages(run, [assistant(response.text, response.toolCalls)])
    if (response.toolCalls.length === 0) return completed(run, response.text)
    const { batch, pending } = yield* gateBatch(agent, run, response.toolCalls)
    if (pending.length > 0) return yield* pause(agent, run, "approval", batch, pending)
    return yield* executeBatch(agent, run, batch, agent.onEnvironmentError === "pause")
  })

/** Iterates until the run completes, pauses or fails. */
export const loop = Effect.fnUntraced(
  function*(agent: Agent.Any, run: RunState) {
    while (true) {
      const exit = yield* iterate(agent, run)
      if (exit !== undefined) return exit
    }
  })
