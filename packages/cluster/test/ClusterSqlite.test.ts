/**
 * The embedded cluster, in real time (the engine polls its file): a run started, paused,
 * decided and completed through the entity; one runner per file.
 */
import { Decision } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { join } from "node:path"
import { AgentCluster, ClusterSqlite } from "../src/index.js"
import { Bank, bankModel, executions, tempDir } from "./fixtures.js"

const runnerOn = (filename: string) =>
  AgentCluster.runner(Bank).pipe(Layer.provide(bankModel), Layer.provideMerge(ClusterSqlite.layer({ filename })))

describe("ClusterSqlite", () => {
  it.live("a run pauses for approval, is decided through its entity and completes; each call ran once", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const outcome = yield* Effect.gen(function*() {
        const paused = yield* AgentCluster.run(Bank, { input: "pay 1", conversationId: "c-1" })
        expect(paused._tag).toBe("Paused")
        if (paused._tag !== "Paused") return paused
        expect(paused.pending.map((p) => p.callId)).toEqual(["transfer-1"])
        expect(Option.map(yield* AgentCluster.get(paused.runId), (r) => r.status)).toEqual(Option.some("paused"))
        const done = yield* AgentCluster.decide(Bank, paused.runId, Decision.approveAll(), { decidedBy: "ada", revision: paused.revision })
        expect(Option.map(yield* AgentCluster.get(paused.runId), (r) => [r.status, r.decidedBy])).toEqual(Option.some(["completed", "ada"]))
        return done
      }).pipe(Effect.provide(runnerOn(join(dir, "cluster.db"))))
      expect(outcome).toMatchObject({ _tag: "Completed", text: "paid 1", conversationId: "c-1" })
      expect([executions.get("lookup-1"), executions.get("transfer-1")]).toEqual([1, 1])
    }).pipe(Effect.scoped), 30_000)
})
