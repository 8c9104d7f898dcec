/**
 * Watching cluster runs (decision 171), on the embedded cluster in-process: a run's events in
 * the order its loop emitted them, each once, to any number of watchers; a watcher that comes
 * back continues after its cursor; a decided segment is watched by its pause's revision; bad
 * input is refused with typed errors. (A runner killed mid-run: `process/Processes.test.ts`.)
 */
import { Agent, Decision } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Result, Schedule, Schema, Stream } from "effect"
import { join } from "node:path"
import { AgentCluster } from "../src/index.js"
import * as EventWire from "../src/internal/eventWire.js"
import * as Protocol from "../src/internal/protocol.js"
import { Bank, bankAgent, bankRunnerOn, gate, tempDir } from "./fixtures.js"

const tags = (watched: ReadonlyArray<AgentCluster.Watched>) =>
  watched.map((w) => w._tag === "Event" ? w.event._tag : w._tag === "Gap" ? "Gap" : `Outcome:${w.outcome._tag}`)

/** Every cursor once, and one driving's indices counting up from 0 without a hole. */
const inOrder = (watched: ReadonlyArray<AgentCluster.Watched>) => {
  const cursors = watched.map((w) => w.cursor)
  expect(new Set(cursors).size).toBe(cursors.length)
  const drivers = new Set(cursors.map((c) => c.slice(0, c.lastIndexOf(":"))))
  expect(drivers.size).toBe(1)
  expect(cursors.map((c) => Number(c.slice(c.lastIndexOf(":") + 1)))).toEqual(cursors.map((_, i) => i))
}

/** Once the run's record is stored (a watch of a run the store does not have is refused). */
const recorded = (runId: string) =>
  AgentCluster.get(runId).pipe(
    Effect.flatMap((record) => Option.isSome(record) ? Effect.void : Effect.fail("not yet")),
    Effect.retry({ schedule: Schedule.spaced("10 millis"), times: 500 }),
    Effect.orDie
  )

const onCluster = <A, E>(body: Effect.Effect<A, E, any>) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    return yield* body.pipe(Effect.provide(bankRunnerOn(join(dir, "cluster.db"))))
  }).pipe(Effect.scoped)

describe("AgentCluster.watch", () => {
  it.live("every event of a run crosses the wire as JSON (the codec between processes) and is decoded as it was emitted", () =>
    onCluster(Effect.gen(function*() {
      const paused = yield* Stream.runCollect(AgentCluster.stream(Bank, { input: "pay 5", conversationId: "c-w5", runId: "w-5" }))
      const stop = paused.at(-1)!
      const revision = stop._tag === "Event" && stop.event._tag === "RunPaused" ? stop.event.exit.checkpoint.revision : -1
      // a decision that names no pause: its segment is the pause's it claims
      yield* AgentCluster.decide(Bank, "w-5", Decision.approveAll(), { decidedBy: "ada" })
      const completed = yield* Stream.runCollect(AgentCluster.watch(Bank, "w-5", { from: revision }))
      expect(tags(completed).at(-1)).toBe("RunCompleted")
      const codec = Schema.toCodecJson(Protocol.Watched)
      for (const watched of [...paused, ...completed]) {
        if (watched._tag !== "Event") continue
        const event = yield* EventWire.encode(bankAgent, watched.event)
        const json = JSON.parse(JSON.stringify(Schema.encodeUnknownSync(codec)({ _tag: "Event", cursor: watched.cursor, event })))
        const back = Schema.decodeUnknownSync(codec)(json)
        expect(back._tag === "Event" && (yield* EventWire.decode(bankAgent, back.event))).toEqual(watched.event)
      }
    })), 60_000)

  it.live("a started run streams every step in order, each once, to its pause; the decided segment, watched by its revision, to the answer", () =>
    onCluster(Effect.gen(function*() {
      const first = yield* Stream.runCollect(AgentCluster.stream(Bank, { input: "pay 1", conversationId: "c-w1", runId: "w-1" }))
      expect(tags(first)).toEqual([
        "RunStarted",
        "ModelCalled",
        "ModelResponded",
        "ToolStarted",
        "ToolSucceeded",
        "ModelCalled",
        "ModelResponded",
        "RunPaused"
      ])
      inOrder(first)
      const paused = first.at(-1)!
      if (paused._tag !== "Event" || paused.event._tag !== "RunPaused") throw new Error("not paused")
      expect(paused.event.exit.pending.map((p) => p.call.id)).toEqual(["transfer-1"])
      const revision = paused.event.exit.checkpoint.revision

      // watched before the decision is sent: the watcher waits for the segment to begin
      const watcher = yield* Effect.forkChild(Stream.runCollect(AgentCluster.watch(Bank, "w-1", { conversationId: "c-w1", from: revision })))
      yield* Effect.sleep("100 millis")
      const outcome = yield* AgentCluster.decide(Bank, "w-1", Decision.approveAll(), { revision, decidedBy: "ada" })
      expect(outcome._tag).toBe("Completed")
      const second = yield* Fiber.join(watcher)
      expect(tags(second)).toEqual(["RunResumed", "ToolStarted", "ToolSucceeded", "ModelCalled", "TextDelta", "ModelResponded", "RunCompleted"])
      inOrder(second)
      const completed = second.at(-1)!
      expect(completed._tag === "Event" && completed.event._tag === "RunCompleted" && completed.event.exit.text).toBe("paid 1")

      // watched again once over: the same events, kept by the runner
      expect(yield* Stream.runCollect(AgentCluster.watch(Bank, "w-1", { from: revision }))).toEqual(second)
    })), 60_000)

  it.live("two watchers of one running run get the same events in the same order; a watcher that comes back with its cursor gets the rest, nothing twice", () =>
    onCluster(Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      gate.wait = Deferred.await(release)
      const { runId } = yield* AgentCluster.start(Bank, { input: "block 2", conversationId: "c-w2", runId: "w-2" })
      yield* recorded(runId)
      const watchOne = () => Stream.runCollect(AgentCluster.watch(Bank, runId, { conversationId: "c-w2" }))
      const [one, two] = [yield* Effect.forkChild(watchOne()), yield* Effect.forkChild(watchOne())]
      // a third takes the first events, then goes away; it comes back after its last cursor
      const head = yield* Stream.runCollect(Stream.take(AgentCluster.watch(Bank, runId), 4))
      expect(tags(head)).toEqual(["RunStarted", "ModelCalled", "ModelResponded", "ToolStarted"])
      yield* Deferred.succeed(release, undefined)
      const [a, b] = [yield* Fiber.join(one), yield* Fiber.join(two)]
      gate.wait = Effect.void
      expect(tags(a)).toEqual(["RunStarted", "ModelCalled", "ModelResponded", "ToolStarted", "ToolStarted", "ToolSucceeded", "ToolSucceeded", "ModelCalled", "TextDelta", "ModelResponded", "RunCompleted"])
      inOrder(a)
      expect(b).toEqual(a)
      const rest = yield* Stream.runCollect(AgentCluster.watch(Bank, runId, { after: head.at(-1)!.cursor }))
      expect([...head, ...rest]).toEqual(a)
    })), 60_000)

  it.live("a cancelled run's segment stops with its outcome", () =>
    onCluster(Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      gate.wait = Deferred.await(release)
      const { runId } = yield* AgentCluster.start(Bank, { input: "block 3", conversationId: "c-w3" })
      yield* recorded(runId)
      const watcher = yield* Effect.forkChild(Stream.runCollect(AgentCluster.watch(Bank, runId)))
      const started = yield* Stream.runCollect(Stream.take(AgentCluster.watch(Bank, runId), 5))
      expect(tags(started).at(-1)).toBe("ToolStarted")
      yield* AgentCluster.cancel(Bank, runId, { cancelledBy: "ada" })
      const watched = yield* Fiber.join(watcher)
      gate.wait = Effect.void
      yield* Deferred.succeed(release, undefined)
      expect(watched.at(-1)).toMatchObject({ _tag: "Outcome", outcome: { _tag: "Failed", error: "Cancelled" } })
      inOrder(watched)
    })), 60_000)

  it.live("refused with typed errors: an unknown run, another agent's run, another conversation's run, an ephemeral run watched as a conversation's", () =>
    onCluster(Effect.gen(function*() {
      yield* AgentCluster.run(Bank, { input: "hi", conversationId: "c-w4", runId: "w-4" })
      yield* AgentCluster.run(Bank, { input: "hi", runId: "w-4e" })
      const refusal = (stream: Stream.Stream<AgentCluster.Watched, unknown, any>) =>
        Effect.map(Effect.result(Stream.runCollect(stream)), (result) => Result.isFailure(result) ? result.failure : "no refusal")
      expect(yield* refusal(AgentCluster.watch(Bank, "nope"))).toMatchObject({ _tag: "RunNotFound", runId: "nope" })
      const Other = AgentCluster.make(Agent.make({ name: "other" }))
      expect(yield* refusal(AgentCluster.watch(Other, "w-4"))).toMatchObject({ _tag: "RunNotFound", runId: "w-4" })
      const mismatch = yield* refusal(AgentCluster.watch(Bank, "w-4", { conversationId: "c-other" }))
      expect(mismatch).toMatchObject({ _tag: "ConversationMismatch", runId: "w-4", conversationId: "c-other" })
      expect((mismatch as Error).message).toBe("Run w-4 is not a run of conversation c-other")
      expect(yield* refusal(AgentCluster.watch(Bank, "w-4e", { conversationId: "c-w4" }))).toMatchObject({ _tag: "ConversationMismatch" })
      // a start refused by the client fails its stream before anything is stored
      expect(yield* refusal(AgentCluster.stream(Bank, { input: "hi", conversationId: "c-w4", state: { nope: 1 } as never }))).toMatchObject({
        _tag: "Refused",
        reason: "InvalidRunInput"
      })
      // a segment this runner kept nothing of (no decision on a pause at revision 99): a gap, then the run as its record says
      const unkept = yield* Stream.runCollect(AgentCluster.watch(Bank, "w-4", { from: 99 }))
      expect(tags(unkept)).toEqual(["Gap", "Outcome:Ended"])
      expect(unkept[1]).toMatchObject({ outcome: { status: "completed" } })
      // the runs themselves are watched fine
      expect(tags(yield* Stream.runCollect(AgentCluster.watch(Bank, "w-4", { conversationId: "c-w4" })))).toEqual(["RunStarted", "ModelCalled", "TextDelta", "ModelResponded", "RunCompleted"])
    })), 60_000)
})


