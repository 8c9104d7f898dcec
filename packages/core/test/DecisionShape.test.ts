/**
 * A value given to `Agent.resume` as a decision that is not a `Decision` — a plain object
 * where `ByCall` holds a `Map`, `null`, an unknown call decision — is refused with a typed
 * `InvalidRunInput` before anything is read or consumed, never a defect.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Agent, Decision, RunStore, ScriptedChatModel } from "../src/index.js"
import { type Transfer, transferTool } from "./agentFixtures.js"

const howToBuild = "(build one with Decision.approveAll, Decision.byCall, …; decode an HTTP body with Schema.decodeUnknownEffect(Decision.Decision))"

const cases: ReadonlyArray<{ readonly label: string; readonly decision: unknown; readonly problem: string }> = [
  {
    label: "ByCall with a plain object of decisions",
    decision: { _tag: "ByCall", decisions: { call_1: { _tag: "Approve" } } },
    problem: `decisions: Expected ReadonlyMap, got {"call_1":{"_tag":"Approve"}}`
  },
  { label: "null", decision: null, problem: "Expected Decision, got null" },
  {
    label: "ByCall with a Map holding an unknown call decision",
    decision: { _tag: "ByCall", decisions: new Map([["call_1", { _tag: "Yes" }]]) },
    problem: `decisions.entries.0.1: Expected CallDecision, got {"_tag":"Yes"}`
  }
]

describe("Decision shape (Agent.resume)", () => {
  it.effect("a decision of the wrong shape is InvalidRunInput naming what is wrong; nothing consumed, the run then resumes with approveAll", () =>
    Effect.gen(function*() {
      const ran: Array<Transfer> = []
      const agent = Agent.make({ name: "shape-bank", tools: [transferTool(ran)] })
      const paused = yield* Agent.run(agent, { input: "pay" })
      if (paused._tag !== "Paused") return yield* Effect.die(new Error(`expected a pause, got ${paused._tag}`))
      const runId = paused.checkpoint.runId
      const refusals = yield* Effect.forEach(cases, ({ decision }) =>
        Effect.flip(Agent.resume(agent, runId, decision as Decision.Decision)).pipe(
          Effect.map((error) => [error._tag, error._tag === "InvalidRunInput" ? error.problems : error.message])
        ))
      expect(refusals).toEqual(cases.map(({ problem }) => ["InvalidRunInput", [`the decision is not a Decision: ${problem} ${howToBuild}`]]))
      expect(ran).toEqual([])
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(1)
      const done = yield* Agent.resume(agent, runId, Decision.approveAll())
      expect([done._tag, ran]).toEqual(["Completed", [{ to: "ada", amount: 250 }]])
    }).pipe(
      Effect.provide(ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls({ id: "call_1", name: "transfer", args: { to: "ada", amount: 250 } }),
        ScriptedChatModel.text("done")
      ])),
      Effect.provide(RunStore.layerMemory())
    ))
})
