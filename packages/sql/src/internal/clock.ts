/**
 * The database's clock. Everything the store stamps (a record's times, a claim's, a lease's
 * expiry) and everything it compares with them (the retention, a lease's end) is read from it,
 * never from the host's `Clock`: processes whose clocks disagree then agree on when a finished
 * run is forgotten and when a lease has lapsed (decision 056).
 *
 * `RunStore.now` costs no statement of its own when a statement of this store returned the
 * database's time less than {@link carriedFor} ago: that time plus the interval since its answer
 * arrived, as this host measures it — an interval, never a date, so no skew enters it — when
 * its monotonic and wall clocks agree on it (neither stepped, the host was not suspended).
 * Counted from the answer, the time is never ahead of the database's (a stamp is never later
 * than the statement that follows it), behind it by at most the answer's way back; and it is
 * never behind the time of the last statement that returned one, whichever fiber sent it: a
 * copy's age is measured at least at the time its run was found forgotten (`finished` returns
 * the time). Otherwise it is read with a `SELECT` (decision 100).
 */
import type * as SqlClient from "effect/sql/SqlClient"
import { RunStore } from "@agentfx/core"
import { Effect, Schema, SchemaTransformation } from "effect"
import { performance } from "node:perf_hooks"
import { describe } from "./errors.js"

/**
 * A time in milliseconds: a number from SQLite, a `bigint` from PostgreSQL's BIGINT (a string
 * where a client's own type registry reads it so).
 */
export const Millis = Schema.Union([
  Schema.Number,
  Schema.NumberFromString,
  Schema.BigInt.pipe(Schema.decodeTo(Schema.Number, SchemaTransformation.transform({ decode: Number, encode: BigInt })))
])

/** A time the database returned, as a number (`undefined` when it is none). */
export const millisOf = (time: unknown): number | undefined => {
  const millis = typeof time === "string" || typeof time === "bigint" ? Number(time) : time
  return typeof millis === "number" && Number.isFinite(millis) ? millis : undefined
}

/**
 * The database's time in milliseconds since the epoch, as a SQL expression with one value per
 * statement: PostgreSQL's `statement_timestamp()`, SQLite's `unixepoch('subsec')` (SQLite 3.42
 * or later, which `node:sqlite` ships; an embedded database's clock is its host's, shared by
 * the processes of that host).
 */
export const nowOf = (sql: SqlClient.SqlClient) =>
  sql.literal(sql.onDialectOrElse({
    pg: () => "(floor(extract(epoch from statement_timestamp()) * 1000)::bigint)",
    orElse: () => "(CAST(round(unixepoch('subsec') * 1000) AS INTEGER))"
  }))

const decodeNow = Schema.decodeUnknownEffect(Schema.Tuple([Schema.Struct({ now: Millis })]))

/** How long the time a write returned is carried before `now` reads the database again. */
export const carriedFor = 1_000

/** How far the host's monotonic and wall clocks may disagree on an interval carried. */
const agreement = 20

/** The store's clock: the SQL expression its statements stamp with, and `RunStore.now`. */
export interface DatabaseClock {
  /** The database's time, as a SQL expression (see {@link nowOf}). */
  readonly sql: ReturnType<typeof nowOf>
  /** `statement`, carrying the database's time it returns (`timeOf` its result; nothing when `undefined` or `null`). */
  readonly carrying: <A, E, R>(statement: Effect.Effect<A, E, R>, timeOf: (result: A) => unknown) => Effect.Effect<A, E, R>
  /** `RunStore.now`: the carried time when fresh, else a `SELECT`. */
  readonly now: Effect.Effect<number, RunStore.StoreError>
}

interface Reading {
  readonly monotonic: number
  readonly wall: number
}

const reading = (): Reading => ({ monotonic: performance.now(), wall: Date.now() })

/** The interval since `from`, when the monotonic and wall clocks agree on it. */
const since = (from: Reading): number | undefined => {
  const to = reading()
  const elapsed = to.monotonic - from.monotonic
  return elapsed >= 0 && Math.abs(to.wall - from.wall - elapsed) <= agreement ? elapsed : undefined
}

/** The clock of a store on `sql`. */
export const make = (sql: SqlClient.SqlClient): DatabaseClock => {
  const expression = nowOf(sql)
  let carried: { readonly database: number; readonly answered: Reading } | undefined
  /** The carried time now, if fresh. */
  const current = () => {
    const elapsed = carried === undefined ? undefined : since(carried.answered)
    return carried === undefined || elapsed === undefined || elapsed >= carriedFor ? undefined : carried.database + elapsed
  }
  const carrying = <A, E, R>(statement: Effect.Effect<A, E, R>, timeOf: (result: A) => unknown) =>
    Effect.tap(statement, (result) =>
      Effect.sync(() => {
        const database = millisOf(timeOf(result))
        if (database === undefined) return
        // both are the database's time or behind it: the later one is kept
        const kept = current()
        if (kept === undefined || database >= kept) carried = { database, answered: reading() }
      }))
  const select = carrying(sql`SELECT ${expression} AS now`, (rows) => rows[0]?.now).pipe(
    Effect.flatMap(decodeNow),
    Effect.map(([row]) => row.now),
    Effect.mapError((error) => new RunStore.StoreError({ message: describe(error) }))
  )
  const now = Effect.suspend(() => {
    const time = current()
    return time === undefined ? select : Effect.succeed(Math.floor(time))
  })
  return { sql: expression, carrying, now }
}
