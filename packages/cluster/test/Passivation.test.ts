/**
 * `AgentCluster.runner`'s `idleTimeout`, on the embedded cluster with the test clock driving the
 * engine's reaper: an idle entity is passivated after its idle timeout and not before; a
 * decision, a conversation's next turn and a cancel take it on again and continue; decisions
 * sent as the reaper passivates their entities each complete once.
 *
 * The reaper checks every `max(min(idleTimeout, 30 s), 5 s)` from the runner's start and
 * passivates an entity idle for at least `idleTimeout` with no message in flight; the runs here
 * pause 5 s after the start, so the checks before `5 s + idleTimeout` find them idle for less.
 */
import { ChatMemory, Decision, ToolCallingManager } from "@agentfx/core"
import { Sharding } from "effect/cluster"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { join } from "node:path"
import * as ClusterSqlite from "../src/ClusterSqlite.js"
import { AgentCluster, RunLocation } from "../src/index.js"
import { Bank, bankModel, executions, gate, tempDir } from "./fixtures.js"

const runnerOn = (filename: string, options?: AgentCluster.RunnerOptions) =>
  AgentCluster.runner(Bank, options).pipe(
    Layer.provide([bankModel, ToolCallingManager.unbounded()]),
    Layer.provideMerge(ClusterSqlite.layer({ filename, pollInterval: "1 second", shutdownTimeout: "100 millis" }))
  )

/** Runs `effect` while the test clock moves on a millisecond at a time (the engine sleeps briefly as it starts and sends). */
const driven = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(effect)
    for (let ms = 0; ms < 5_000; ms++) {
      const exit = fiber.pollUnsafe()
      if (exit !== undefined) return yield* exit
      yield* TestClock.adjust("1 millis")
    }
    return yield* Effect.die(new Error("not done after 5 s of the test clock"))
  })

/** The entities live in the runner once the fibers the clock woke have run. */
const live = Effect.gen(function*() {
  for (let i = 0; i < 100; i++) yield* Effect.yieldNow
  return yield* Effect.flatMap(Sharding.Sharding, (sharding) => sharding.activeEntityCount)
})

/** Moves the test clock to `at` milliseconds since the runner's start. */
const at = (ms: number) => Effect.flatMap(Clock.currentTimeMillis, (now) => TestClock.adjust(`${Math.max(0, ms - now)} millis`))

/** A runner on a new file with `options`; the test clock at 5 s once it is built. */
const started = (options?: AgentCluster.RunnerOptions) =>
  Effect.gen(function*() {
    const runner = yield* driven(Layer.build(runnerOn(join(yield* tempDir, "cluster.db"), options)))
    yield* at(5_000)
    return runner
  })

/** `runId`'s run, paused: its revision. */
const paused = (options: AgentCluster.StartOptions) =>
  Effect.flatMap(driven(AgentCluster.run(Bank, options)), (outcome) =>
    outcome._tag === "Paused" ? Effect.succeed(outcome) : Effect.die(new Error(`expected Paused, got ${outcome._tag}`)))

/** A paused run's entity is live until `5 s + idle` (ms) and gone at the reaper's next check after it, `5 s + idle + period`. */
const passivatedAfter = (idle: number, period: number, options?: AgentCluster.RunnerOptions) =>
  Effect.gen(function*() {
    yield* Effect.provide(
      Effect.gen(function*() {
        yield* paused({ input: "pay 1" })
        expect(yield* live).toBe(1)
        yield* at(5_000 + idle - 100)
        expect(yield* live).toBe(1)
        yield* at(Math.ceil((5_000 + idle) / period) * period + 100)
        expect(yield* live).toBe(0)
      }),
      yield* started(options)
    )
  })

describe("passivation (AgentCluster.runner's idleTimeout)", () => {
  it.effect("by default an idle entity is passivated 10 s after its last reply, not before: live at 14.9 s though the reaper checked at 10 s, gone at its check at 20 s", () =>
    passivatedAfter(10_000, 10_000), 30_000)

  it.effect("idleTimeout is the entity's: with 1 minute it is live at 64.9 s though the reaper checked at 30 s and 60 s, gone at its check at 90 s", () =>
    passivatedAfter(60_000, 30_000, { idleTimeout: "1 minute" }), 30_000)

  it.effect("after passivation a decision takes the entity on again and completes the run once; the conversation's next turn follows it in order; a cancel ends a run paused and passivated", () =>
    Effect.gen(function*() {
      yield* Effect.provide(
        Effect.gen(function*() {
          const first = yield* paused({ input: "pay 11", conversationId: "c-11" })
          const noted = yield* RunLocation.of(Option.getOrThrow(yield* AgentCluster.get(first.runId)))
          yield* at(20_100)
          expect(yield* live).toBe(0)

          const decided = yield* driven(AgentCluster.decide(Bank, first.runId, Decision.approveAll(), { decidedBy: "ada", revision: first.revision }))
          expect(decided).toMatchObject({ _tag: "Completed", text: "paid 11" })
          expect([executions.get("lookup-11"), executions.get("transfer-11")]).toEqual([1, 1])
          expect(yield* live).toBe(1)
          const again = yield* RunLocation.of(Option.getOrThrow(yield* AgentCluster.get(first.runId)))
          expect(Option.map(again, (l) => l.since > Option.getOrThrow(noted).since)).toEqual(Option.some(true))

          yield* at(40_100)
          expect(yield* live).toBe(0)
          expect(yield* driven(AgentCluster.run(Bank, { input: "hello", conversationId: "c-11" }))).toMatchObject({ _tag: "Completed", text: "hello" })
          const history = yield* Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("c-11"))
          expect(history.filter((m) => m._tag === "User").map((m) => m._tag === "User" ? m.text : "")).toEqual(["pay 11", "hello"])

          const second = yield* paused({ input: "pay 12", conversationId: "c-11" })
          yield* at(60_100)
          expect(yield* live).toBe(0)
          yield* driven(AgentCluster.cancel(Bank, second.runId, { cancelledBy: "bob" }))
          expect(Option.map(yield* AgentCluster.get(second.runId), (r) => [r.status, r.decidedBy])).toEqual(Option.some(["failed", "bob"]))
          expect(executions.get("transfer-12")).toBeUndefined()
        }),
        yield* started()
      )
    }), 30_000)

  it.effect("an entity driving a run is never passivated: a decision whose tool waits past three checks keeps it; it goes one idle timeout after the reply", () =>
    Effect.gen(function*() {
      const held = yield* Deferred.make<void>()
      gate.wait = Deferred.await(held)
      yield* Effect.provide(
        Effect.gen(function*() {
          const run = yield* paused({ input: "guard 21" })
          const decision = yield* Effect.forkChild(AgentCluster.decide(Bank, run.runId, Decision.approveAll()))
          yield* driven(Effect.suspend(() => executions.get("guarded-21") === 1 ? Effect.void : Effect.fail("waiting")).pipe(Effect.eventually))
          yield* at(30_100)
          expect(yield* live).toBe(1)
          yield* Deferred.succeed(held, undefined)
          expect(yield* driven(Fiber.join(decision))).toMatchObject({ _tag: "Completed", text: "guarded 21" })
          expect(executions.get("guarded-21")).toBe(1)
          yield* at(40_050)
          expect(yield* live).toBe(1)
          yield* at(50_100)
          expect(yield* live).toBe(0)
        }),
        yield* started()
      )
    }).pipe(Effect.ensuring(Effect.sync(() => gate.wait = Effect.void))), 30_000)

  it.effect("decisions sent at the instant of the reaper's check each complete their run once: those sent before it in the live entity, which it then keeps, the others in the entity taken on again", () =>
    Effect.gen(function*() {
      const runs = 20
      yield* Effect.provide(
        Effect.gen(function*() {
          const pauses = yield* Effect.forEach(Array.from({ length: runs }, (_, i) => i), (i) => paused({ input: `pay ${100 + i}` }))
          const before = yield* Clock.currentTimeMillis
          yield* at(19_999)
          // one decision sent per yield; half way, the clock reaches the reaper's check at 20 s
          const decisions = yield* Effect.forEach(pauses, (run, i) =>
            Effect.gen(function*() {
              if (i === runs / 2) yield* at(20_000)
              yield* Effect.yieldNow
              return yield* Effect.forkChild(AgentCluster.decide(Bank, run.runId, Decision.approveAll()))
            }))
          const outcomes = yield* driven(Fiber.joinAll(decisions))
          expect(outcomes.map((o) => o._tag)).toEqual(Array.from({ length: runs }, () => "Completed"))
          expect(pauses.map((_, i) => executions.get(`transfer-${100 + i}`))).toEqual(Array.from({ length: runs }, () => 1))
          const records = yield* Effect.forEach(pauses, (run) => AgentCluster.get(run.runId))
          expect(records.map((r) => Option.map(r, (x) => x.status))).toEqual(Array.from({ length: runs }, () => Option.some("completed")))
          const noted = yield* Effect.forEach(records, (r) => Effect.map(RunLocation.of(Option.getOrThrow(r)), (l) => Option.getOrThrow(l).since > before))
          expect(noted).toEqual(Array.from({ length: runs }, (_, i) => i >= runs / 2))
        }),
        yield* started()
      )
    }), 60_000)
})
