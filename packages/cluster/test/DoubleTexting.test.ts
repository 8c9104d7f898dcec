/**
 * A second message while a conversation's turn runs, on the cluster (issue 36 item 5, decision
 * 175): the start of an agent that steers, interrupts or rolls back reaches the running turn past
 * the entity's turn queue, and is answered as on one process — through the reply.
 */
import { describe, expect, it } from "@effect/vitest"
import { Agent, ChatMemory, type Message, Middleware, RunStore, ScriptedChatModel, Tool, ToolCallingManager } from "@agentfx/core"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { Context, Deferred, Effect, Fiber, Layer, Option, Schedule, Schema } from "effect"
import type { Entity } from "effect/cluster"
import { join } from "node:path"
import { Chat } from "@agentfx/ui-stream"
import { HttpServer } from "effect/http"
import * as SqlClient from "effect/sql/SqlClient"
import * as ClusterChat from "../src/ClusterChat.js"
import { AgentCluster } from "../src/index.js"
import type { Start } from "../src/internal/protocol.js"
import { handlersOn, onFile, request, tempDir } from "./fixtures.js"

/** What a test holds: the `work` tool until `release` (telling `started`), the first model call until `modelRelease`. */
const hold = {
  started: Deferred.makeUnsafe<void>(),
  release: Deferred.makeUnsafe<void>(),
  modelReached: Deferred.makeUnsafe<void>(),
  modelRelease: Deferred.makeUnsafe<void>(),
  holdModel: false,
  finalized: [] as Array<string>
}
const fresh = (holdModel: boolean) =>
  Effect.sync(() => {
    hold.started = Deferred.makeUnsafe()
    hold.release = Deferred.makeUnsafe()
    hold.modelReached = Deferred.makeUnsafe()
    hold.modelRelease = Deferred.makeUnsafe()
    hold.holdModel = holdModel
    hold.finalized = []
    seen.length = 0
  })

const work = Tool.make("work", {
  description: "works until released",
  parameters: Schema.Struct({}),
  success: Schema.String,
  handler: (_, { callId }) =>
    Effect.acquireRelease(Deferred.succeed(hold.started, undefined), () => Effect.sync(() => hold.finalized.push(callId))).pipe(
      Effect.andThen(Effect.suspend(() => Deferred.await(hold.release))),
      Effect.as("done"),
      Effect.scoped
    )
})

const transfer = Tool.make("transfer", {
  description: "Sends money",
  parameters: Schema.Struct({}),
  success: Schema.String,
  needsApproval: true,
  handler: () => Effect.succeed("sent")
})

/** Holds a turn's first model call, when the test says so. */
const holdFirstCall = Middleware.make({
  model: (input, next) =>
    hold.holdModel && input.iteration === 1
      ? Effect.andThen(Deferred.succeed(hold.modelReached, undefined), Effect.andThen(Effect.suspend(() => Deferred.await(hold.modelRelease)), next(input)))
      : next(input)
})

const agentOf = (name: string, onConversationBusy: Agent.OnConversationBusy) =>
  AgentCluster.make(Agent.make({ name, tools: [work, transfer], middleware: [holdFirstCall], onConversationBusy }))

const Steering = agentOf("steering", "steer")
const Interrupting = agentOf("interrupting", "interrupt")
const RollingBack = agentOf("rolling-back", "rollback")

/** The user messages of each model call, in the order the model was called (in this process: runners run in-process). */
const seen: Array<ReadonlyArray<string>> = []

const line = (m: Message.Message) =>
  m._tag === "User"
    ? `user:${m.text}`
    : m._tag === "Assistant"
    ? `assistant:${m.text}${m.toolCalls.length > 0 ? "+calls" : ""}`
    : m._tag === "ToolResult"
    ? `result:${m.toolName}`
    : m._tag

/** `work …` → the `work` tool; `pay …` → `transfer` (needs approval); otherwise the answer names what it was told. */
const model = ScriptedChatModel.layer((request) => {
  const users = request.messages.filter((m): m is Message.UserMessage => m._tag === "User").map((m) => m.text)
  seen.push(users)
  const last = request.messages.at(-1)
  if (last?._tag === "User" && last.text.startsWith("work")) return ScriptedChatModel.toolCalls({ id: `w-${last.text.slice(5)}`, name: "work", args: {} })
  if (last?._tag === "User" && last.text.startsWith("pay")) return ScriptedChatModel.toolCalls({ id: `t-${last.text.slice(4)}`, name: "transfer", args: {} })
  return ScriptedChatModel.text(`answered: ${users.join(" / ")}`)
}, { recordRequests: false })

const runnerOf = (entity: AgentCluster.AgentEntity<any, never, any>, filename: string) =>
  onFile(AgentCluster.runner(entity).pipe(Layer.provide([model, ToolCallingManager.unbounded()])), filename)

const conversation = (conversationId: string) => Effect.flatMap(ChatMemory.ChatMemory, (memory) => Effect.map(memory.get(conversationId), (messages) => messages.map(line)))

/** Waits until the input run `runId` left on `conversationId` is pending in the steering inbox. */
const pendingSteer = (conversationId: string, runId: string) =>
  Effect.flatMap(RunStore.RunStore, (store) =>
    Effect.repeat(Effect.orDie(store.steering!.status(RunStore.steerId(conversationId, runId))), { until: (status) => status._tag === "pending", schedule: Schedule.spaced("20 millis") }))

/** How many model calls saw `text` as a user message. */
const callsSeeing = (text: string) => seen.filter((users) => users.includes(text)).length

describe("double texting on the cluster", () => {
  it.live("steer: the second message joins the running turn before its next model call, once; its start is answered Steered", () =>
    Effect.gen(function*() {
      yield* fresh(false)
      const filename = join(yield* tempDir, "steer.db")
      yield* Effect.gen(function*() {
        const first = yield* Effect.forkChild(AgentCluster.run(Steering, { input: "work 1", conversationId: "c-1", runId: "s-1" }))
        yield* Deferred.await(hold.started)
        const second = yield* Effect.forkChild(AgentCluster.run(Steering, { input: "for four", conversationId: "c-1", runId: "s-2" }))
        yield* pendingSteer("c-1", "s-2")
        yield* Deferred.succeed(hold.release, undefined)
        expect(yield* Fiber.join(first)).toMatchObject({ _tag: "Completed", runId: "s-1", text: "answered: work 1 / for four" })
        expect(yield* Fiber.join(second)).toMatchObject({ _tag: "Steered", runId: "s-2", conversationId: "c-1", takenBy: "s-1" })
        expect(seen).toEqual([["work 1"], ["work 1", "for four"]])
        expect(yield* conversation("c-1")).toEqual(["user:work 1", "assistant:+calls", "result:work", "user:for four", "assistant:answered: work 1 / for four"])
        expect(yield* AgentCluster.get("s-2")).toEqual(Option.none())
      }).pipe(Effect.provide(runnerOf(Steering, filename)))
    }).pipe(Effect.scoped), 60_000)

  it.live("through the chat endpoint (ClusterChat.driver): a second message steers the running turn; its response is the running message, whose answer takes it in", () =>
    Effect.gen(function*() {
      yield* fresh(false)
      const filename = join(yield* tempDir, "chat.db")
      yield* Effect.gen(function*() {
        const driver = yield* ClusterChat.driver({ claimPoll: "10 millis" })
        const server = yield* Layer.build(Chat.serve({ agent: Steering.agent, driver }))
        const address = Context.get(server, HttpServer.HttpServer).address
        const api = `http://127.0.0.1:${address._tag === "UnixPathAddress" ? 0 : address.port}/api/chat`
        const send = (id: string, text: string) =>
          Effect.promise(async () => {
            const response = await fetch(api, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ id: "chat-1", trigger: "submit-message", messages: [{ id, role: "user", parts: [{ type: "text", text }] }] })
            })
            return { status: response.status, body: await response.text() }
          })
        const first = yield* Effect.forkChild(send("u1", "work 1"))
        yield* Deferred.await(hold.started)
        const second = yield* Effect.forkChild(send("u2", "for four"))
        // the second message is in the steering inbox, pending (its id is the run id the driver named)
        yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.repeat(Effect.orDie(sql`SELECT count(*) AS n FROM agentfx_steering WHERE conversation_id = 'chat-1' AND status = 'pending'`), {
            until: (rows) => Number(rows[0]!.n) === 1,
            schedule: Schedule.spaced("20 millis")
          })).pipe(Effect.provide(Layer.fresh(SqliteStore.layerClient({ filename }))))
        yield* Deferred.succeed(hold.release, undefined)
        const [one, two] = [yield* Fiber.join(first), yield* Fiber.join(second)]
        expect([one.status, two.status]).toEqual([200, 200])
        // both responses are the running turn's message: its answer took the second message in
        for (const body of [one.body, two.body]) expect(body).toContain(`"delta":"answered: work 1 / for four"`)
        expect(callsSeeing("for four")).toBe(1)
        expect(yield* conversation("chat-1")).toEqual(["user:work 1", "assistant:+calls", "result:work", "user:for four", "assistant:answered: work 1 / for four"])
      }).pipe(Effect.provide(runnerOf(Steering, filename)))
    }).pipe(Effect.scoped), 60_000)

  it.live("steer racing a pause: the running turn paused before its next model call — SteerRefused naming it, nothing written, the pause stands", () =>
    Effect.gen(function*() {
      yield* fresh(true)
      const filename = join(yield* tempDir, "pause.db")
      yield* Effect.gen(function*() {
        const first = yield* Effect.forkChild(AgentCluster.run(Steering, { input: "pay 1", conversationId: "c-2", runId: "p-1" }))
        yield* Deferred.await(hold.modelReached)
        const second = yield* Effect.forkChild(AgentCluster.run(Steering, { input: "make it 20", conversationId: "c-2", runId: "p-2" }).pipe(Effect.flip))
        yield* pendingSteer("c-2", "p-2")
        yield* Deferred.succeed(hold.modelRelease, undefined)
        expect(yield* Fiber.join(first)).toMatchObject({ _tag: "Paused", runId: "p-1" })
        const refused = yield* Fiber.join(second)
        expect(refused).toEqual(new RunStore.SteerRefused({ conversationId: "c-2", runId: "p-1" }))
        expect(yield* conversation("c-2")).toEqual(["user:pay 1", "assistant:+calls"])
        expect(callsSeeing("make it 20")).toBe(0)
        const store = yield* RunStore.RunStore
        expect(yield* store.steering!.status(RunStore.steerId("c-2", "p-2"))).toEqual({ _tag: "withdrawn" })
        expect(Option.map(yield* AgentCluster.get("p-1"), (record) => record.status)).toEqual(Option.some("paused"))
      }).pipe(Effect.provide(runnerOf(Steering, filename)))
    }).pipe(Effect.scoped), 60_000)

  it.live("interrupt: the running turn is cancelled — its reply Failed with TurnInterrupted, its tool interrupted, its call answered cancelled — and the new turn runs", () =>
    Effect.gen(function*() {
      yield* fresh(false)
      const filename = join(yield* tempDir, "interrupt.db")
      yield* Effect.gen(function*() {
        const first = yield* Effect.forkChild(AgentCluster.run(Interrupting, { input: "work 1", conversationId: "c-3", runId: "i-1" }))
        yield* Deferred.await(hold.started)
        const second = yield* AgentCluster.run(Interrupting, { input: "just the docs", conversationId: "c-3", runId: "i-2" })
        expect(second).toMatchObject({ _tag: "Completed", runId: "i-2", text: "answered: work 1 / just the docs" })
        expect(yield* Fiber.join(first)).toMatchObject({ _tag: "Failed", runId: "i-1", error: "TurnInterrupted" })
        expect(hold.finalized).toEqual(["w-1"])
        expect(yield* conversation("c-3")).toEqual([
          "user:work 1",
          "assistant:+calls",
          "result:work",
          "user:just the docs",
          "assistant:answered: work 1 / just the docs"
        ])
        const memory = yield* ChatMemory.ChatMemory
        const result = (yield* memory.get("c-3"))[2]
        expect(result?._tag === "ToolResult" && result.isError).toBe(true)
      }).pipe(Effect.provide(runnerOf(Interrupting, filename)))
    }).pipe(Effect.scoped), 60_000)

  it.live("rollback: as interrupt, and the cancelled turn's messages are removed from the conversation", () =>
    Effect.gen(function*() {
      yield* fresh(false)
      const filename = join(yield* tempDir, "rollback.db")
      yield* Effect.gen(function*() {
        const first = yield* Effect.forkChild(AgentCluster.run(RollingBack, { input: "work 1", conversationId: "c-4", runId: "b-1" }))
        yield* Deferred.await(hold.started)
        const second = yield* AgentCluster.run(RollingBack, { input: "never mind", conversationId: "c-4", runId: "b-2" })
        expect(second).toMatchObject({ _tag: "Completed", runId: "b-2", text: "answered: never mind" })
        expect(yield* Fiber.join(first)).toMatchObject({ _tag: "Failed", runId: "b-1", error: "TurnInterrupted" })
        expect(yield* conversation("c-4")).toEqual(["user:never mind", "assistant:answered: never mind"])
      }).pipe(Effect.provide(runnerOf(RollingBack, filename)))
    }).pipe(Effect.scoped), 60_000)

  it.live("a steered start redelivered (same request, its runner lost) is not steered twice: the model sees it once, each delivery is answered Steered", () =>
    Effect.gen(function*() {
      yield* fresh(false)
      const filename = join(yield* tempDir, "redelivery.db")
      const handlers = yield* handlersOn(Steering.agent, model, filename, "c-5")
      const start = (requestId: bigint, runId: string, input: string) =>
        handlers.Start(request<Entity.Request<typeof Start>>(requestId, { runId, input, conversationId: "c-5" }))
      const first = yield* Effect.forkChild(start(1n, "r-1", "work 1"))
      yield* Deferred.await(hold.started)
      const lost = yield* Effect.forkChild(start(2n, "r-2", "for four"))
      yield* pendingSteer("c-5", "r-2").pipe(Effect.provide(Layer.fresh(SqliteStore.layer({ filename }))))
      // the runner handling it crashed: the engine delivers the same message again
      yield* Fiber.interrupt(lost)
      const again = yield* Effect.forkChild(start(2n, "r-2", "for four"))
      yield* Effect.sleep("100 millis")
      yield* Deferred.succeed(hold.release, undefined)
      expect(yield* Fiber.join(first)).toMatchObject({ _tag: "Completed", runId: "r-1" })
      expect(yield* Fiber.join(again)).toMatchObject({ _tag: "Steered", runId: "r-2", takenBy: "r-1" })
      // and once more, after it was taken: answered at once, nothing added
      expect(yield* start(2n, "r-2", "for four")).toMatchObject({ _tag: "Steered", runId: "r-2", takenBy: "r-1" })
      expect(seen).toEqual([["work 1"], ["work 1", "for four"]])
    }).pipe(Effect.scoped), 60_000)
})
