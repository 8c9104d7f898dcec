/**
 * The agent of the cluster tests and its counts: `transfer` needs approval; `lookup` does not;
 * every execution is counted per call id (in this process: the tests run runners in-process).
 * The scripted model: `pay <n>` → `lookup` (call `lookup-<n>`), then `transfer` (call
 * `transfer-<n>`), then "paid <n>"; `block <n>` → `block` and `blockIdempotent` at once (calls
 * `block-<n>`, `idem-<n>`; they wait on {@link gate}), then "unblocked <n>"; `guard <n>` →
 * `guarded` (needs approval, waits on the gate; call `guarded-<n>`), then "guarded <n>";
 * anything else → "hello".
 */
import { Agent, type ChatModel, type Message, ScriptedChatModel, Tool, ToolCallingManager } from "@agentfx/core"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { type Context, Layer } from "effect"
import { Entity, EntityAddress, EntityId, EntityType, RunnerAddress, ShardId, Snowflake } from "effect/cluster"
import * as Reactivity from "effect/reactivity/Reactivity"
import { PgClient } from "@effect/sql-pg"
import { postgresUrl } from "@agentfx/testing/PostgresUrl"
import { Effect, Redacted, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { type AddressInfo, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ClusterSqlite from "../src/ClusterSqlite.js"
import { AgentCluster } from "../src/index.js"
import * as Handler from "../src/internal/handler.js"

/** Executions per call id, in this process. */
export const executions = new Map<string, number>()

const counted = (name: string, options: { readonly needsApproval?: boolean; readonly idempotent?: boolean; readonly handler?: Effect.Effect<void> }) =>
  Tool.make(name, {
    description: `Tool ${name}`,
    parameters: Schema.Struct({}),
    success: Schema.String,
    needsApproval: options.needsApproval ?? false,
    idempotent: options.idempotent ?? false,
    handler: (_, call) =>
      Effect.sync(() => executions.set(call.callId, (executions.get(call.callId) ?? 0) + 1)).pipe(
        Effect.andThen(options.handler ?? Effect.void),
        Effect.as(`${name} done`)
      )
  })

/** What `block` and `blockIdempotent` wait on (a test sets it to hold them). */
export const gate: { wait: Effect.Effect<void> } = { wait: Effect.void }

export const bankAgent = Agent.make({
  name: "bank",
  tools: [
    counted("lookup", {}),
    counted("transfer", { needsApproval: true }),
    counted("block", { handler: Effect.suspend(() => gate.wait) }),
    counted("blockIdempotent", { idempotent: true, handler: Effect.suspend(() => gate.wait) }),
    counted("guarded", { needsApproval: true, handler: Effect.suspend(() => gate.wait) })
  ]
})

export const Bank = AgentCluster.make(bankAgent)

const words = (request: { readonly messages: ReadonlyArray<Message.Message> }) => {
  const user = [...request.messages].reverse().find((m): m is Message.UserMessage => m._tag === "User")
  return (user?.text ?? "").split(" ")
}

export const bankModel: Layer.Layer<ChatModel.ChatModel | ScriptedChatModel.ScriptedChatModel> = ScriptedChatModel.layer((request) => {
  const [what, n] = words(request)
  const last = request.messages.at(-1)
  if (what === "pay") {
    if (last?._tag === "User") return ScriptedChatModel.toolCalls({ id: `lookup-${n}`, name: "lookup", args: {} })
    if (last?._tag === "ToolResult" && last.toolName === "lookup") return ScriptedChatModel.toolCalls({ id: `transfer-${n}`, name: "transfer", args: {} })
    return ScriptedChatModel.text(`paid ${n}`)
  }
  if (what === "block") {
    return last?._tag === "User"
      ? ScriptedChatModel.toolCalls({ id: `block-${n}`, name: "block", args: {} }, { id: `idem-${n}`, name: "blockIdempotent", args: {} })
      : ScriptedChatModel.text(`unblocked ${n}`)
  }
  if (what === "twice") {
    if (last?._tag === "User") return ScriptedChatModel.toolCalls({ id: `first-${n}`, name: "transfer", args: {} })
    if (last?._tag === "ToolResult" && last.callId === `first-${n}`) return ScriptedChatModel.toolCalls({ id: `second-${n}`, name: "transfer", args: {} })
    return ScriptedChatModel.text(`twice ${n}`)
  }
  if (what === "guard") {
    return last?._tag === "User" ? ScriptedChatModel.toolCalls({ id: `guarded-${n}`, name: "guarded", args: {} }) : ScriptedChatModel.text(`guarded ${n}`)
  }
  return ScriptedChatModel.text("hello")
}, { recordRequests: false })

/** A temp directory, removed with the scope. */
export const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "agentfx-cluster-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** A free TCP port of this host (for a runner's address). */
export const freePort = Effect.callback<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** The PostgreSQL server of the tests. */
export const pgUrl: string = postgresUrl()

/** A new PostgreSQL schema (dropped with the scope): a URL whose connections use it. */
export const freshSchema = Effect.gen(function*() {
  const schema = `agentfx_cluster_${randomUUID().replaceAll("-", "")}`
  const admin = yield* PgClient.make({ url: Redacted.make(pgUrl) }).pipe(Effect.provide(Reactivity.layer))
  yield* admin.unsafe(`CREATE SCHEMA ${schema}`)
  yield* Effect.addFinalizer(() => Effect.orDie(admin.unsafe(`DROP SCHEMA ${schema} CASCADE`)))
  return `${pgUrl}${pgUrl.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`
}).pipe(Effect.orDie)

/**
 * A new PostgreSQL database (dropped with the scope), for runners that must not share shard locks
 * with other tests' (the engine's are advisory locks, per database): its URL, and a query of the
 * shard locks held in it — how many, by how many runners.
 */
export const freshDatabase = Effect.gen(function*() {
  const name = `agentfx_cluster_${randomUUID().replaceAll("-", "")}`
  const admin = yield* PgClient.make({ url: Redacted.make(pgUrl) }).pipe(Effect.provide(Reactivity.layer))
  yield* admin.unsafe(`CREATE DATABASE ${name}`)
  yield* Effect.addFinalizer(() => Effect.orDie(admin.unsafe(`DROP DATABASE ${name} WITH (FORCE)`)))
  const url = new URL(pgUrl)
  url.pathname = `/${name}`
  const locks = admin.unsafe<{ readonly locks: number; readonly runners: number }>(
    `SELECT count(*)::int AS locks, count(DISTINCT pid)::int AS runners FROM pg_locks l JOIN pg_database d ON d.oid = l.database
     WHERE l.locktype = 'advisory' AND l.granted AND d.datname = '${name}'`
  ).pipe(Effect.map((rows) => rows[0]!), Effect.orDie)
  return { url: url.toString(), locks }
}).pipe(Effect.orDie)

/** `runner` (an entity served, with its model) on the embedded cluster of the file `filename`, polling every 100 ms. */
export const onFile = <E, R>(runner: Layer.Layer<never, E, R>, filename: string) =>
  runner.pipe(Layer.provideMerge(ClusterSqlite.layer({ filename, pollInterval: "100 millis", shutdownTimeout: "100 millis" })))

/** The bank agent's runner on the embedded cluster of the file `filename`. */
export const bankRunnerOn = (filename: string) =>
  onFile(AgentCluster.runner(Bank).pipe(Layer.provide([bankModel, ToolCallingManager.unbounded()])), filename)

/** `agent`'s entity handlers for `entityId` (a conversation's, or an ephemeral run's), as a runner builds them, with `model`, over the SQLite store of `filename`. */
export const handlersOf = (agent: Agent.Any, model: Layer.Layer<ChatModel.ChatModel>, filename: string, entityId: string) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(Layer.mergeAll(model, ToolCallingManager.unbounded()))
    const store = yield* Layer.build(SqliteStore.layer({ filename }))
    return yield* Handler.make(agent, context as Context.Context<ChatModel.ChatModel>, Handler.makeRunnerTurns()).pipe(
      Effect.provideService(Entity.CurrentAddress, EntityAddress.make({
        shardId: ShardId.make("default", 1),
        entityType: EntityType.make(`agentfx/${agent.name}`),
        entityId: EntityId.make(entityId)
      })),
      Effect.provideService(Entity.CurrentRunnerAddress, RunnerAddress.make("127.0.0.1", 1)),
      Effect.provideContext(store)
    )
  })

/** `agent`'s entity handlers for conversation `conversationId` ({@link handlersOf}). */
export const handlersOn = (agent: Agent.Any, model: Layer.Layer<ChatModel.ChatModel>, filename: string, conversationId: string) =>
  handlersOf(agent, model, filename, `conversation:${conversationId}`)

/** A request of an entity as the engine hands it over: its payload and its request id (kept when redelivered). */
export const request = <R>(requestId: bigint, payload: unknown) => ({ requestId: Snowflake.Snowflake(requestId), payload }) as unknown as R
