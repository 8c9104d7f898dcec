/**
 * What a caller can get wrong reaches it as a typed refusal naming the problem, never as a
 * defect, and changes nothing: no record, the paused run still resumable.
 */
import { Decision } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { join } from "node:path"
import { AgentCluster } from "../src/index.js"
import { Bank, bankRunnerOn, executions, tempDir } from "./fixtures.js"


describe("bad input to the cluster's client", () => {
  it.live("ids, inputs and decisions that cannot be: Refused naming the problem, nothing stored, the paused run still decided once", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "cluster.db")
      yield* Effect.gen(function*() {
        const refusedStart = (options: AgentCluster.StartOptions, runId: string) =>
          Effect.gen(function*() {
            const error = yield* Effect.flip(AgentCluster.run(Bank, { ...options, runId }))
            expect(Option.isNone(yield* AgentCluster.get(runId))).toBe(true)
            return error
          })
        expect(yield* refusedStart({ input: 42 as never }, "r-number")).toMatchObject({
          _tag: "Refused",
          reason: "InvalidRunInput",
          message: expect.stringMatching(/^Invalid run input: [\s\S]*\["input"\]/)
        })
        expect(yield* refusedStart({ input: "pay 5", conversationId: "" }, "r-conversation")).toMatchObject({
          reason: "InvalidRunInput",
          message: `Invalid run input: conversationId "" must be a string of 1 to 256 characters, none of them a control character or a lone surrogate`
        })
        expect(yield* Effect.flip(AgentCluster.run(Bank, { input: "pay 5", runId: "a\nb" }))).toMatchObject({
          reason: "InvalidRunInput",
          message: expect.stringContaining(`runId "a\\nb" must be a string of 1 to 256 characters`)
        })

        const paused = yield* AgentCluster.run(Bank, { input: "pay 6", conversationId: "c-6" })
        if (paused._tag !== "Paused") return expect.fail(`expected Paused, got ${paused._tag}`)
        expect(yield* Effect.flip(AgentCluster.decide(Bank, paused.runId, { _tag: "Bogus" } as never))).toMatchObject({
          _tag: "Refused",
          reason: "DecisionMismatch",
          message: expect.stringMatching(/^Not a decision this cluster can send: [\s\S]*\["decision"\]/)
        })
        expect(yield* Effect.flip(AgentCluster.decide(Bank, paused.runId, Decision.approveAll(), { revision: 1.5 }))).toMatchObject({
          reason: "DecisionMismatch",
          message: expect.stringContaining(`["revision"]`)
        })
        expect(Option.map(yield* AgentCluster.get(paused.runId), (r) => r.status)).toEqual(Option.some("paused"))
        expect(yield* AgentCluster.decide(Bank, paused.runId, Decision.approveAll())).toMatchObject({ _tag: "Completed", text: "paid 6" })
        expect(executions.get("transfer-6")).toBe(1)
      }).pipe(Effect.provide(bankRunnerOn(filename)))
    }).pipe(Effect.scoped), 30_000)
})
