/**
 * A batch barrier: run the undecided calls with the manager, fold their state writes in
 * call order, give every call of the batch its outcome, then finish the batch (pause,
 * results, return-direct) and go on with the loop's `next`.
 */
import { Duration, Effect } from "effect"
import type * as Agent from "../Agent.js"
import type { ToolInput } from "../Middleware.js"
import type { Outcome, Result, ToolCall } from "../ToolCall.js"
import type * as Toolkit from "../Toolkit.js"
import { semantic } from "../ToolError.js"
import { compose, emit, now } from "./events.js"
import type { ExecuteOne, Executed } from "./executor.js"
import { effectiveTimeout, executeCalls } from "./executor.js"
import { assistant } from "../Message.js"
import { ToolCallingManager } from "../ToolCallingManager.js"
import { completed, pause, pendingOf } from "./exits.js"
import type { BatchItem, Next, RunState } from "./runState.js"
import { appendThen, resultMessage } from "./runState.js"
import { withService } from "./service.js"
import { annotate, withSpan } from "./tracing.js"

const toolEvent = (result: Exclude<Result, { readonly _tag: "Suspended" }>, durationMillis: number) => () =>
  result._tag === "Succeeded"
    ? { _tag: "ToolSucceeded" as const, callId: result.callId, toolName: result.toolName, value: result.value, durationMillis }
    : result.error._tag === "ToolTimeout"
    ? {
      _tag: "ToolTimedOut" as const,
      callId: result.callId,
      toolName: result.toolName,
      timeoutMillis: Duration.toMillis(result.error.timeout),
      durationMillis
    }
    : { _tag: "ToolFailed" as const, callId: result.callId, toolName: result.toolName, error: result.error, durationMillis }

const toolSpanAttributes = (call: ToolCall, tool: Toolkit.Entry | undefined, manager: ToolCallingManager.Service) => () => {
  const timeout = tool === undefined ? undefined : effectiveTimeout(tool, manager)
  return {
    "agentfx.tool.name": call.name,
    "agentfx.tool.call_id": call.id,
    ...(timeout?._tag === "Some" ? { "agentfx.tool.timeout_ms": Duration.toMillis(timeout.value) } : {})
  }
}

const annotateOutcome = (run: RunState, result: Result) =>
  annotate(run.traced, () => ({
    "agentfx.tool.outcome": result._tag === "Failed" ? result.error._tag : result._tag === "Succeeded" ? "success" : "suspended"
  }))

/** A call with listeners or middleware: events around the middleware onion around the call. */
const observedCall = Effect.fnUntraced(
  function*(agent: Agent.Any, run: RunState, call: ToolCall, tool: Toolkit.Entry | undefined, execute: ExecuteOne<any>) {
    let writes: Executed["writes"]
    const body = compose<ToolInput, Result, never>(
      agent.middleware.tool,
      (input) =>
        Effect.map(execute(input.call), (executed) => {
          writes = executed.writes
          return executed.result
        })
    )
    yield* emit(run, () => ({ _tag: "ToolStarted", callId: call.id, toolName: call.name, args: call.args }))
    const started = yield* now(run)
    const result = yield* body({ runId: run.runId, conversationId: run.conversationId, call, tool, state: run.state })
    const finished = yield* now(run)
    if (result._tag !== "Suspended") yield* emit(run, toolEvent(result, finished - started))
    yield* annotateOutcome(run, result)
    return { result, writes }
  }
)

/**
 * Wraps one call in its span, its events and the agent's tool middleware (outermost first),
 * all outside the call's permit and timeout. State writes pass through the middleware
 * untouched; they apply when the returned result is a success. `undefined` when there is
 * nothing to wrap (no listener, no tool middleware, no tracer): calls then run as they are.
 */
const aroundCall = (agent: Agent.Any, run: RunState, manager: ToolCallingManager.Service) =>
  agent.middleware.tool.length === 0 && run.sinks.length === 0 && !run.traced
    ? undefined
    : (call: ToolCall, execute: ExecuteOne<any>): Effect.Effect<Executed, never, any> => {
      const tool = agent.toolkit.entries.get(call.name)
      return withSpan(run.traced, "agentfx.tool", toolSpanAttributes(call, tool, manager))(
        observedCall(agent, run, call, tool, execute)
      )
    }

/**
 * Folds the writes of the executed calls into a new state, in call order. A write to an
 * undeclared slot turns its call into a `semantic` failure (and writes nothing); two writes
 * to one `last` slot are logged as a warning (the later call wins).
 */
const foldWrites = Effect.fnUntraced(
  function*(agent: Agent.Any, run: RunState, executed: ReadonlyArray<Executed>) {
    const state = { ...run.state }
    const lastWriters = new Map<string, Array<string>>()
    const results: Array<Outcome> = []
    for (const { result, writes } of executed) {
      if (writes === undefined || result._tag !== "Succeeded") {
        results.push(result)
        continue
      }
      const unknown = Object.keys(writes).filter((name) => !(name in agent.slots))
      if (unknown.length > 0) {
        const message = `Tool "${result.toolName}" wrote to undeclared state slot(s) ${unknown.map((n) => `"${n}"`).join(", ")}; declared: ${Object.keys(agent.slots).join(", ") || "none"}`
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

const resumptionsOf = (items: ReadonlyArray<BatchItem>) =>
  items.some((item) => item.resumption !== undefined)
    ? new Map(items.flatMap((item) => item.resumption === undefined ? [] : [[item.call.id, item.resumption] as const]))
    : undefined

const withOutcomes = (batch: ReadonlyArray<BatchItem>, outcomes: ReadonlyArray<Outcome>) => {
  let next = 0
  return batch.map((item) => ({ call: item.call, outcome: item.outcome ?? outcomes[next++]! }))
}

/** A batch whose every call has its outcome. */
type FinishedBatch = Array<BatchItem & { readonly outcome: Outcome }>

/** What follows the calls of a batch: fold their writes, finish the batch, then `next`. One closure per batch. */
const afterCalls = <A>(
  agent: Agent.Any,
  run: RunState,
  batch: ReadonlyArray<BatchItem>,
  environmentPause: boolean,
  next: Next<A>
) =>
(executed: Executed | Array<Executed>): Effect.Effect<A, Agent.RunError, any> => {
  const all = Array.isArray(executed) ? executed : [executed]
  return all.every((e) => e.writes === undefined)
    ? finishBatch(agent, run, withOutcomes(batch, all.map((e) => e.result)), environmentPause, next)
    : Effect.flatMap(foldWrites(agent, run, all), (outcomes) => finishBatch(agent, run, withOutcomes(batch, outcomes), environmentPause, next))
}

/**
 * Runs every call of `batch` that has no outcome yet with the current manager, finishes the
 * batch, then `next`. What follows the calls takes the place of the batch's last frame: a
 * run suspended in a tool keeps no frame of the batch or the loop alive
 * (docs/performance.md).
 */
export const executeBatch = <A>(
  agent: Agent.Any,
  run: RunState,
  batch: ReadonlyArray<BatchItem>,
  environmentPause: boolean,
  next: Next<A>
): Effect.Effect<A, Agent.RunError, any> =>
  withService(ToolCallingManager, (manager) => {
    const toRun = batch.filter((item) => item.outcome === undefined)
    const then = afterCalls(agent, run, batch, environmentPause, next)
    if (toRun.length === 0) return then([])
    return executeCalls(
      agent.toolkit,
      toRun.map((item) => item.call),
      manager,
      run.state,
      aroundCall(agent, run, manager),
      resumptionsOf(toRun),
      then
    )
  })

/**
 * Ends a batch whose every call has an outcome, then `next`: pauses for the environment when
 * asked to, else records the results (in call order), and completes when every call was a
 * return-direct tool that succeeded (or was answered); `undefined` means: next iteration.
 */
const finishBatch = <A>(
  agent: Agent.Any,
  run: RunState,
  batch: FinishedBatch,
  environmentPause: boolean,
  next: Next<A>
): Effect.Effect<A, Agent.RunError, any> => {
  const suspended = batch.filter((item) => item.outcome._tag === "Suspended")
  if (suspended.length > 0) {
    const reason = suspended.some((item) => item.outcome._tag === "Suspended" && item.outcome.reason === "approval")
      ? "approval"
      : "environment"
    return Effect.flatMap(pause(agent, run, reason, batch, pendingOf(suspended)), (paused) => next(agent, run, paused))
  }
  if (environmentPause) {
    const failed = batch.filter((item) => item.outcome._tag === "Failed" && item.outcome.error.errorClass === "environment")
    if (failed.length > 0) return Effect.flatMap(pause(agent, run, "environment", batch, pendingOf(failed)), (paused) => next(agent, run, paused))
  }
  const outcomes = batch.map((item) => item.outcome)
  for (const outcome of outcomes) run.outcomes.push(outcome)
  const direct = batch.length > 0 && batch.every((item) =>
    agent.toolkit.entries.get(item.call.name)?.returnDirect === true &&
    (item.outcome._tag === "Succeeded" || item.outcome._tag === "Replied")
  )
  return appendThen(run, outcomes.map(resultMessage), () => {
    if (!direct) return next(agent, run, undefined)
    const text = directText(outcomes)
    return appendThen(run, [assistant(text)], () => next(agent, run, completed(run, text)))
  })
}

const directText = (outcomes: ReadonlyArray<Outcome>) =>
  outcomes.map((outcome) => {
    const value = (outcome as { readonly value: unknown }).value
    return typeof value === "string" ? value : JSON.stringify(value)
  }).join("\n")

