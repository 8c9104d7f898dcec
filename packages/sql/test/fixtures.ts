/**
 * Fresh stores for tests: a SQLite file in a temp directory, or a PostgreSQL schema of its
 * own (on the server `AGENTFX_PG_URL` names; without it the PostgreSQL tests are skipped).
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlStore } from "../src/index.js"

/** The PostgreSQL server of the tests, if any. */
export const pgUrl: string | undefined = process.env.AGENTFX_PG_URL || undefined

/** Why the PostgreSQL tests did not run, in their names. */
export const pgSkipped = "skipped: AGENTFX_PG_URL is not set"

/** A temp directory, removed with the scope. */
export const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "agentfx-sql-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** A SQLite store in a new file, removed with the Layer. */
export const freshSqlite = (options: SqlStore.Options = {}) =>
  Layer.unwrapScoped(Effect.map(tempDir, (dir) => SqlStore.layerSqlite({ filename: join(dir, "store.db"), ...options })))

/** `url` with `search_path` set to `schema` for every connection. */
export const inSchema = (url: string, schema: string) =>
  `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`

/** A new PostgreSQL schema (dropped with the scope): its URL. */
export const freshSchema = Effect.gen(function*() {
  const schema = `agentfx_test_${randomUUID().replaceAll("-", "")}`
  const admin = yield* PgClient.make({ url: Redacted.make(pgUrl!) }).pipe(Effect.provide(Reactivity.layer))
  yield* admin.unsafe(`CREATE SCHEMA ${schema}`)
  yield* Effect.addFinalizer(() => Effect.orDie(admin.unsafe(`DROP SCHEMA ${schema} CASCADE`)))
  return inSchema(pgUrl!, schema)
}).pipe(Effect.orDie)

/** A PostgreSQL store in a new schema, dropped with the Layer. */
export const freshPg = (options: SqlStore.Options = {}) =>
  Layer.unwrapScoped(Effect.map(freshSchema, (url) => SqlStore.layerPg({ url: Redacted.make(url), ...options })))
