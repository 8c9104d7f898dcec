/**
 * The run store and the chat memory in a SQLite file — the embedded default: nothing to
 * install or run but `@effect/sql-sqlite-node`, the one driver this module imports (import it
 * from `@agentfx/sql/SqliteStore`; `@effect/sql-pg` need not be installed).
 *
 * @since 0.1.0
 */
import * as SqlClient from "effect/sql/SqlClient"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { RunStore } from "@agentfx/core"
import { Context, Effect, Layer } from "effect"
import { existsSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { opened } from "./internal/opened.js"
import * as SqlStore from "./SqlStore.js"

/**
 * How SQLite opens the file.
 *
 * @example
 * ```ts
 * import type * as SqliteStore from "@agentfx/sql/SqliteStore"
 *
 * const options: SqliteStore.ClientOptions = { filename: "agentfx.db", synchronous: "full" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions {
  /** The database file (created when missing; its directory must exist). */
  readonly filename: string
  /**
   * When a commit reaches the disk. `"full"` (default): before the commit returns (an fsync
   * per commit) — nothing committed is lost, even by a power loss or an OS crash, at the cost
   * of an fsync per write (0.3–2 ms each on the test machine's virtual disk). `"normal"`: at
   * WAL checkpoints — a process crash loses nothing committed, but a power loss or an OS crash
   * may roll back the last commits, a claim among them, after which an approved call could run
   * again.
   */
  readonly synchronous?: "full" | "normal"
}

/**
 * Options of the SQLite store: the file's and the store's (retention, lease ttl).
 *
 * @example
 * ```ts
 * import type * as SqliteStore from "@agentfx/sql/SqliteStore"
 *
 * const options: SqliteStore.Options = { filename: "agentfx.db", retention: "7 days" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends SqlStore.Options, ClientOptions {}

/**
 * The SQLite client the SQLite store uses — the file in WAL mode, with `synchronous` set,
 * one connection (statements of one process run one at a time); a file that cannot be
 * opened, or an invalid option, fails it with `StoreError`. Provide it to `SqlStore.layer`
 * together with your own tables' code to use one connection for both.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { SqlStore } from "@agentfx/sql"
 * import * as SqliteStore from "@agentfx/sql/SqliteStore"
 *
 * const Database = SqliteStore.layerClient({ filename: "app.db" })
 * const StoreLive = SqlStore.layer().pipe(Layer.provideMerge(Database))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (options: ClientOptions): Layer.Layer<SqlClient.SqlClient, RunStore.StoreError> => {
  const synchronous = options.synchronous ?? "full"
  if (synchronous !== "full" && synchronous !== "normal") {
    return Layer.effect(
      SqlClient.SqlClient,
      Effect.fail(new RunStore.StoreError({ message: `Invalid SQLite option: synchronous must be "full" or "normal" (got ${JSON.stringify(synchronous)})` }))
    )
  }
  // SQLite says only "unable to open database file" when the file's directory is missing: said here
  return Layer.unwrap(Effect.sync(() =>
    opened(
      `SQLite database ${options.filename}${existsSync(dirname(resolve(options.filename))) ? "" : " (its directory does not exist)"}`,
      SqliteClient.layer({ filename: options.filename }).pipe(
        Layer.tap((context) => Context.get(context, SqliteClient.SqliteClient).unsafe(`PRAGMA synchronous = ${synchronous.toUpperCase()}`))
      )
    )
  ))
}

/**
 * The run store and the chat memory in a SQLite file ({@link layerClient} says how the file
 * is opened). Processes sharing the file share the store: their writes are serialised by
 * SQLite's lock (a process waits up to 5 s for it, blocking its event loop meanwhile: the
 * driver is synchronous).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 * import * as SqliteStore from "@agentfx/sql/SqliteStore"
 *
 * declare const agent: Agent.Agent
 * const resumed = Agent.resume(agent, "run-id", Decision.approveAll()).pipe(
 *   Effect.provide(SqliteStore.layer({ filename: "agentfx.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<never, RunStore.StoreError> =>
  SqlStore.layer(options).pipe(Layer.provide(layerClient(options)))
