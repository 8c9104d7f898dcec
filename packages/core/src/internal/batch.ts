/**
 * A batch barrier: run the calls of a batch that have no outcome yet, with the manager; fold
 * their state writes in call order; then finish the batch — pause, or record the results and
 * complete when every call was return-direct.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Agent from "../Agent.js"
import type { RunAlreadyResumed, RunError } from "../AgentError.js"
import type * as AgentExit from "../AgentExit.js"
import type { MemoryError } from "../ChatMemory.js"
import { assistant, type ToolResultMessage } from "../Message.js"
import type { StoreError } from "../RunStore.js"
import type { Outcome, ToolCall } from "../ToolCall.js"
import type { ToolCallingManager } from "../ToolCallingManager.js"
import { semantic } from "../ToolError.js"
import type { FilePart } from "../Part.js"
import { depthOf, fileProblem, type Limits } from "./admit.js"
import type { BatchItem } from "./batchItem.js"
import { runs, Done, Runnable, type ToRun } from "./batchItem.js"
import type { CallToRun, Executed, Then } from "./executor.js"
import { effectiveTimeout, executeCalls, runCall } from "./executor.js"
import { finalAnswer, pause, pendingOf } from "./exits.js"
import { untouched } from "./observe.js"
import { batchWritten, type Recording } from "./record.js"
import type { RunState } from "./runState.js"
import { appendMessages, outcomesOf, resultMessage } from "./runState.js"
import { andThen } from "./settled.js"
import { settledExit } from "./settledExit.js"

/**
 * Runs every call of `batch` that has no outcome yet with the current manager, each inside
 * what observes a tool call, then finishes the batch. `undefined`: iterate again. Given
 * `iterate` (the loop), the batch's end goes on with the run — its exit, or `iterate` — in the
 * same continuation (no frame of its own).
 *
 * Not a generator: while the calls run, a run keeps one frame of its batch — the
 * continuation to `afterCalls` — and nothing of the loop (docs/performance.md).
 */
export const runBatch = (
  agent: Agent.Any,
  run: RunState,
  batch: ReadonlyArray<BatchItem>,
  environmentPause: boolean,
  iterate?: Iterate
): Effect.Effect<AgentExit.AgentExit | undefined, RunError, any> => {
  const toRun = batch.filter(runs)
  if (toRun.length === 0) return endedThen(agent, run, afterCalls(agent, run, batch, [], environmentPause), iterate)
  // a batch of one call keeps the call alone while it runs: its item is made again at the end
  const then = new BatchEnd(run, batch.length === 1 ? batch[0]!.call : batch, environmentPause, iterate)
  // one call that nothing observes or records runs in this fiber, the batch's end in its executor's place
  if (toRun.length === 1 && unobserved(run)) return runCall(agent.toolkit, toRun[0]!, run.manager, run.state, then)
  const runOne = runOneOf(agent, run, run.manager)
  const calls: Effect.Effect<Executed | ReadonlyArray<Executed>, never, any> = toRun.length === 1
    ? runOne(toRun[0]!)
    : executeCalls(agent.toolkit, toRun, run.manager.concurrency, runOne)
  return Effect.flatMap(calls, (executed) => then.ended(executed))
}

/** Nothing observes the run's tool calls (no listener, tracer or tool middleware) and nothing records them. */
const unobserved = (run: RunState) => run.observe.tool === untouched.tool && run.recorder.calls === undefined

/**
 * Runs one call of the batch inside what observes a tool call; every call of a batch reads the
 * same state snapshot. The run's recorder, when it records calls, records in `recording`'s
 * record (the run's own unless told) each call's start before its handler and its result as it
 * ends: a crash never runs it again unless it is idempotent.
 */
const runOneOf = (agent: Agent.Any, run: RunState, manager: ToolCallingManager.Service, recording: Recording = run) => {
  const state = run.state
  if (unobserved(run)) {
    return (item: CallToRun) => runCall(agent.toolkit, item, manager, state)
  }
  const calls = run.recorder.calls
  const checked = checkedBy(agent.limits)
  return (item: CallToRun) => {
    const tool = agent.toolkit.entries.get(item.call.name)
    return run.observe.tool(
      { runId: run.runId, conversationId: run.conversationId, call: item.call, tool, state },
      tool === undefined ? manager.defaultTimeout : effectiveTimeout(tool, manager),
      (input) => {
        const toRun = input.call === item.call ? item : { call: input.call }
        // held to the limits here too: what observes the call sees the result the history keeps
        if (calls === undefined) return runCall(agent.toolkit, toRun, manager, state, checked)
        const call = runCall(agent.toolkit, { ...toRun, started: calls.started(recording, toRun.call) }, manager, state, checked)
        return Effect.tap(call, (executed) => calls.result(recording, executed.result))
      }
    )
  }
}

/**
 * Runs calls of another run's batch — a crashed run's, in the turn that supersedes it — with
 * this run's manager and observers, recorded in `recording` (the crashed run's record); their
 * results in call order, their state writes folded into this run's state.
 */
export const runRecordedCalls = (
  agent: Agent.Any,
  run: RunState,
  recording: Recording,
  items: ReadonlyArray<ToRun>
): Effect.Effect<Array<Outcome>, StoreError | RunAlreadyResumed, any> =>
  Effect.flatMap(executeCalls(agent.toolkit, items, run.manager.concurrency, runOneOf(agent, run, run.manager, recording)), (executed) =>
    recording.unrecorded === undefined
      ? foldWrites(agent, run, executed.map((e) => withinLimits(e, agent.limits)))
      : Effect.fail(recording.unrecorded))

/**
 * A result beyond the agent's limits becomes a `semantic` failure naming the limit: the history
 * must stay serialisable, and small enough to send — a value nested deeper than `limits.depth`,
 * a file that is not one or holds more than `limits.fileBytes` inline.
 */
const withinLimits = (executed: Executed, limits: Limits): Executed => {
  const result = executed.result
  if (result._tag !== "Succeeded") return executed
  const problem = typeof result.value === "object" && depthOf(result.value, limits.depth) > limits.depth
    ? `returned a result nested deeper than ${limits.depth} levels (the agent's limit)`
    : filesProblem(result.files, limits)
  return problem === undefined ? executed : {
    result: { _tag: "Failed", callId: result.callId, toolName: result.toolName, error: semantic(`Tool "${result.toolName}" ${problem}`) },
    writes: undefined
  }
}

const filesProblem = (files: ReadonlyArray<FilePart> | undefined, limits: Limits): string | undefined => {
  if (files === undefined) return undefined
  for (const [i, file] of files.entries()) {
    const problem = fileProblem(file, limits, `file ${i + 1}`)
    if (problem !== undefined) return `returned ${problem}`
  }
  return undefined
}

const checkedBy = (limits: Limits): Then<Executed, never, never> => ({
  ended: (executed) => Effect.succeed(mayExceed(executed) ? withinLimits(executed, limits) : executed)
})

/** A result that may be beyond the limits: one whose value is an object or array, or that has files. */
const mayExceed = (executed: Executed) =>
  executed.result._tag === "Succeeded" && (typeof executed.result.value === "object" || executed.result.files !== undefined)

/**
 * What follows the calls: their batch's end, then the run's next step when it iterates. An
 * object, not a closure: the frame a waiting run keeps holds it (docs/performance.md, round 6).
 */
class BatchEnd implements Then<AgentExit.AgentExit | undefined, RunError, any> {
  constructor(
    readonly run: RunState,
    /** The batch, or the call of a batch of one call (its item was to run). */
    readonly batch: ReadonlyArray<BatchItem> | ToolCall,
    readonly environmentPause: boolean,
    readonly iterate: Iterate | undefined
  ) {}

  ended(executed: Executed | ReadonlyArray<Executed>): Effect.Effect<AgentExit.AgentExit | undefined, RunError, any> {
    const { run, batch } = this
    const agent = run.agent
    const all = Array.isArray(executed) ? executed : [executed as Executed]
    const items = isItems(batch) ? batch : [Runnable({ call: batch })]
    return endedThen(agent, run, afterCalls(agent, run, items, all, this.environmentPause), this.iterate)
  }
}

const isItems = (batch: ReadonlyArray<BatchItem> | ToolCall): batch is ReadonlyArray<BatchItem> => Array.isArray(batch)

/** The loop, to go on with after a batch (`loop.ts`); passed in, not imported (the loop imports the batch). */
type Iterate = (agent: Agent.Any, run: RunState) => Effect.Effect<AgentExit.AgentExit, RunError, any>

/**
 * The batch's end, then, given `iterate`, the run's exit or its next iteration: at once when the
 * end is settled (a batch without writes, of an ephemeral run).
 */
const endedThen = (
  agent: Agent.Any,
  run: RunState,
  ended: Effect.Effect<AgentExit.AgentExit | undefined, RunError, any>,
  iterate: Iterate | undefined
): Effect.Effect<AgentExit.AgentExit | undefined, RunError, any> =>
  iterate === undefined ? ended : andThen(ended, (exit) => exit === undefined ? iterate(agent, run) : Effect.succeed(exit))

/**
 * Ends the batch: folds the executed calls' writes, gives every call of the batch its outcome,
 * then pauses for a person when a call is suspended (a delegate's child paused) or, when asked
 * to, for calls that failed with `environment` errors; else records the results (in call
 * order), and completes when every call was a return-direct tool that succeeded (or was
 * answered). `undefined`: iterate again. Plain functions, not a generator: a batch without
 * writes ends without a run-loop step of its own (`settledExit`).
 */
const afterCalls = (
  agent: Agent.Any,
  run: RunState,
  items: ReadonlyArray<BatchItem>,
  executed: ReadonlyArray<Executed>,
  environmentPause: boolean
): Effect.Effect<AgentExit.AgentExit | undefined, RunError, any> => {
  // the batch's write, when none of its calls started or ended through the recorder (a middleware answered them)
  if (run.pendingBatch !== undefined) return Effect.andThen(batchWritten(run, undefined), Effect.suspend(() => afterCalls(agent, run, items, executed, environmentPause)))
  if (run.unrecorded !== undefined) return Effect.fail(run.unrecorded)
  const checked = executed.some(mayExceed) ? executed.map((e) => withinLimits(e, agent.limits)) : executed
  const folded = foldWrites(agent, run, checked)
  const now = settledExit(folded)
  return now !== undefined && Exit.isSuccess(now)
    ? finishBatch(agent, run, items, now.value, environmentPause)
    : Effect.flatMap(folded, (outcomes) => finishBatch(agent, run, items, outcomes, environmentPause))
}

const finishBatch = (
  agent: Agent.Any,
  run: RunState,
  items: ReadonlyArray<BatchItem>,
  outcomes: ReadonlyArray<Outcome>,
  environmentPause: boolean
): Effect.Effect<AgentExit.AgentExit | undefined, RunError, any> => {
  // one pass over the batch: its items done, and the calls suspended (a delegate's child paused)
  const batch: Array<Done> = new Array(items.length)
  let suspended: Array<Done> | undefined
  let approval = false
  let next = 0
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!
    const done = item._tag === "Done" ? item : Done({ call: item.call, outcome: outcomes[next++]! })
    batch[i] = done
    if (done.outcome._tag === "Suspended") {
      ;(suspended ??= []).push(done)
      if (done.outcome.kind === "approval") approval = true
    }
  }
  if (suspended !== undefined) return pause(agent, run, approval ? "approval" : "environment", batch, pendingOf(suspended))
  if (environmentPause) {
    const failed = batch.filter((item) => item.outcome._tag === "Failed" && item.outcome.error.reason === "environment")
    if (failed.length > 0) return pause(agent, run, "environment", batch, pendingOf(failed))
  }
  const results = new Array<ToolResultMessage>(batch.length)
  let direct = batch.length > 0
  const added = outcomesOf(run)
  for (let i = 0; i < batch.length; i++) {
    const { call, outcome } = batch[i]!
    added.push(outcome)
    results[i] = resultMessage(outcome)
    direct &&= agent.toolkit.entries.get(call.name)?.returnDirect === true && (outcome._tag === "Succeeded" || outcome._tag === "Replied")
  }
  const recorded = appendMessages(run, results) as Effect.Effect<undefined, MemoryError>
  return direct ? Effect.andThen(recorded, directAnswer(agent, run, batch)) : recorded
}

/** The results of a batch of return-direct tools as the run's answer. */
const directAnswer = (agent: Agent.Any, run: RunState, batch: ReadonlyArray<{ readonly outcome: Outcome }>) => {
  const text = batch.map(({ outcome }) => {
    const value = (outcome as { readonly value: unknown }).value
    return typeof value === "string" ? value : JSON.stringify(value)
  }).join("\n")
  return Effect.andThen(appendMessages(run, [assistant(text)]), finalAnswer(agent, run, text, false))
}

/**
 * Folds the writes of the executed calls into a new state, in call order. A write to an
 * undeclared slot turns its call into a `semantic` failure (and writes nothing); two writes
 * to one `last` slot are logged as a warning (the later call wins).
 */
const foldWrites = (agent: Agent.Any, run: RunState, executed: ReadonlyArray<Executed>): Effect.Effect<Array<Outcome>> =>
  executed.every((e) => e.writes === undefined) ? Effect.succeed(executed.map((e) => e.result)) : foldSomeWrites(agent, run, executed)

const foldSomeWrites = Effect.fnUntraced(function*(agent: Agent.Any, run: RunState, executed: ReadonlyArray<Executed>) {
  const state = { ...run.state }
  const lastWriters = new Map<string, Array<string>>()
  const results: Array<Outcome> = []
  for (const { result, writes } of executed) {
    if (writes === undefined || result._tag !== "Succeeded") {
      results.push(result)
      continue
    }
    const unknown = Object.keys(writes).filter((name) => !Object.hasOwn(agent.slots, name))
    if (unknown.length > 0) {
      const message = `Tool "${result.toolName}" wrote to undeclared state slot(s) ${unknown.map((n) => `"${n}"`).join(", ")}; declared: ${
        Object.keys(agent.slots).join(", ") || "none"
      }`
      yield* Effect.logError(message)
      results.push({ _tag: "Failed", callId: result.callId, toolName: result.toolName, error: semantic(message) })
      continue
    }
    for (const [name, write] of Object.entries(writes)) {
      const slot = agent.slots[name]!
      if (slot.kind === "last") lastWriters.set(name, [...(lastWriters.get(name) ?? []), result.callId])
      state[name] = slot.reduce(state[name], write)
    }
    results.push(result)
  }
  for (const [name, callIds] of lastWriters) {
    if (callIds.length > 1) {
      yield* Effect.logWarning(
        `State slot "${name}" (last) was written by ${callIds.length} calls of one batch (${callIds.join(", ")}); the last in call order wins`
      )
    }
  }
  run.state = state
  return results
})

