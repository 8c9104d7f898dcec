/**
 * A second message while a turn works (double texting). Run: `pnpm tsx examples/double-texting.ts`.
 *
 * 1. `steer`: a person asks for a table; while the booking tool works they add "for four people".
 *    The input joins the running turn before its next model call; its sender is told `Steered`.
 * 2. `rollback`: a person asks for a long search, then changes their mind. The search is cancelled
 *    (its tool interrupted) and its messages removed; the new turn answers alone.
 * 3. On a cluster (an embedded runner on a SQLite file of a temporary directory), `interrupt`: the
 *    second message reaches the conversation's running turn past its queue; the first start's reply
 *    is `Failed` (`TurnInterrupted`), the cut-off call is answered in the conversation, and the
 *    second start's reply is its own answer.
 */
import { AgentCluster } from "@agentfx/cluster"
import * as ClusterSqlite from "@agentfx/cluster/ClusterSqlite"
import { Agent, ChatMemory, type Message, RunStore, ScriptedChatModel, Tool } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A tool that works until `done` (or is interrupted), telling `started` it began. */
const workingTool = (name: string, started: Deferred.Deferred<void>, done: Deferred.Deferred<void>) =>
  Tool.make(name, {
    description: `${name} (slow)`,
    parameters: Schema.Struct({}),
    success: Schema.String,
    handler: () =>
      Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(done)).pipe(
        Effect.as("booked"),
        Effect.onInterrupt(() => Console.log(`  [${name}] interrupted`))
      )
  })

const show = (messages: ReadonlyArray<Message.Message>) =>
  messages.map((m) => m._tag === "User" ? `user: ${m.text}` : m._tag === "Assistant" ? `assistant: ${m.text || "(tool calls)"}` : m._tag === "ToolResult" ? `tool: ${m.content}` : m._tag)

const steer = Effect.gen(function*() {
  const started = yield* Deferred.make<void>()
  const done = yield* Deferred.make<void>()
  const agent = Agent.make({ name: "concierge", tools: [workingTool("book_table", started, done)], onConversationBusy: "steer" })
  const first = yield* Effect.forkChild(Agent.run(agent, { input: "Book a table at Luigi's tonight", conversationId: "steer", runId: "booking" }))
  yield* Deferred.await(started)
  const second = yield* Effect.forkChild(Agent.run(agent, { input: "For four people, please", conversationId: "steer" }).pipe(Effect.flip))
  yield* Effect.yieldNow
  yield* Deferred.succeed(done, undefined)
  const exit = yield* Fiber.join(first)
  const answer = yield* Fiber.join(second)
  yield* Console.log(`second message: ${answer._tag} (${answer.message})`)
  yield* Console.log(`first turn: ${exit._tag}: ${exit._tag === "Completed" ? exit.text : ""}`)
  const memory = yield* ChatMemory.ChatMemory
  for (const line of show(yield* memory.get("steer"))) yield* Console.log(`  ${line}`)
}).pipe(Effect.provide(Layer.mergeAll(
  ScriptedChatModel.layer([
    ScriptedChatModel.toolCalls({ id: "call_book", name: "book_table", args: {} }),
    ScriptedChatModel.text("Booked at Luigi's for four, 8 pm.")
  ]),
  RunStore.layerMemory(),
  ChatMemory.layerMemory
)))

const rollback = Effect.gen(function*() {
  const started = yield* Deferred.make<void>()
  const never = yield* Deferred.make<void>()
  const agent = Agent.make({ name: "researcher", tools: [workingTool("search_everything", started, never)], onConversationBusy: "rollback" })
  const first = yield* Effect.forkChild(Agent.run(agent, { input: "Search every archive for Ada", conversationId: "rollback", runId: "search" }))
  yield* Deferred.await(started)
  const second = yield* Agent.run(agent, { input: "Never mind: just her birth year", conversationId: "rollback", runId: "birth-year" })
  const cancelled = yield* Fiber.join(first).pipe(Effect.flip)
  yield* Console.log(`first turn: ${cancelled._tag} (${cancelled.message})`)
  yield* Console.log(`second turn: ${second._tag}: ${second._tag === "Completed" ? second.text : ""}`)
  const memory = yield* ChatMemory.ChatMemory
  for (const line of show(yield* memory.get("rollback"))) yield* Console.log(`  ${line}`)
}).pipe(Effect.provide(Layer.mergeAll(
  ScriptedChatModel.layer([
    ScriptedChatModel.toolCalls({ id: "call_search", name: "search_everything", args: {} }),
    ScriptedChatModel.text("Ada Lovelace was born in 1815.")
  ]),
  RunStore.layerMemory(),
  ChatMemory.layerMemory
)))

/** A temporary directory for the cluster's file, removed with the scope. */
const temporary = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "agentfx-double-texting-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const onCluster = Effect.gen(function*() {
  const started = yield* Deferred.make<void>()
  const never = yield* Deferred.make<void>()
  const Researcher = AgentCluster.make(
    Agent.make({ name: "cluster-researcher", tools: [workingTool("search_everything", started, never)], onConversationBusy: "interrupt" })
  )
  const model = ScriptedChatModel.layer((request) =>
    request.messages.at(-1)?._tag === "ToolResult" || request.messages.filter((m) => m._tag === "User").length > 1
      ? ScriptedChatModel.text("Ada Lovelace was born in 1815.")
      : ScriptedChatModel.toolCalls({ id: "call_search", name: "search_everything", args: {} })
  )
  const runner = AgentCluster.runner(Researcher).pipe(
    Layer.provide(model),
    Layer.provideMerge(ClusterSqlite.layer({ filename: join(yield* temporary, "cluster.db") }))
  )
  yield* Effect.gen(function*() {
    const first = yield* Effect.forkChild(AgentCluster.run(Researcher, { input: "Search every archive for Ada", conversationId: "cluster", runId: "search" }))
    yield* Deferred.await(started)
    const second = yield* AgentCluster.run(Researcher, { input: "Never mind: just her birth year", conversationId: "cluster", runId: "birth-year" })
    const cancelled = yield* Fiber.join(first)
    yield* Console.log(`first reply: ${cancelled._tag}${cancelled._tag === "Failed" ? ` (${cancelled.error}: ${cancelled.message})` : ""}`)
    yield* Console.log(`second reply: ${second._tag}: ${second._tag === "Completed" ? second.text : ""}`)
    const memory = yield* ChatMemory.ChatMemory
    for (const line of show(yield* memory.get("cluster"))) yield* Console.log(`  ${line}`)
  }).pipe(Effect.provide(runner))
}).pipe(Effect.scoped)

NodeRuntime.runMain(Effect.andThen(Effect.andThen(steer, rollback), onCluster))
