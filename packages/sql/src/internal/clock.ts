/**
 * The database's clock. Everything the store stamps (a record's times, a claim's, a lease's
 * expiry) and everything it compares with them (the retention, a lease's end) is read from it,
 * never from the host's `Clock`: processes whose clocks disagree then agree on when a finished
 * run is forgotten and when a lease has lapsed (decision 056).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { RunStore } from "@agentfx/core"
import { Effect, Schema } from "effect"
import { describe } from "./errors.js"

/** A time in milliseconds: a number from SQLite, a string from PostgreSQL's BIGINT. */
export const Millis = Schema.Union(Schema.Number, Schema.NumberFromString)

/**
 * The database's time in milliseconds since the epoch, as a SQL expression with one value per
 * statement: PostgreSQL's `statement_timestamp()`, SQLite's `unixepoch('subsec')` (SQLite 3.42,
 * which `better-sqlite3` ships; an embedded database's clock is its host's, shared by the
 * processes of that host).
 */
export const nowOf = (sql: SqlClient.SqlClient) =>
  sql.literal(sql.onDialectOrElse({
    pg: () => "(floor(extract(epoch from statement_timestamp()) * 1000)::bigint)",
    orElse: () => "(CAST(round(unixepoch('subsec') * 1000) AS INTEGER))"
  }))

const decodeNow = Schema.decodeUnknown(Schema.Tuple(Schema.Struct({ now: Millis })))

/** The database's time now: `RunStore.now`. */
export const read = (sql: SqlClient.SqlClient): Effect.Effect<number, RunStore.StoreError> =>
  sql`SELECT ${nowOf(sql)} AS now`.pipe(
    Effect.flatMap(decodeNow),
    Effect.map(([row]) => row.now),
    Effect.mapError((error) => new RunStore.StoreError({ message: describe(error) }))
  )
