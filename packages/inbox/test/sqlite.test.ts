/**
 * The inbox over the SQLite store of @agentfx/sql (a file): runs another process paused are
 * listed; eight people deciding one run at once — one resume, seven told who decided.
 */
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DecisionLog } from "../src/index.js"
import { bank, decide, events, request, serve } from "./fixtures.js"

describe("the inbox on SQLite", () => {
  it.live("eight decisions at once: one 202, seven 409 naming the winner; the transfer runs once", () =>
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

  it.live("who decided and when outlive a restart of the inbox: the store keeps both, and a late decision is told them", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "agentfx-inbox-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const filename = join(dir, "inbox.db")
      const { agent, executed } = bank()
      const first = yield* Scope.make()
      const before = yield* Scope.provide(serve([agent], { stores: SqliteStore.layer({ filename }), decisionLog: DecisionLog.makeMemory() }), first)
      const runId = yield* before.pause(agent, "pay Ada 250", "c-restart")
      const accepted = yield* decide(before.origin, runId, { _tag: "ApproveAll" }, "Ada")
      expect(accepted.status).toBe(202)
      yield* events(`${before.origin}${accepted.body.events}`)
      expect(Option.map(yield* before.store.get(runId), (r) => [r.status, r.decidedBy, r.decidedAt])).toEqual(
        Option.some(["completed", "Ada", accepted.body.decidedAt])
      )
      yield* Scope.close(first, Exit.void)
      // a new process: the same file, an empty decision log
      const after = yield* serve([agent], { stores: SqliteStore.layer({ filename }), decisionLog: DecisionLog.makeMemory() })
      const late = yield* decide(after.origin, runId, { _tag: "RejectAll" }, "Bob")
      expect([late.status, late.body]).toEqual([409, {
        _tag: "AlreadyDecided",
        runId,
        status: "completed",
        decidedBy: "Ada",
        decidedAt: accepted.body.decidedAt,
        message: `Run ${runId} was already decided by Ada: it is completed now`
      }])
      expect(executed).toEqual(["t1 Ada 250"])
    }), { timeout: 30_000 })
})
