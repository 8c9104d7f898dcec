/**
 * A steered input across processes sharing a store (decision 170): two stores on one database
 * (two processes' views, each its own client) — the input left by one is taken by the turn the
 * other drives, before its next model call, once; a sender whose turn ended withdraws it and
 * runs it as its own turn. Real time: the sender polls the database.
 */
import { Agent, ChatMemory, type Message, ScriptedChatModel, Tool } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { dialects, storeLayerOn } from "./fixtures.js"

const lines = (messages: ReadonlyArray<Message.Message>) =>
  messages.map((m) => m._tag === "User" ? `user:${m.text}` : m._tag === "Assistant" ? `assistant:${m.text}` : m._tag === "ToolResult" ? `result:${m.content}` : m._tag)

for (const dialect of dialects) {
  describe(`double texting on ${dialect.name}`, () => {
    it.live("a steer left by one process joins the turn another drives, before its next model call, once", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
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
  })
}
