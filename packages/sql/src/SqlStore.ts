/**
 * The run store and the chat memory together on one database: SQLite (a file, nothing to
 * run — the embedded default) or PostgreSQL (for many processes), or any `SqlClient` of
 * either. Exactly-once across processes holds when they share a store: every process that
 * may resume a run must use the same database.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { ChatMemory, RunStore } from "@agentfx/core"
import { Cause, Context, Effect, Layer } from "effect"
import { describe } from "./internal/errors.js"
import * as internal from "./internal/migrations.js"
import * as SqlChatMemory from "./SqlChatMemory.js"
import * as SqlRunStore from "./SqlRunStore.js"

/**
 * Options of the store: those of `SqlRunStore` (retention, lease ttl).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends SqlRunStore.Options {}

/**
 * Creates or updates agentfx's tables (`agentfx_runs`, `agentfx_outcomes`, `agentfx_leases`,
 * `agentfx_messages`) with `@effect/sql`'s Migrator, recording what ran in its own table
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
 * schema once.
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
): Layer.Layer<RunStore.RunStore | ChatMemory.ChatMemory, RunStore.StoreError, SqlClient.SqlClient> =>
  Layer.effectContext(Effect.gen(function*() {
    yield* internal.migrate
    const store = yield* SqlRunStore.make(options)
    const memory = yield* SqlChatMemory.make
    return Context.make(RunStore.RunStore, store).pipe(Context.add(ChatMemory.ChatMemory, memory))
  }))

/** A client Layer whose every failure, defects included (a file that cannot be opened), is a `StoreError`. */
const opened = <E>(what: string, client: Layer.Layer<SqlClient.SqlClient, E>): Layer.Layer<SqlClient.SqlClient, RunStore.StoreError> =>
  Layer.catchAllCause(client, (cause) =>
    Cause.isInterruptedOnly(cause)
      ? Layer.failCause(cause as Cause.Cause<never>)
      : Layer.fail(new RunStore.StoreError({ message: `Could not open ${what}: ${describe(Cause.squash(cause))}` })))

/**
 * How SQLite opens the file.
 *
 * @example
 * ```ts
 * import type { SqlStore } from "@agentfx/sql"
 *
 * const options: SqlStore.SqliteClientOptions = { filename: "agentfx.db", synchronous: "full" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface SqliteClientOptions {
  /** The database file (created when missing; its directory must exist). */
  readonly filename: string
  /**
   * When a commit reaches the disk. `"full"` (default): before the commit returns (an fsync
   * per commit) — nothing committed is lost, even by a power loss or an OS crash, at the cost
   * of an fsync per write (0.3–2 ms each on the test machine's virtual disk). `"normal"` (what
   * better-sqlite3 sets for WAL mode): at WAL checkpoints — a process crash loses nothing
   * committed, but a power loss or an OS crash may roll back the last commits, a claim among
   * them, after which an approved call could run again.
   */
  readonly synchronous?: "full" | "normal"
}

/**
 * Options of the SQLite store.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqliteOptions extends Options, SqliteClientOptions {}

/**
 * The SQLite client the SQLite store uses — the file in WAL mode, with `synchronous` set,
 * one connection (statements of one process run one at a time); a file that cannot be
 * opened, or an invalid option, fails it with `StoreError`. Provide it to {@link layer}
 * together with your own tables' code to use one connection for both.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { SqlStore } from "@agentfx/sql"
 *
 * const Database = SqlStore.layerSqliteClient({ filename: "app.db" })
 * const StoreLive = SqlStore.layer().pipe(Layer.provideMerge(Database))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqliteClient = (options: SqliteClientOptions): Layer.Layer<SqlClient.SqlClient, RunStore.StoreError> => {
  const synchronous = options.synchronous ?? "full"
  if (synchronous !== "full" && synchronous !== "normal") {
    return Layer.fail(new RunStore.StoreError({ message: `Invalid SQLite option: synchronous must be "full" or "normal" (got ${JSON.stringify(synchronous)})` }))
  }
  return opened(
    `SQLite database ${options.filename}`,
    SqliteClient.layer({ filename: options.filename }).pipe(
      Layer.tap((context) => Context.get(context, SqliteClient.SqliteClient).unsafe(`PRAGMA synchronous = ${synchronous.toUpperCase()}`))
    )
  )
}

/**
 * The run store and the chat memory in a SQLite file — the embedded default: nothing to
 * install or run ({@link layerSqliteClient} says how the file is opened). Processes sharing
 * the file share the store: their writes are serialised by SQLite's lock (a process waits up
 * to 5 s for it, blocking its event loop meanwhile: the driver is synchronous).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 * import { SqlStore } from "@agentfx/sql"
 *
 * declare const agent: Agent.Agent
 * const resumed = Agent.resume(agent, "run-id", Decision.approveAll()).pipe(
 *   Effect.provide(SqlStore.layerSqlite({ filename: "agentfx.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSqlite = (options: SqliteOptions): Layer.Layer<RunStore.RunStore | ChatMemory.ChatMemory, RunStore.StoreError> =>
  layer(options).pipe(Layer.provide(layerSqliteClient(options)))

/**
 * Options of the PostgreSQL store: `@effect/sql-pg`'s `PgClientConfig` (given to
 * `PgClient.layer` as is: `url` or `host`/`port`/`database`/`username`/`password`,
 * `maxConnections`, `ssl`, …) and the store's own.
 *
 * @since 0.1.0
 * @category models
 */
export interface PgOptions extends Options, PgClient.PgClientConfig {}

/**
 * The run store and the chat memory in PostgreSQL, for many processes: each process that
 * may resume a run connects to the same database. A server that cannot be reached fails
 * the Layer with `StoreError`.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { SqlStore } from "@agentfx/sql"
 *
 * const StoreLive = SqlStore.layerPg({ url: Redacted.make("postgres://agentfx@db.internal/agentfx"), maxConnections: 8 })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPg = (options: PgOptions): Layer.Layer<RunStore.RunStore | ChatMemory.ChatMemory, RunStore.StoreError> => {
  const { leaseTtl, retention, ...client } = options
  return layer({ ...(leaseTtl === undefined ? {} : { leaseTtl }), ...(retention === undefined ? {} : { retention }) }).pipe(
    Layer.provide(opened("PostgreSQL", PgClient.layer(client)))
  )
}
