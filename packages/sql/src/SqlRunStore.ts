/**
 * A durable `RunStore` on any `effect/sql` client (SQLite or PostgreSQL): run records with
 * their checkpoints, the claim of a paused run as one conditional `UPDATE` (exactly one of
 * any number of concurrent claimants wins, in any number of processes sharing the
 * database), each call's result recorded as it ends, finished records kept for a retention,
 * and leases as rows with an owner and an expiry — every time on the database's clock.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "effect/sql/SqlClient"
import { RunStore } from "@agentfx/core"
import type { Duration } from "effect"
import { Effect, Layer } from "effect"
import * as internal from "./internal/runStore.js"
import { migrate } from "./internal/migrations.js"

/**
 * Options of the SQL run store.
 *
 * @example
 * ```ts
 * import type { SqlRunStore } from "@agentfx/sql"
 *
 * const options: SqlRunStore.Options = { retention: "7 days", leaseTtl: "10 seconds" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * How long a finished run's record is kept (then deleted): its id cannot be used again
   * meanwhile, `list` shows it, and a copy of its checkpoint is refused (`RunAlreadyResumed`).
   * A checkpoint paused longer ago than this cannot be imported. Measured on the database's
   * clock, whatever the processes' clocks say (`RunStore.now`). Default 24 hours.
   */
  readonly retention?: Duration.Input
  /**
   * How long a lease lasts without renewal (one turn per conversation; a run alive). Its
   * holder renews it every third of this while it holds it; a holder that crashed loses it
   * this long after its last renewal (on the database's clock), and then `Agent.recover` (or
   * the next turn) can take the run (or conversation) over. Default 30 seconds.
   */
  readonly leaseTtl?: Duration.Input
}

/**
 * The store on the `SqlClient` in context. The schema must exist: use {@link layer}, or run
 * `SqlStore.migrate` first. Fails with `StoreError` when an option is invalid.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SqlRunStore, SqlStore } from "@agentfx/sql"
 *
 * const store = Effect.andThen(SqlStore.migrate, SqlRunStore.make({ retention: "1 hour" }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options?: Options) => Effect.Effect<RunStore.RunStore.Service, RunStore.StoreError, SqlClient.SqlClient> =
  internal.make

/**
 * The store as a Layer on the `SqlClient` it is given: migrates the schema, then provides
 * the `RunStore`. `SqliteStore.layer` and `PgStore.layer` bring their own client and a
 * `ChatMemory` too.
 *
 * @example
 * ```ts
 * import { SqliteClient } from "@effect/sql-sqlite-node"
 * import { Layer } from "effect"
 * import { SqlRunStore } from "@agentfx/sql"
 *
 * const StoreLive = SqlRunStore.layer({ leaseTtl: "15 seconds" }).pipe(
 *   Layer.provide(SqliteClient.layer({ filename: "agentfx.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<never, RunStore.StoreError, SqlClient.SqlClient> =>
  Layer.effect(RunStore.RunStore, Effect.andThen(migrate, internal.make(options)))
