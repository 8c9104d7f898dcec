/**
 * The run store and the chat memory together on one database, on any `SqlClient` of SQLite
 * or PostgreSQL. This module needs no driver: the Layers that bring their own client are in
 * `@agentfx/sql/SqliteStore` (a file, nothing to run — the embedded default) and
 * `@agentfx/sql/PgStore` (for many processes), each importing only its own driver.
 * Exactly-once across processes holds when they share a store: every process that may
 * resume a run must use the same database.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "effect/sql/SqlClient"
import { ChatMemory, RunStore } from "@agentfx/core"
import { Context, Effect, Layer } from "effect"
import * as internal from "./internal/migrations.js"
import * as SqlChatMemory from "./SqlChatMemory.js"
import * as runStore from "./internal/runStore.js"
import type * as SqlRunStore from "./SqlRunStore.js"

/**
 * Options of the store: those of `SqlRunStore` (retention, lease ttl).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends SqlRunStore.Options {}

/**
 * Creates or updates agentfx's tables (`agentfx_runs`, `agentfx_outcomes`, `agentfx_leases`,
 * `agentfx_messages`) with `effect/sql`'s Migrator, recording what ran in its own table
 * `agentfx_migrations`: the migrations that ran, none when the schema is up to date.
 * Processes that start at once on a new database each run it; one migrates, the others
 * wait for it. Fails with `StoreError` (the database's message) on any other dialect than
 * SQLite and PostgreSQL, or when the database refuses.
 *
 * @example
 * ```ts
 * import { SqliteClient } from "@effect/sql-sqlite-node"
 * import { Effect } from "effect"
 * import { SqlStore } from "@agentfx/sql"
 *
 * const ran = SqlStore.migrate.pipe(Effect.provide(SqliteClient.layer({ filename: "agentfx.db" })))
 * ```
 *
 * @since 0.1.0
 * @category migrations
 */
export const migrate: Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, RunStore.StoreError, SqlClient.SqlClient> =
  internal.migrate

/**
 * The run store and the chat memory on the `SqlClient` it is given, after migrating the
 * schema once. `SqliteStore.layer` and `PgStore.layer` are this Layer with their own client.
 *
 * @example
 * ```ts
 * import { SqliteClient } from "@effect/sql-sqlite-node"
 * import { Layer } from "effect"
 * import { SqlStore } from "@agentfx/sql"
 *
 * // one client for the app's own tables and agentfx's
 * const Database = SqliteClient.layer({ filename: "app.db" })
 * const StoreLive = SqlStore.layer({ retention: "7 days" }).pipe(Layer.provideMerge(Database))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options?: Options
): Layer.Layer<never, RunStore.StoreError, SqlClient.SqlClient> =>
  Layer.effectContext(Effect.gen(function*() {
    yield* internal.migrate
    const memory = yield* SqlChatMemory.make
    // the store writes a durable run's messages to this memory in its own statements (RunStore.conversations)
    const store = yield* runStore.make(options, memory)
    return Context.make(RunStore.RunStore, store).pipe(Context.add(ChatMemory.ChatMemory, memory))
  }))
