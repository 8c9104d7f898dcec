/**
 * The database's clock. Everything the store stamps (a record's times, a claim's, a lease's
 * expiry) and everything it compares with them (the retention, a lease's end) is read from it,
 * never from the host's `Clock`: processes whose clocks disagree then agree on when a finished
 * run is forgotten and when a lease has lapsed (decision 056).
 *
 * `RunStore.now` is read without a statement of its own when a write of this store returned
 * the database's time less than {@link carriedFor} ago: that time, plus the interval since as
 * this host measures it — an interval, never a date, so no skew enters it — when its monotonic
 * and its wall clock agree on that interval (neither stepped, the host was not suspended).
 * Otherwise it is read with a `SELECT` (decision 100).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { RunStore } from "@agentfx/core"
import { Effect, Schema } from "effect"
import { performance } from "node:perf_hooks"
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

/** How long a time a write returned is carried forward before `now` reads the database again. */
export const carriedFor = 1_000

/** How far the host's monotonic and wall clocks may disagree on the interval carried. */
const agreement = 20

/** The store's clock: the SQL expression its statements stamp with, and `RunStore.now`. */
export interface DatabaseClock {
  /** The database's time, as a SQL expression (see {@link nowOf}). */
  readonly sql: ReturnType<typeof nowOf>
  /** Keeps the database's time a statement returned (`undefined`, `null`: none). */
  readonly carry: (millis: unknown) => void
  /** Whether a one-row write (`RETURNING …, <now> AS now`) was made; the time it returned is carried. */
  readonly written: (rows: ReadonlyArray<{ readonly now?: unknown }>) => boolean
  /** `RunStore.now`: the carried time when fresh, else a `SELECT`. */
  readonly now: Effect.Effect<number, RunStore.StoreError>
}

/** The clock of a store on `sql`. */
export const make = (sql: SqlClient.SqlClient): DatabaseClock => {
  const expression = nowOf(sql)
  let carried: { readonly database: number; readonly monotonic: number; readonly wall: number } | undefined
  const carry = (millis: unknown) => {
    const database = typeof millis === "string" ? Number(millis) : millis
    if (typeof database === "number" && Number.isFinite(database)) carried = { database, monotonic: performance.now(), wall: Date.now() }
  }
  const select = sql`SELECT ${expression} AS now`.pipe(
    Effect.flatMap(decodeNow),
    Effect.map(([row]) => (carry(row.now), row.now)),
    Effect.mapError((error) => new RunStore.StoreError({ message: describe(error) }))
  )
  const now = Effect.suspend(() => {
    if (carried === undefined) return select
    const since = performance.now() - carried.monotonic
    const fresh = since >= 0 && since < carriedFor && Math.abs(Date.now() - carried.wall - since) <= agreement
    return fresh ? Effect.succeed(Math.round(carried.database + since)) : select
  })
  const written = (rows: ReadonlyArray<{ readonly now?: unknown }>) => {
    if (rows.length === 1) carry(rows[0]!.now)
    return rows.length === 1
  }
  return { sql: expression, carry, written, now }
}
