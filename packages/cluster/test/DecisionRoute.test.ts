/**
 * A decision on a run paused where it is decided reads no record (decision 174, second round):
 * the client sends it to the entity it saw the run pause on, and the entity's resume reads the
 * paused record its own pause wrote. A route or a record gone stale is caught before anything
 * changed: a decision sent to another entity is refused `RunNotFound` there (the client reads the
 * record and sends it again), and a claim refused after a remembered read is made again on the
 * store's record.
 */
import { describe, expect, it } from "@effect/vitest"
import { Agent, Decision, ToolCallingManager } from "@agentfx/core"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { statementsOf } from "@agentfx/testing/Statements"
import { Effect, Layer, Option } from "effect"
import type { Entity } from "effect/cluster"
import { join } from "node:path"
import { AgentCluster } from "../src/index.js"
import type { Decide, Start } from "../src/internal/protocol.js"
import * as Routes from "../src/internal/routes.js"
import { Bank, bankAgent, bankModel, bankRunnerOn, executions, handlersOf, handlersOn, request, tempDir } from "./fixtures.js"

/** The reads of `agentfx_runs` an effect sends (statements traced in its fibers and their children). */
const recordReads = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(statementsOf(effect), ({ statements, value }) => ({
    value,
    reads: statements.filter((text) => /^SELECT \* FROM agentfx_runs\b/.test(text)).length
  }))

describe("a decision's route and read", () => {
  it.live("a decision on a run its entity paused reads no record; on another instance of the entity (its memory gone), one", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "read.db")
      const handlers = yield* handlersOf(bankAgent, bankModel, filename, "run:r-70")
      expect(yield* handlers.Start(request<Entity.Request<typeof Start>>(1n, { runId: "r-70", input: "pay 70" }))).toMatchObject({ _tag: "Paused" })
      const decided = yield* recordReads(handlers.Decide(request<Entity.Request<typeof Decide>>(2n, { runId: "r-70", decision: Decision.approveAll() })))
      expect(decided.value).toMatchObject({ _tag: "Completed", runId: "r-70" })
      expect(decided.reads).toBe(0)
      const first = yield* handlersOf(bankAgent, bankModel, filename, "run:r-71")
      expect(yield* first.Start(request<Entity.Request<typeof Start>>(1n, { runId: "r-71", input: "pay 71" }))).toMatchObject({ _tag: "Paused" })
      const next = yield* handlersOf(bankAgent, bankModel, filename, "run:r-71")
      const read = yield* recordReads(next.Decide(request<Entity.Request<typeof Decide>>(2n, { runId: "r-71", decision: Decision.approveAll() })))
      expect(read.value).toMatchObject({ _tag: "Completed", runId: "r-71" })
      expect(read.reads).toBe(1)
      expect([executions.get("transfer-70"), executions.get("transfer-71")]).toEqual([1, 1])
    }).pipe(Effect.scoped), 60_000)

  it.live("a run resumed and paused again elsewhere since its entity paused it: the decision's claim of the remembered pause is refused, and it is made again on the store's record", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "stale.db")
      const handlers = yield* handlersOf(bankAgent, bankModel, filename, "run:r-72")
      expect(yield* handlers.Start(request<Entity.Request<typeof Start>>(1n, { runId: "r-72", input: "twice 72" }))).toMatchObject({ _tag: "Paused" })
      // another process decides the first pause; the run pauses again, on its second transfer
      const elsewhere = yield* Agent.resume(bankAgent, "r-72", Decision.approveAll()).pipe(
        Effect.provide(Layer.mergeAll(Layer.fresh(SqliteStore.layer({ filename })), bankModel, ToolCallingManager.unbounded()))
      )
      expect(elsewhere).toMatchObject({ _tag: "Paused" })
      const done = yield* handlers.Decide(request<Entity.Request<typeof Decide>>(2n, { runId: "r-72", decision: Decision.approveAll() }))
      expect(done).toMatchObject({ _tag: "Completed", runId: "r-72" })
      expect([executions.get("first-72"), executions.get("second-72")]).toEqual([1, 1])
    }).pipe(Effect.scoped), 60_000)

  it.live("a decision sent to an entity its run is not on is refused RunNotFound there, nothing changed", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "elsewhere.db")
      const conversation = yield* handlersOn(bankAgent, bankModel, filename, "c-73")
      expect(yield* conversation.Start(request<Entity.Request<typeof Start>>(1n, { runId: "r-73", input: "pay 73", conversationId: "c-73" }))).toMatchObject({ _tag: "Paused" })
      const other = yield* handlersOf(bankAgent, bankModel, filename, "run:r-73")
      const refused = yield* Effect.flip(other.Decide(request<Entity.Request<typeof Decide>>(2n, { runId: "r-73", decision: Decision.approveAll() })))
      expect(refused).toMatchObject({ _tag: "Refused", runId: "r-73", reason: "RunNotFound" })
      const record = yield* Effect.provide(AgentCluster.get("r-73"), Layer.fresh(SqliteStore.layer({ filename })))
      expect(Option.map(record, (r) => r.status)).toEqual(Option.some("paused"))
      expect(executions.get("transfer-73")).toBeUndefined()
    }).pipe(Effect.scoped), 60_000)

  it.live("the client sends a decision on a run it saw paused to its entity without reading the record; a route gone wrong is refused there, then read", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "client.db")
      yield* Effect.gen(function*() {
        const paused = yield* AgentCluster.run(Bank, { input: "pay 74", conversationId: "c-74" })
        if (paused._tag !== "Paused") return expect.fail(`expected Paused, got ${paused._tag}`)
        const routed = yield* recordReads(AgentCluster.decide(Bank, paused.runId, Decision.approveAll()))
        expect(routed).toMatchObject({ value: { _tag: "Completed" }, reads: 0 })
        expect(Routes.find(Bank.entity, paused.runId)).toBeUndefined()
        const again = yield* AgentCluster.run(Bank, { input: "pay 75", conversationId: "c-75" })
        if (again._tag !== "Paused") return expect.fail(`expected Paused, got ${again._tag}`)
        Routes.remember(Bank.entity, again.runId, `run:${again.runId}`)
        const reread = yield* recordReads(AgentCluster.decide(Bank, again.runId, Decision.approveAll()))
        expect(reread).toMatchObject({ value: { _tag: "Completed" }, reads: 1 })
        expect([executions.get("transfer-74"), executions.get("transfer-75")]).toEqual([1, 1])
      }).pipe(Effect.provide(bankRunnerOn(filename)))
    }).pipe(Effect.scoped), 60_000)
})
