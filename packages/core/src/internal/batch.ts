/**
 * A batch barrier: run the undecided calls with the manager, fold their state writes in
 * call order, and give every call of the batch its outcome.
 */
import { Effect } from "effect"
import type * as Agent from "../Agent.js"
import type { Outcome } from "../ToolCall.js"
import type { ToolCallingManager } from "../ToolCallingManager.js"
import { semantic } from "../ToolError.js"
import type { Executed } from "./executor.js"
import { executeCalls } from "./executor.js"
import type { BatchItem, RunState } from "./loop.js"

/**
 * Folds the writes of the executed calls into a new state, in call order. A write to an
 * undeclared slot turns its call into a `semantic` failure (and writes nothing); two writes
 * to one `last` slot are logged as a warning (the later call wins).
 */
const foldWrites = Effect.fnUntraced(
  function*(agent: Agent.Any, run: RunState, executed: ReadonlyArray<Executed>) {
    if (executed.every((e) => e.writes === undefined)) return executed.map((e) => e.result)
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

/** Runs every call of `batch` that has no outcome yet, and returns the batch with all outcomes. */
export const runBatch: (
  agent: Agent.Any,
  run: RunState,
  batch: ReadonlyArray<BatchItem>,
  manager: ToolCallingManager.Service
) => Effect.Effect<Array<BatchItem & { readonly outcome: Outcome }>, never, any> =
  Effect.fnUntraced(function*(agent, run, batch, manager) {
    const toRun = batch.filter((item) => item.outcome === undefined)
    const executed = toRun.length === 0
      ? []
      : yield* executeCalls(agent.toolkit, toRun.map((item) => item.call), manager, run.state)
    const outcomes = executed.every((e) => e.writes === undefined)
      ? executed.map((e) => e.result)
      : yield* foldWrites(agent, run, executed)
    let next = 0
    return batch.map((item) => ({ call: item.call, outcome: item.outcome ?? outcomes[next++]! }))
  })
