/**
 * The inbox's driver for cluster runs, on the embedded cluster (real time: the engine polls its
 * file): a decision is claimed and driven by the runner, the page's events are its steps, a stale
 * second decision is refused naming who decided, and the run's runner is named.
 */
import { Decision, type RunStore } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, Result, Stream } from "effect"
import { join } from "node:path"
import { AgentCluster, RunLocation } from "../src/index.js"
import * as ClusterInbox from "../src/ClusterInbox.js"
import { Bank, bankAgent, bankRunnerOn, executions, tempDir } from "./fixtures.js"


const pausedRecord = (runId: string) =>
  Effect.map(AgentCluster.get(runId), Option.getOrThrow) as Effect.Effect<RunStore.RunRecord, RunStore.StoreError>

describe("ClusterInbox.driver", () => {
  it.live("a decision sent to the runner: RunResumed at the claim's time naming the decider, then each step as the runner drives it, to its answer; a second decision on the same pause is RunAlreadyResumed naming the first decider; the runner is named", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* Effect.gen(function*() {
        const driver = yield* ClusterInbox.driver({ claimPoll: "10 millis" })
        const paused = yield* AgentCluster.run(Bank, { input: "pay 7", conversationId: "c-inbox" })
        expect(paused._tag).toBe("Paused")
        const record = yield* pausedRecord(paused.runId)
        expect(record.status).toBe("paused")

        const where = yield* driver.location(record)
        expect(Option.map(where, (runner) => /^[\w.-]+:\d+$/.test(runner))).toEqual(Option.some(true))
        expect(Option.map(yield* RunLocation.of(record), (l) => l.runner)).toEqual(where)

        const events = yield* Stream.runCollect(driver.resume(bankAgent, record, Decision.approveAll(), "ada"))
        const claimed = yield* pausedRecord(paused.runId)
        expect(events.map((e) => e._tag)).toEqual(["RunResumed", "ToolStarted", "ToolSucceeded", "ModelCalled", "TextDelta", "ModelResponded", "RunCompleted"])
        expect(events[1]).toMatchObject({ runId: paused.runId, callId: "transfer-7", toolName: "transfer" })
        expect(events[0]).toMatchObject({ runId: paused.runId, conversationId: "c-inbox", agent: "bank", decision: "ApproveAll", decidedBy: "ada", timestamp: claimed.decidedAt })
        expect(events.at(-1)).toMatchObject({ text: "paid 7" })
        expect([claimed.status, claimed.decidedBy]).toEqual(["completed", "ada"])

        const again = yield* Stream.runCollect(driver.resume(bankAgent, record, Decision.rejectAll({}), "bob")).pipe(Effect.result)
        expect(Result.isFailure(again) && again.failure).toMatchObject({ _tag: "RunAlreadyResumed", runId: paused.runId, decidedBy: "ada" })
        expect(executions.get("transfer-7")).toBe(1)
      }).pipe(Effect.provide(bankRunnerOn(join(dir, "cluster.db"))))
    }).pipe(Effect.scoped), 60_000)

  it.live("a decision after which the run pauses again ends the page's events with RunPaused and its pending call; a rejection runs nothing", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* Effect.gen(function*() {
        const driver = yield* ClusterInbox.driver()
        const paused = yield* AgentCluster.run(Bank, { input: "twice 8", conversationId: "c-twice" })
        expect(paused._tag).toBe("Paused")
        const first = yield* Stream.runCollect(driver.resume(bankAgent, yield* pausedRecord(paused.runId), Decision.approveAll(), "cy"))
        expect(first.map((e) => e._tag)).toEqual(["RunResumed", "ToolStarted", "ToolSucceeded", "ModelCalled", "ModelResponded", "RunPaused"])
        expect(first.at(-1)).toMatchObject({ kind: "approval", pending: [{ callId: "second-8", toolName: "transfer", args: {} }] })
        const second = yield* Stream.runCollect(driver.resume(bankAgent, yield* pausedRecord(paused.runId), Decision.rejectAll({ message: "no" }), "cy"))
        expect(second.map((e) => e._tag)).toEqual(["RunResumed", "ModelCalled", "TextDelta", "ModelResponded", "RunCompleted"])
        expect([executions.get("first-8"), executions.get("second-8")]).toEqual([1, undefined])
      }).pipe(Effect.provide(bankRunnerOn(join(dir, "cluster.db"))))
    }).pipe(Effect.scoped), 60_000)

  it.live("a run decided elsewhere is followed: its events from the runner, the claim naming who decided, to its stop; given the last id, the rest after it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* Effect.gen(function*() {
        const driver = yield* ClusterInbox.driver()
        const paused = yield* AgentCluster.run(Bank, { input: "pay 31", conversationId: "c-elsewhere" })
        expect(paused._tag).toBe("Paused")
        const record = yield* pausedRecord(paused.runId)
        // decided by another process (a chat endpoint, another inbox): this inbox only watches
        const decided = yield* Effect.forkScoped(AgentCluster.decide(Bank, paused.runId, Decision.approveAll(), { decidedBy: "bob", revision: record.version }))
        const watched = yield* Stream.runCollect(driver.watch!(bankAgent, record, { revision: record.version }))
        expect(watched.map(({ event }) => event._tag)).toEqual(["RunResumed", "ToolStarted", "ToolSucceeded", "ModelCalled", "TextDelta", "ModelResponded", "RunCompleted"])
        expect(watched[0]!.event).toMatchObject({ runId: paused.runId, decision: "ApproveAll", decidedBy: "bob" })
        expect(watched.at(-1)!.event).toMatchObject({ text: "paid 31" })
        expect((yield* Fiber.join(decided))._tag).toBe("Completed")
        const rest = yield* Stream.runCollect(driver.watch!(bankAgent, record, { revision: record.version, after: watched[1]!.id }))
        expect(rest.map(({ event }) => event._tag)).toEqual(["ToolSucceeded", "ModelCalled", "TextDelta", "ModelResponded", "RunCompleted"])
        expect(executions.get("transfer-31")).toBe(1)
      }).pipe(Effect.provide(bankRunnerOn(join(dir, "cluster.db"))))
    }).pipe(Effect.scoped), 60_000)
})
