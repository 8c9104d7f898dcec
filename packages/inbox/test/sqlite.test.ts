/**
 * The inbox over the SQLite store of @agentfx/sql (a file): runs another process paused are
 * listed; eight people deciding one run at once — one resume, seven told who decided.
 */
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { bank, decide, events, request, serve } from "./fixtures.js"

describe("the inbox on SQLite", () => {
  it.scopedLive("eight decisions at once: one 202, seven 409 naming the winner; the transfer runs once", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "agentfx-inbox-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const { agent, executed } = bank()
      const inbox = yield* serve([agent], { stores: SqliteStore.layer({ filename: join(dir, "inbox.db") }) })
      const runId = yield* inbox.pause(agent, "pay Ada 250", "c-sql")
      const listed = yield* request(`${inbox.origin}/inbox/api/runs`)
      expect(listed.body.map((r: any) => [r.runId, r.conversationId])).toEqual([[runId, "c-sql"]])
      const replies = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) => decide(inbox.origin, runId, { _tag: "ApproveAll" }, `reviewer-${i}`)),
        { concurrency: "unbounded" }
      )
      const won = replies.filter((r) => r.status === 202)
      expect(won).toHaveLength(1)
      const winner = won[0]!.body.decidedBy
      expect(replies.filter((r) => r.status !== 202).map((r) => [r.status, r.body._tag, r.body.decidedBy])).toEqual(
        Array.from({ length: 7 }, () => [409, "AlreadyDecided", winner])
      )
      const stream = yield* events(`${inbox.origin}${won[0]!.body.events}`)
      expect(stream.events.at(-1)!.data._tag).toBe("RunCompleted")
      expect(executed).toEqual(["t1 Ada 250"])
      const record = yield* inbox.store.get(runId)
      expect(record._tag === "Some" && [record.value.status, record.value.decidedBy]).toEqual(["completed", winner])
    }), { timeout: 30_000 })
})
