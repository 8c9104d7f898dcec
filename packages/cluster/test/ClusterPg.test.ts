/**
 * A runner and a client-only member on PostgreSQL, in one process (two Layers, each its own
 * sharding): the client starts a run that pauses and decides it; two decisions at once.
 * Real time: the members poll the database.
 */
import { Decision } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Redacted, Result } from "effect"
import * as ClusterPg from "../src/ClusterPg.js"
import { AgentCluster } from "../src/index.js"
import { Bank, bankModel, executions, freePort, freshSchema } from "./fixtures.js"

/** A runner of `Bank` and a client, on a new schema: the client's services. */
const members = Effect.gen(function*() {
  const url = Redacted.make(yield* freshSchema)
  const port = yield* freePort
  yield* Layer.build(AgentCluster.runner(Bank).pipe(
    Layer.provide(bankModel),
    Layer.provide(ClusterPg.layer({ url, runnerAddress: { host: "127.0.0.1", port }, pollInterval: "200 millis" }))
  ))
  return yield* Layer.build(ClusterPg.layerClient({ url }))
})

describe("ClusterPg", () => {
  it.live("a client-only member starts a run, the runner pauses it, the client decides it, it completes", () =>
    Effect.gen(function*() {
      const client = yield* members
      const { runId } = yield* AgentCluster.start(Bank, { input: "pay 10" }).pipe(Effect.provide(client))
      const paused = yield* AgentCluster.run(Bank, { input: "pay 10", runId }).pipe(Effect.provide(client))
      expect(paused).toMatchObject({ _tag: "Paused", runId, kind: "approval", pending: [{ callId: "transfer-10", toolName: "transfer" }] })
      const done = yield* AgentCluster.decide(Bank, runId, Decision.approveAll(), { decidedBy: "ada" }).pipe(Effect.provide(client))
      expect(done).toMatchObject({ _tag: "Completed", runId, text: "paid 10" })
      expect([executions.get("lookup-10"), executions.get("transfer-10")]).toEqual([1, 1])
    }).pipe(Effect.scoped), 60_000)

  it.live("a decision sent twice at once: one runs the call, the other is refused naming who decided", () =>
    Effect.gen(function*() {
      const client = yield* members
      const paused = yield* AgentCluster.run(Bank, { input: "pay 11", conversationId: "c-11" }).pipe(Effect.provide(client))
      expect(paused._tag).toBe("Paused")
      const [ada, bob] = yield* Effect.all([
        AgentCluster.decide(Bank, paused.runId, Decision.approveAll(), { decidedBy: "ada" }),
        AgentCluster.decide(Bank, paused.runId, Decision.approveAll(), { decidedBy: "bob" })
      ].map((decide) => Effect.result(decide)), { concurrency: "unbounded" }).pipe(Effect.provide(client))
      const outcomes = [ada, bob].filter(Result.isSuccess).map((r) => r.success)
      const refusals = [ada, bob].filter(Result.isFailure).map((l) => l.failure)
      expect(outcomes).toMatchObject([{ _tag: "Completed", text: "paid 11" }])
      const winner = Result.isSuccess(ada) ? "ada" : "bob"
      expect(refusals).toMatchObject([{ _tag: "RunAlreadyResumed", runId: paused.runId, status: "completed", decidedBy: winner }])
      expect(executions.get("transfer-11")).toBe(1)
    }).pipe(Effect.scoped), 60_000)

  it.live("members joining a fresh database at once all start: the engine migrates its tables under its own lock; agentfx's location table, created by each, outlives the race (23505 on pg_type)", () =>
    Effect.gen(function*() {
      for (let round = 0; round < 3; round++) {
        const url = Redacted.make(yield* freshSchema)
        const joined = yield* Effect.all(
          Array.from({ length: 4 }, () => Effect.exit(Effect.scoped(Layer.build(ClusterPg.layerClient({ url }))))),
          { concurrency: "unbounded" }
        )
        expect(joined.filter(Exit.isFailure)).toEqual([])
      }
    }).pipe(Effect.scoped), 60_000)
})
