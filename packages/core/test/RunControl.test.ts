/**
 * What a queue or a cluster delivering runs needs of the runtime: a run started under a given
 * id (a start delivered twice runs once), a decision that names the pause it was made on, and
 * a cancel from any process sharing the store.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Schema } from "effect"
import { Agent, type AgentExit, ChatMemory, Decision, RunStore, ScriptedChatModel, Tool } from "../src/index.js"

const transfers = () => {
  const executed: Array<string> = []
  const transfer = Tool.make("transfer", {
    description: "Sends money",
    parameters: Schema.Struct({ to: Schema.String }),
    success: Schema.String,
    needsApproval: true,
    handler: ({ to }, { callId }) => Effect.sync(() => executed.push(callId)).pipe(Effect.as(`sent to ${to}`))
  })
  return { agent: Agent.make({ name: "bank", tools: [transfer] }), executed }
}

/** Each user turn: one transfer per tool result so far + 1 (t1, then t2), then an answer after two. */
const model = ScriptedChatModel.layer((request) => {
  const results = request.messages.filter((m) => m._tag === "ToolResult").length
  return results < 2
    ? ScriptedChatModel.toolCalls({ id: `t${results + 1}`, name: "transfer", args: { to: "ada" } })
    : ScriptedChatModel.text("done")
})

const paused = (exit: AgentExit.AgentExit<any, any>): AgentExit.Paused => {
  assert(exit._tag === "Paused")
  return exit
}

describe("Agent.run with a given run id", () => {
  it.effect("the run's record has that id; a second start with it is refused and runs nothing", () =>
    Effect.gen(function*() {
      const { agent, executed } = transfers()
      const first = paused(yield* Agent.run(agent, { input: "pay", runId: "order-42" }))
      expect(first.runId).toBe("order-42")
      const again = yield* Effect.flip(Agent.run(agent, { input: "pay", runId: "order-42" }))
      expect(again._tag).toBe("InvalidRunInput")
      expect(again.message).toContain(`run id "order-42" is taken: the run store has a run with this id (paused)`)
      yield* Agent.resume(agent, "order-42", Decision.approveAll()).pipe(Effect.flatMap((exit) => Agent.resume(agent, paused(exit).runId, Decision.approveAll())))
      const afterwards = yield* Effect.flip(Agent.run(agent, { input: "pay", runId: "order-42" }))
      expect(afterwards.message).toContain("(completed)")
      expect(executed).toEqual(["t1", "t2"])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))

  it.effect("a run or conversation id that is empty, too long, or holds a control character or a lone surrogate is refused before anything runs", () =>
    Effect.gen(function*() {
      const { agent, executed } = transfers()
      // a lone surrogate has no UTF-8: a store would keep another id (PostgreSQL: U+FFFD, two ids made one)
      for (const id of ["", "x".repeat(257), "a\nb", "lone\uD800", "\uDC00x"]) {
        for (const key of ["runId", "conversationId"] as const) {
          const error = yield* Effect.flip(Agent.run(agent, { input: "pay", [key]: id }))
          expect(error._tag).toBe("InvalidRunInput")
          expect(error.message).toContain(`${key} ${JSON.stringify(id)} must be a string of 1 to 256 characters`)
        }
      }
      expect(yield* Effect.flatMap(RunStore.RunStore, (store) => store.list())).toEqual([])
      expect(executed).toEqual([])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))

  it.effect("a start delivered twice on its conversation is refused before it writes there: the first run's pause stands, its input is not added again", () =>
    Effect.gen(function*() {
      const { agent, executed } = transfers()
      const memory = yield* ChatMemory.ChatMemory
      const first = paused(yield* Agent.run(agent, { input: "pay", runId: "job-1", conversationId: "conv-a" }))
      const before = yield* memory.get("conv-a")
      const again = yield* Effect.flip(Agent.run(agent, { input: "pay", runId: "job-1", conversationId: "conv-a" }))
      expect(again.message).toContain(`run id "job-1" is taken: the run store has a run with this id (paused)`)
      expect(yield* memory.get("conv-a")).toEqual(before)
      const record = yield* Effect.flatMap(RunStore.RunStore, (store) => store.get("job-1"))
      expect(Option.map(record, (r) => r.status)).toEqual(Option.some("paused"))
      const resumed = yield* Agent.resume(agent, first.runId, Decision.approveAll())
      expect([paused(resumed).pending.map((p) => p.call.id), executed]).toEqual([["t2"], ["t1"]])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory()), Effect.provide(ChatMemory.layerMemory)))

  it.effect("who decides (decidedBy) holding a lone surrogate is refused: nothing consumed", () =>
    Effect.gen(function*() {
      const { agent, executed } = transfers()
      const first = paused(yield* Agent.run(agent, { input: "pay" }))
      const error = yield* Effect.flip(Agent.resume(agent, first.runId, Decision.approveAll(), { decidedBy: "ada\uD800" }))
      expect(error._tag === "InvalidRunInput" && error.problems).toEqual([
        `decidedBy "ada\\ud800" must be a string without a lone surrogate (a store would record another name)`
      ])
      expect(executed).toEqual([])
      yield* Agent.resume(agent, first.runId, Decision.approveAll(), { decidedBy: "ada" })
      expect(executed).toEqual(["t1"])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))

  it.effect("a decision's id (decisionId) is recorded with its claim, kept to the run's end, cleared by a pause; one holding a lone surrogate is refused, nothing consumed", () =>
    Effect.gen(function*() {
      const { agent, executed } = transfers()
      const first = paused(yield* Agent.run(agent, { input: "pay" }))
      const error = yield* Effect.flip(Agent.resume(agent, first.runId, Decision.approveAll(), { decisionId: "d\uDC00" }))
      expect(error._tag === "InvalidRunInput" && error.problems).toEqual([
        `decisionId "d\\udc00" must be a string without a lone surrogate (a store would record another id)`
      ])
      expect(executed).toEqual([])
      const store = yield* RunStore.RunStore
      const again = paused(yield* Agent.resume(agent, first.runId, Decision.approveAll(), { decidedBy: "ada", decisionId: "d-1" }))
      expect(Option.map(yield* store.get(again.runId), (r) => [r.status, r.decidedBy, r.decisionId])).toEqual(Option.some(["paused", undefined, undefined]))
      const version = Option.getOrThrow(yield* store.get(again.runId)).version
      yield* store.transition(again.runId, { from: { status: "paused", version }, to: "running", decidedBy: "bob", decisionId: "d-2" })
      expect(Option.map(yield* store.get(again.runId), (r) => [r.status, r.decidedBy, r.decisionId])).toEqual(Option.some(["running", "bob", "d-2"]))
      yield* store.transition(again.runId, { from: { status: "running", version: version + 1 }, to: "running" })
      expect(Option.map(yield* store.get(again.runId), (r) => r.decisionId)).toEqual(Option.some("d-2"))
      expect(executed).toEqual(["t1"])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))

  it.effect("a run id \".\" or \"..\" (a URL would resolve it away) is refused before anything runs; one that only starts with dots is not", () =>
    Effect.gen(function*() {
      const { agent, executed } = transfers()
      for (const id of [".", ".."]) {
        const error = yield* Effect.flip(Agent.run(agent, { input: "pay", runId: id }))
        expect(error._tag === "InvalidRunInput" && error.problems).toEqual([
          `runId ${JSON.stringify(id)} cannot be "." or "..": a URL holding it is resolved to another path, so the run could not be opened or decided; choose another id`
        ])
      }
      expect(yield* Effect.flatMap(RunStore.RunStore, (store) => store.list())).toEqual([])
      expect(executed).toEqual([])
      expect(paused(yield* Agent.run(agent, { input: "pay", runId: "..x" })).runId).toBe("..x")
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))
})

describe("Agent.resume with the revision the decision was made on", () => {
  it.effect("applies to that pause; a decision made on an earlier pause of the run is refused, the run stays resumable", () =>
    Effect.gen(function*() {
      const { agent, executed } = transfers()
      const first = paused(yield* Agent.run(agent, { input: "pay" }))
      const revision = first.checkpoint.revision
      const second = paused(yield* Agent.resume(agent, first.runId, Decision.approveAll(), { revision }))
      expect(second.checkpoint.revision).toBeGreaterThan(revision)
      const stale = yield* Effect.flip(Agent.resume(agent, first.runId, Decision.approveAll(), { revision, decidedBy: "bob" }))
      expect(stale._tag === "RunAlreadyResumed" && stale.status).toBe("paused")
      expect(executed).toEqual(["t1"])
      const done = yield* Agent.resume(agent, first.runId, Decision.approveAll(), { revision: second.checkpoint.revision })
      expect(done._tag).toBe("Completed")
      expect(executed).toEqual(["t1", "t2"])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))

  it.effect("a checkpoint copy of another revision than the decision's is refused as such", () =>
    Effect.gen(function*() {
      const { agent, executed } = transfers()
      const first = paused(yield* Agent.run(agent, { input: "pay" }))
      const error = yield* Effect.flip(Agent.resume(agent, first.checkpoint, Decision.approveAll(), { revision: first.checkpoint.revision + 1 }))
      expect(error._tag === "InvalidCheckpoint" && error.reason).toBe("revision")
      expect(executed).toEqual([])
      expect((yield* Agent.resume(agent, first.checkpoint, Decision.approveAll()))._tag).toBe("Paused")
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))
})

describe("Agent.cancel", () => {
  it.effect("a paused run ends failed, who cancelled it is recorded; its pending call never runs", () =>
    Effect.gen(function*() {
      const { agent, executed } = transfers()
      const first = paused(yield* Agent.run(agent, { input: "pay" }))
      yield* Agent.cancel(agent, first.runId, { cancelledBy: "ada" })
      const store = yield* RunStore.RunStore
      expect(Option.getOrThrow(yield* store.finished(first.runId))).toMatchObject({ status: "failed", decidedBy: "ada" })
      const resume = yield* Effect.flip(Agent.resume(agent, first.checkpoint, Decision.approveAll()))
      expect(resume._tag === "RunAlreadyResumed" && [resume.status, resume.decidedBy]).toEqual(["failed", "ada"])
      const twice = yield* Effect.flip(Agent.cancel(agent, first.runId))
      expect(twice._tag === "RunAlreadyResumed" && twice.status).toBe("failed")
      expect(executed).toEqual([])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))

  it.effect("a running resume is fenced: the call it runs finishes, its next write to the record is refused, and the run fails", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const executed: Array<string> = []
      const transfer = Tool.make("transfer", {
        description: "Sends money",
        parameters: Schema.Struct({ to: Schema.String }),
        success: Schema.String,
        needsApproval: true,
        handler: ({ to }, { callId }) =>
          Deferred.succeed(started, undefined).pipe(
            Effect.andThen(Deferred.await(release)),
            Effect.andThen(Effect.sync(() => executed.push(callId))),
            Effect.as(`sent to ${to}`)
          )
      })
      const agent = Agent.make({ name: "bank", tools: [transfer] })
      const first = paused(yield* Agent.run(agent, { input: "pay" }))
      const resumed = yield* Effect.forkChild(Agent.resume(agent, first.runId, Decision.approveAll()))
      yield* Deferred.await(started)
      yield* Agent.cancel(agent, first.runId)
      yield* Deferred.succeed(release, undefined)
      const exit = yield* Fiber.join(resumed).pipe(Effect.flip)
      expect(exit._tag === "RunAlreadyResumed" && exit.status).toBe("failed")
      expect(executed).toEqual(["t1"])
      expect(Option.getOrThrow(yield* Effect.flatMap(RunStore.RunStore, (store) => store.finished(first.runId))).status).toBe("failed")
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))

  it.effect("an unknown run, or another agent's, is RunNotFound", () =>
    Effect.gen(function*() {
      const { agent } = transfers()
      const other = Agent.make({ name: "other", tools: [] })
      const first = paused(yield* Agent.run(agent, { input: "pay" }))
      expect((yield* Effect.flip(Agent.cancel(agent, "no-such-run")))._tag).toBe("RunNotFound")
      expect((yield* Effect.flip(Agent.cancel(other, first.runId)))._tag).toBe("RunNotFound")
      expect(Option.getOrThrow(yield* Effect.flatMap(RunStore.RunStore, (store) => store.get(first.runId))).status).toBe("paused")
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))
})
