/**
 * The run store and the chat memory in PostgreSQL, for many processes: `@effect/sql-pg` is the
 * one driver this module imports (import it from `@agentfx/sql/PgStore`;
 * `@effect/sql-sqlite-node` need not be installed).
 *
 * @since 0.1.0
 */
import * as SqlClient from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import type { RunStore } from "@agentfx/core"
import { Context, Layer } from "effect"
import { opened } from "./internal/opened.js"
import * as SqlStore from "./SqlStore.js"

/**
 * Options of the PostgreSQL store: `@effect/sql-pg`'s `PgPoolConfig` (given to
 * `PgClient.layer` as is: `url` or `host`/`port`/`database`/`username`/`password`,
 * `maxConnections`, `ssl`, …) and the store's own (retention, lease ttl).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import type * as PgStore from "@agentfx/sql/PgStore"
 *
 * const options: PgStore.Options = { url: Redacted.make("postgres://agentfx@db.internal/agentfx"), retention: "30 days" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends SqlStore.Options, PgClient.PgPoolConfig {}

/**
 * A PostgreSQL client (`PgClient.layer` with `options` as is) whose every failure to connect
 * is a `StoreError`: for a store built beside other users of the same client (a cluster's
 * tables, the app's own). It connects once when built (the driver's pool connects on first
 * use), so that a server that cannot be reached fails the Layer.
 *
 * @example
 * ```ts
 * import { Layer, Redacted } from "effect"
 * import { SqlStore } from "@agentfx/sql"
 * import * as PgStore from "@agentfx/sql/PgStore"
 *
 * const StoreLive = SqlStore.layer().pipe(Layer.provideMerge(PgStore.layerClient({ url: Redacted.make("postgres://agentfx@db.internal/agentfx") })))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerClient = (options: PgClient.PgPoolConfig): Layer.Layer<SqlClient.SqlClient, RunStore.StoreError> =>
  opened("PostgreSQL", PgClient.layer(options).pipe(Layer.tap((context) => Context.get(context, SqlClient.SqlClient)`SELECT 1`)))

/**
 * The run store and the chat memory in PostgreSQL: each process that may resume a run
 * connects to the same database. A server that cannot be reached fails the Layer with
 * `StoreError`.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import * as PgStore from "@agentfx/sql/PgStore"
 *
 * const StoreLive = PgStore.layer({ url: Redacted.make("postgres://agentfx@db.internal/agentfx"), maxConnections: 8 })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<never, RunStore.StoreError> => {
  const { leaseTtl, retention, ...client } = options
  return SqlStore.layer({ ...(leaseTtl === undefined ? {} : { leaseTtl }), ...(retention === undefined ? {} : { retention }) }).pipe(
    Layer.provide(layerClient(client))
  )
}
