/**
 * A steered input across processes sharing a store (decision 170): two stores on one database
 * (two processes' views, each its own client) — the input left by one is taken by the turn the
 * other drives, before its next model call, once; a sender whose turn ended withdraws it and
 * runs it as its own turn. Real time: the sender polls the database.
 */
import { Agent, ChatMemory, type Message, RunStore, ScriptedChatModel, Tool } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { type Database, dialects, storeLayerOn } from "./fixtures.js"

const lines = (messages: ReadonlyArray<Message.Message>) =>
  messages.map((m) => m._tag === "User" ? `user:${m.text}` : m._tag === "Assistant" ? `assistant:${m.text}` : m._tag === "ToolResult" ? `result:${m.content}` : m._tag)

/** Two processes' stores on one database, and a tool that works until released (`started` once it runs). */
const twoProcesses = (database: Database) =>
  Effect.gen(function*() {
    const one = yield* Layer.build(storeLayerOn(database))
    const two = yield* Layer.build(storeLayerOn(database))
    const started = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const work = Tool.make("work", {
      description: "works until released",
      parameters: Schema.Struct({}),
      success: Schema.String,
      handler: () => Effect.andThen(Deferred.succeed(started, undefined), Effect.as(Deferred.await(release), "done"))
    })
    return { one, two, started, release, work }
  })

for (const dialect of dialects) {
  describe(`double texting on ${dialect.name}`, () => {
    it.live("a steer left by one process joins the turn another drives, before its next model call, once", () =>
      Effect.gen(function*() {
        const { one, release, started, two, work } = yield* twoProcesses(yield* dialect.database)
        const agent = Agent.make({ name: "steering", tools: [work], onConversationBusy: "steer" })
        const model = ScriptedChatModel.layer([ScriptedChatModel.toolCalls({ id: "w1", name: "work", args: {} }), ScriptedChatModel.text("Booked for four.")])
        const first = yield* Effect.forkChild(
          Agent.run(agent, { input: "book a table", conversationId: "c", runId: "r1" }).pipe(Effect.provide(model), Effect.provideContext(one))
        )
        yield* Deferred.await(started)
        const second = yield* Effect.forkChild(
          Agent.run(agent, { input: "for four people", conversationId: "c" }).pipe(
            Effect.provide(ScriptedChatModel.layer([])),
            Effect.provideContext(two),
            Effect.flip
          )
        )
        // the input is in the table, pending, before the turn goes on
        const sql = Context.get(two, SqlClient.SqlClient)
        yield* Effect.repeat(sql`SELECT count(*) AS n FROM agentfx_steering WHERE status = 'pending'`, {
          until: (rows) => Number(rows[0]!.n) === 1
        })
        yield* Deferred.succeed(release, undefined)
        expect((yield* Fiber.join(first))._tag).toBe("Completed")
        const steered = yield* Fiber.join(second)
        expect(steered._tag === "Steered" && steered.runId).toBe("r1")
        const memory = Context.get(two, ChatMemory.ChatMemory)
        expect(lines(yield* memory.get("c"))).toEqual(["user:book a table", "assistant:", "result:done", "user:for four people", "assistant:Booked for four."])
        expect((yield* sql`SELECT status, run_id FROM agentfx_steering`).map((row) => [row.status, row.run_id])).toEqual([["taken", "r1"]])
      }).pipe(Effect.scoped), 30_000)

    it.live("a steer the turn never took (it ended) is withdrawn by its sender and runs as its own turn: once", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const one = yield* Layer.build(storeLayerOn(database))
        const two = yield* Layer.build(storeLayerOn(database))
        const reached = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const agent = Agent.make({
          name: "steering",
          onConversationBusy: "steer",
          middleware: [{ model: (input, next) => Effect.andThen(Deferred.succeed(reached, undefined), Effect.andThen(Deferred.await(release), next(input))) }]
        })
        const first = yield* Effect.forkChild(
          Agent.run(agent, { input: "hello", conversationId: "c", runId: "r1" }).pipe(
            Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("Hi.")])),
            Effect.provideContext(one)
          )
        )
        yield* Deferred.await(reached)
        const second = yield* Effect.forkChild(
          Agent.run(agent, { input: "and another thing", conversationId: "c", runId: "r2" }).pipe(
            Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("Noted.")])),
            Effect.provideContext(two)
          )
        )
        const sql = Context.get(two, SqlClient.SqlClient)
        yield* Effect.repeat(sql`SELECT count(*) AS n FROM agentfx_steering WHERE status = 'pending'`, {
          until: (rows) => Number(rows[0]!.n) === 1
        })
        yield* Deferred.succeed(release, undefined)
        expect((yield* Fiber.join(first))._tag).toBe("Completed")
        const own = yield* Fiber.join(second)
        expect([own._tag, own.runId]).toEqual(["Completed", "r2"])
        const memory = Context.get(one, ChatMemory.ChatMemory)
        expect(lines(yield* memory.get("c"))).toEqual(["user:hello", "assistant:Hi.", "user:and another thing", "assistant:Noted."])
        expect((yield* sql`SELECT status FROM agentfx_steering`).map((row) => row.status)).toEqual(["withdrawn"])
      }).pipe(Effect.scoped), 30_000)

    it.live("a steer taken just before its turn's process dies (in the next model call) is not lost: the recovered run's model sees it once", () =>
      Effect.gen(function*() {
        const { one, release, started, two, work } = yield* twoProcesses(yield* dialect.database)
        const dying = yield* Deferred.make<void>()
        let calls = 0
        const agent = Agent.make({
          name: "steering",
          tools: [work],
          onConversationBusy: "steer",
          // the second model call never ends: the process dies in it
          middleware: [{ model: (input, next) => ++calls === 2 ? Effect.andThen(Deferred.succeed(dying, undefined), Effect.never) : next(input) }]
        })
        const first = yield* Effect.forkChild(
          Agent.run(agent, { input: "book a table", conversationId: "c", runId: "r1" }).pipe(
            Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.toolCalls({ id: "w1", name: "work", args: {} })])),
            Effect.provideContext(one)
          )
        )
        yield* Deferred.await(started)
        const second = yield* Effect.forkChild(
          Agent.run(agent, { input: "for four people", conversationId: "c" }).pipe(Effect.provide(ScriptedChatModel.layer([])), Effect.provideContext(two), Effect.flip)
        )
        const sql = Context.get(two, SqlClient.SqlClient)
        yield* Effect.repeat(sql`SELECT count(*) AS n FROM agentfx_steering WHERE status = 'pending'`, { until: (rows) => Number(rows[0]!.n) === 1 })
        yield* Deferred.succeed(release, undefined)
        yield* Deferred.await(dying)
        // the process dies: its fiber stops where it is, its record stays running
        yield* Fiber.interrupt(first)
        const steered = yield* Fiber.join(second)
        expect(steered._tag === "Steered" && steered.runId).toBe("r1")
        const seen: Array<ReadonlyArray<string>> = []
        const recovered = yield* Agent.recover(agent, "r1").pipe(
          Effect.provide(ScriptedChatModel.layer((request) => {
            seen.push(lines(request.messages))
            return ScriptedChatModel.text("Booked for four.")
          })),
          Effect.provideContext(two)
        )
        expect(recovered._tag).toBe("Completed")
        expect(seen).toEqual([["user:book a table", "assistant:", "result:done", "user:for four people"]])
        expect(lines(yield* Context.get(one, ChatMemory.ChatMemory).get("c"))).toEqual([
          "user:book a table",
          "assistant:",
          "result:done",
          "user:for four people",
          "assistant:Booked for four."
        ])
      }).pipe(Effect.scoped), 30_000)

    for (const policy of ["interrupt", "rollback"] as const) {
      it.live(`${policy}: a turn another process drives is cancelled at its next write, then the new turn runs${policy === "rollback" ? " with the cancelled turn removed" : ", the cancelled call answered"}`, () =>
        Effect.gen(function*() {
          const { one, release, started, two, work } = yield* twoProcesses(yield* dialect.database)
          const agent = Agent.make({ name: "taking-over", tools: [work], onConversationBusy: policy })
          const seen: Array<ReadonlyArray<string>> = []
          const first = yield* Effect.forkChild(
            Agent.run(agent, { input: "book a table", conversationId: "c", runId: "r1" }).pipe(
              Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.toolCalls({ id: "w1", name: "work", args: {} }), ScriptedChatModel.text("Booked.")])),
              Effect.provideContext(one),
              Effect.flip
            )
          )
          yield* Deferred.await(started)
          const second = yield* Effect.forkChild(
            Agent.run(agent, { input: "no, find a cinema", conversationId: "c", runId: "r2" }).pipe(
              Effect.provide(ScriptedChatModel.layer((request) => {
                seen.push(lines(request.messages))
                return ScriptedChatModel.text("Cinema found.")
              })),
              Effect.provideContext(two)
            )
          )
          // the first turn is cancelled through its record, and stops at its next write: once its tool returns
          const store = Context.get(two, RunStore.RunStore)
          yield* Effect.repeat(store.get("r1"), { until: (record) => Option.isSome(record) && record.value.status === "failed" })
          yield* Deferred.succeed(release, undefined)
          const interrupted = yield* Fiber.join(first)
          expect(interrupted).toMatchObject({ _tag: "TurnInterrupted", runId: "r1", by: "r2", rolledBack: policy === "rollback" })
          const own = yield* Fiber.join(second)
          expect([own._tag, own.runId]).toEqual(["Completed", "r2"])
          const conversation = policy === "rollback"
            ? ["user:no, find a cinema", "assistant:Cinema found."]
            : ["user:book a table", "assistant:", "result:cancelled: the call was interrupted before it returned a result", "user:no, find a cinema", "assistant:Cinema found."]
          expect(seen).toEqual([conversation.slice(0, -1)])
          expect(lines(yield* Context.get(one, ChatMemory.ChatMemory).get("c"))).toEqual(conversation)
        }).pipe(Effect.scoped), 30_000)
    }

    it.effect("an input withdrawn and left again under its id (steered into the next holder) is pending again, and taken once", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const steering = Context.get(yield* Layer.build(storeLayerOn(database)), RunStore.RunStore).steering!
        const message = { _tag: "User", text: "for four people" }
        yield* steering.offer({ id: "r2", conversationId: "c", message })
        expect(yield* steering.withdraw("r2")).toEqual({ _tag: "withdrawn" })
        yield* steering.offer({ id: "r2", conversationId: "c", message })
        expect(yield* steering.status("r2")).toEqual({ _tag: "pending" })
        const taken: Array<unknown> = []
        const take = steering.take("c", "r1", (inputs) => Effect.sync(() => void taken.push(...inputs)))
        yield* take
        yield* take
        expect(taken).toEqual([{ id: "r2", message }])
        expect(yield* steering.withdraw("r2")).toEqual({ _tag: "taken", runId: "r1" })
      }).pipe(Effect.scoped))
  })
}
