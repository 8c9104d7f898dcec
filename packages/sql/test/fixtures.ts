/**
 * Fresh stores for tests: a SQLite file in a temp directory, or a PostgreSQL schema of its
 * own (on the run's server: `AGENTFX_PG_URL`'s, else an embedded one — test/globalSetup.ts).
 */
import * as Reactivity from "effect/reactivity/Reactivity"
import { ChatMemory, RunStore } from "@agentfx/core"
import * as SqlClient from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@effect/sql-sqlite-node"
import type { Scope } from "effect"
import { Context, Effect, Layer, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { postgresUrl } from "@agentfx/testing/PostgresUrl"
import { SqlStore } from "../src/index.js"
import * as SqliteStore from "../src/SqliteStore.js"

/** The PostgreSQL server of the tests. */
export const pgUrl: string = postgresUrl()

/** A temp directory, removed with the scope. */
export const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "agentfx-sql-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** A SQLite store in a new file, removed with the Layer; with its client, to {@link elapse} its time. */
export const freshSqlite = (options: SqlStore.Options = {}) =>
  Layer.unwrap(Effect.map(tempDir, (dir) => SqlStore.layer(options).pipe(Layer.provideMerge(SqliteStore.layerClient({ filename: join(dir, "store.db") })))))

/** `url` with `search_path` set to `schema` for every connection. */
export const inSchema = (url: string, schema: string) =>
  `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`

/** A new PostgreSQL schema (dropped with the scope): its URL. */
export const freshSchema = Effect.gen(function*() {
  const schema = `agentfx_test_${randomUUID().replaceAll("-", "")}`
  const admin = yield* PgClient.make({ url: Redacted.make(pgUrl) }).pipe(Effect.provide(Reactivity.layer))
  yield* admin.unsafe(`CREATE SCHEMA ${schema}`)
  yield* Effect.addFinalizer(() => Effect.orDie(admin.unsafe(`DROP SCHEMA ${schema} CASCADE`)))
  return inSchema(pgUrl, schema)
}).pipe(Effect.orDie)

/** A PostgreSQL store in a new schema, dropped with the Layer; with its client, to {@link elapse} its time. */
export const freshPg = (options: SqlStore.Options = {}) =>
  Layer.unwrap(Effect.map(freshSchema, (url) => SqlStore.layer(options).pipe(Layer.provideMerge(PgClient.layer({ url: Redacted.make(url) })))))

/** A database of a test: each build of `client` is a new client on it (another process's view). */
export interface Database {
  readonly client: Layer.Layer<SqlClient.SqlClient, unknown>
}

/** The dialects the store tests run on. */
export const dialects: ReadonlyArray<{
  readonly name: string
  readonly database: Effect.Effect<Database, never, Scope.Scope>
}> = [
  {
    name: "SQLite",
    database: Effect.map(tempDir, (dir) => ({ client: SqliteClient.layer({ filename: join(dir, "store.db") }) }))
  },
  {
    name: "PostgreSQL",
    database: Effect.map(freshSchema, (url) => ({ client: PgClient.layer({ url: Redacted.make(url) }) }))
  }
]

/** A store (run store and memory) on a new client of `database`, with that client. */
export const storeOn = (database: Database, options: SqlStore.Options = {}) =>
  Effect.map(
    Layer.build(storeLayerOn(database, options)),
    (context) => ({
      store: Context.get(context, RunStore.RunStore),
      memory: Context.get(context, ChatMemory.ChatMemory),
      sql: Context.get(context, SqlClient.SqlClient)
    })
  )

/**
 * `millis` of the database's time pass, as far as its store can tell: the database's clock
 * cannot be moved, so every time the store wrote (a record's times and its claim's, a lease's
 * expiry) moves that far into the past. The `TestClock` stays where it is: what runs on it (a
 * lease's renewals, how often expired rows are deleted) is the test's to move.
 */
export const elapse = (sql: SqlClient.SqlClient, millis: number) =>
  Effect.orDie(Effect.all([
    sql`UPDATE agentfx_runs SET created_at = created_at - ${millis}, updated_at = updated_at - ${millis}, decided_at = decided_at - ${millis}`,
    sql`UPDATE agentfx_leases SET expires_at = expires_at - ${millis}`
  ], { discard: true }))

/** A store Layer on a new client of `database` that also provides the client (to {@link elapse} its time). */
export const storeLayerOn = (database: Database, options: SqlStore.Options = {}) => SqlStore.layer(options).pipe(Layer.provideMerge(database.client))
