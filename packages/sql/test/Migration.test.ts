/**
 * A run paused by the previous version of agentfx (checkpoint format 2), resumed by this one
 * from a SQL store's record: the SQLite database that version wrote, and its rows copied as
 * they are into PostgreSQL (fixtures/README.md).
 */
import { Agent, ChatMemory, Decision, RunStore, ScriptedChatModel } from "@agentfx/core"
import * as SqlClient from "effect/sql/SqlClient"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { copyFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { mailer } from "../../core/test/fixtures/mailer.js"
import * as SqliteStore from "../src/SqliteStore.js"
import { freshPg, tempDir } from "./fixtures.js"

const written = fileURLToPath(new URL("./fixtures/paused-v2.db", import.meta.url))

const fixture = mailer()
const { sent } = fixture

/** Resumes the fixture's run by its id, in the store in context: what came of it. */
const resumed = Effect.gen(function*() {
  sent.length = 0
  const exit = yield* Agent.resume(fixture.agent, "run-v2-sqlite", Decision.approveAll())
  assert(exit._tag === "Completed")
  expect(exit.text).toBe("Mailed Ada.")
  expect(exit.state).toEqual({ sent: 2 })
  expect(sent).toEqual([{ to: "ada@example.com", body: "Sunny in Oslo" }])
  const memory = yield* ChatMemory.ChatMemory
  expect((yield* memory.get("conversation-v2")).map((m) => m._tag)).toEqual(["User", "Assistant", "ToolResult", "Assistant", "ToolResult", "Assistant"])
  const { requests } = yield* ScriptedChatModel.ScriptedChatModel
  expect(requests.map((r) => r.settings)).toEqual([{ temperature: 0.2 }])
  const store = yield* RunStore.RunStore
  expect(Option.map(yield* store.get("run-v2-sqlite"), (record) => record.status)).toEqual(Option.some("completed"))
})

/** A copy of the fixture (opening it, even read-only, writes beside it). */
const copied = Effect.map(tempDir, (dir) => {
  const filename = join(dir, "store.db")
  copyFileSync(written, filename)
  return filename
})

const model = ScriptedChatModel.layer([ScriptedChatModel.text("Mailed Ada.")])

describe("a store written by the previous version (checkpoint format 2)", () => {
  it.effect("SQLite: the run it paused resumes by its id; its conversation goes on", () =>
    Effect.gen(function*() {
      const filename = yield* copied
      yield* resumed.pipe(Effect.provide(Layer.merge(model, SqliteStore.layer({ filename }))))
    }).pipe(Effect.scoped))

  it.effect("PostgreSQL: the same record and conversation rows, copied as written, resume", () =>
    Effect.gen(function*() {
      const rows = yield* Effect.gen(function*() {
        const sqlite = yield* SqlClient.SqlClient
        return {
          runs: yield* sqlite`SELECT run_id, agent, conversation_id, ephemeral, status, version, created_at, updated_at, checkpoint, decided_by FROM agentfx_runs`,
          messages: yield* sqlite`SELECT conversation_id, message FROM agentfx_messages ORDER BY seq`
        }
      }).pipe(Effect.provide(SqliteClient.layer({ filename: yield* copied })))
      expect(rows.runs.map((row) => JSON.parse(String(row.checkpoint)).version)).toEqual([2])
      const store = freshPg()
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO agentfx_runs ${sql.insert(rows.runs as never)}`
        yield* sql`INSERT INTO agentfx_messages ${sql.insert(rows.messages as never)}`
        yield* resumed
      }).pipe(Effect.provide(Layer.merge(model, store)))
    }).pipe(Effect.scoped))
})

