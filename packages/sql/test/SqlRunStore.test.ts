import type { RunStore } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Schedule, Scope } from "effect"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import * as TestClock from "effect/testing/TestClock"
import { record } from "../../core/test/runStoreConformance.js"
import { nowOf } from "../src/internal/clock.js"
import { migrations } from "../src/internal/migrations.js"
import { SqlRunStore, SqlStore } from "../src/index.js"
import { dialects, elapse, storeOn } from "./fixtures.js"

const succeeded = (callId: string) => ({ _tag: "Succeeded" as const, callId, toolName: "t", value: { id: callId } })

for (const dialect of dialects) {
  describe(`SqlRunStore on ${dialect.name}`, () => {
    it.effect("migrations run once: the first migrate runs every migration, the next runs none", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const first = yield* SqlStore.migrate.pipe(Effect.provide(database.client))
        const again = yield* SqlStore.migrate.pipe(Effect.provide(database.client))
        expect([first, again]).toEqual([[[1, "agentfx_store"], [2, "agentfx_decided_at"], [3, "agentfx_call_progress"], [4, "agentfx_take_over"], [5, "agentfx_decision_id"], [6, "agentfx_steering"]], []])
        const { sql } = yield* storeOn(database)
        expect(yield* sql`SELECT migration_id, name FROM agentfx_migrations ORDER BY migration_id`).toEqual([
          { migration_id: 1, name: "agentfx_store" },
          { migration_id: 2, name: "agentfx_decided_at" },
          { migration_id: 3, name: "agentfx_call_progress" },
          { migration_id: 4, name: "agentfx_take_over" },
          { migration_id: 5, name: "agentfx_decision_id" },
          { migration_id: 6, name: "agentfx_steering" }
        ])
      }).pipe(Effect.scoped))

    it.effect("a database made before decidedAt: migrated in place, its runs keep working, the next claim records when", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        // the schema as the first version of the package left it, with a paused run and a finished one
        yield* Migrator.make({})({ loader: Migrator.fromRecord({ "1_agentfx_store": migrations["1_agentfx_store"] }), table: "agentfx_migrations" }).pipe(
          Effect.provide(database.client)
        )
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const now = nowOf(sql)
          yield* sql`INSERT INTO agentfx_runs (run_id, agent, conversation_id, ephemeral, status, version, created_at, updated_at, checkpoint, decided_by)
            VALUES ('old-paused', 'agent', 'c-1', 0, 'paused', 1, ${now}, ${now}, '{"some":"checkpoint"}', NULL),
              ('old-done', 'agent', 'c-2', 0, 'completed', 3, ${now}, ${now}, NULL, 'ada')`
        }).pipe(Effect.provide(database.client))
        const { store } = yield* storeOn(database)
        expect(Option.map(yield* store.get("old-paused"), (r) => [r.status, r.checkpoint, "decidedAt" in r])).toEqual(
          Option.some(["paused", { some: "checkpoint" }, false])
        )
        expect(yield* store.finished("old-done")).toEqual(Option.some({ status: "completed", decidedBy: "ada" }))
        const before = yield* store.now
        const claimed = yield* store.transition("old-paused", { from: { status: "paused", version: 1 }, to: "running", decidedBy: "bob" })
        const after = yield* store.now
        expect(claimed?.decidedBy).toBe("bob")
        expect(claimed!.decidedAt! >= before && claimed!.decidedAt! <= after).toBe(true)
        // what another client (a restarted process) reads back
        const again = yield* storeOn(database)
        expect(Option.map(yield* again.store.get("old-paused"), (r) => [r.decidedBy, r.decidedAt])).toEqual(Option.some(["bob", claimed?.decidedAt]))
      }).pipe(Effect.scoped))

    // live: a migration that lost a race is retried after 100 ms of real time
    it.live("four clients migrating a new database at once: one migrates, the others find it done", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const ran = yield* Effect.all([1, 2, 3, 4].map(() => SqlStore.migrate.pipe(Effect.provide(database.client))), { concurrency: "unbounded" })
        expect(ran.map((migrations) => migrations.length).sort()).toEqual([0, 0, 0, 6])
      }).pipe(Effect.scoped))

    it.effect("two clients on one database (two processes): of 8 claims of one paused record, 4 from each, exactly one wins", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const a = yield* storeOn(database)
        const b = yield* storeOn(database)
        expect(yield* a.store.insert(record("r"))).toBe(true)
        expect(yield* b.store.insert(record("r"))).toBe(false)
        const claims = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).store.transition("r", { from: { status: "paused", version: 1 }, to: "running" })),
          { concurrency: "unbounded" }
        )
        expect(claims.filter((next) => next !== undefined).map((next) => [next!.status, next!.version])).toEqual([["running", 2]])
        expect(Option.map(yield* a.store.get("r"), (r) => [r.status, r.version, r.checkpoint])).toEqual(Option.some(["running", 2, undefined]))
      }).pipe(Effect.scoped))

    it.effect("an outcome recorded by one client is read by the other, and the next transition clears it for both", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const a = yield* storeOn(database)
        const b = yield* storeOn(database)
        yield* a.store.insert(record("o", { status: "running" }))
        expect(yield* a.store.recordOutcome("o", 1, succeeded("c1"))).toBe(true)
        yield* a.store.recordOutcome("o", 1, { _tag: "Cancelled", callId: "c2", toolName: "t" })
        expect(yield* b.store.outcomes("o")).toEqual([succeeded("c1"), { _tag: "Cancelled", callId: "c2", toolName: "t" }])
        const next = yield* b.store.transition("o", { from: { status: "running", version: 1 }, to: "running", checkpoint: { batch: 2 } })
        expect([next?.version, next?.checkpoint]).toEqual([2, { batch: 2 }])
        expect(yield* a.store.outcomes("o")).toEqual([])
      }).pipe(Effect.scoped))

    it.effect("a finished record is kept for the retention (listed, its id refused), then hidden, then deleted", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const { sql, store } = yield* storeOn(database, { retention: "1 hour" })
        expect(store.retentionMillis).toBe(3_600_000)
        yield* store.insert(record("done", { status: "running" }))
        yield* store.insert(record("waiting"))
        yield* elapse(sql, 60_000)
        yield* TestClock.adjust("1 minute")
        const before = yield* store.now
        const finished = yield* store.transition("done", { from: { status: "running", version: 1 }, to: "completed" })
        expect([finished?.status, finished?.checkpoint]).toEqual(["completed", undefined])
        expect(finished!.updatedAt >= before && finished!.updatedAt <= (yield* store.now)).toBe(true)
        // on the database's clock: a second before the retention has passed, then when it has
        yield* elapse(sql, 3_600_000 - 1_000)
        yield* TestClock.adjust("59 minutes")
        expect(Option.map(yield* store.get("done"), (r) => r.status)).toEqual(Option.some("completed"))
        expect((yield* store.list()).map((r) => r.runId)).toEqual(["done", "waiting"])
        expect(yield* store.finished("done")).toEqual(Option.some({ status: "completed" }))
        expect(yield* store.insert(record("done"))).toBe(false)
        yield* elapse(sql, 1_000)
        yield* TestClock.adjust("1 minute")
        expect(yield* store.get("done")).toEqual(Option.none())
        expect(yield* store.finished("done")).toEqual(Option.none())
        expect((yield* store.list()).map((r) => r.runId)).toEqual(["waiting"])
        const rows = sql<{ readonly run_id: string }>`SELECT run_id FROM agentfx_runs ORDER BY run_id`
        expect((yield* rows).map((row) => row.run_id)).toEqual(["done", "waiting"])
        // the next insert deletes what expired; a paused record never expires
        expect(yield* store.insert(record("next"))).toBe(true)
        expect((yield* rows).map((row) => row.run_id)).toEqual(["next", "waiting"])
        expect(yield* store.insert(record("done", { checkpoint: { again: true } }))).toBe(true)
        expect(Option.map(yield* store.get("done"), (r) => r.checkpoint)).toEqual(Option.some({ again: true }))
      }).pipe(Effect.scoped))

    it.effect("an expired finished record not yet deleted gives its id up to a new insert", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const { sql, store } = yield* storeOn(database, { retention: "1 hour" })
        yield* store.insert(record("early"))
        yield* store.insert(record("r", { status: "running" }))
        yield* store.transition("r", { from: { status: "running", version: 1 }, to: "failed" })
        // the insert just before pruned; the next prune is a minute away (on the TestClock): the row is still there
        yield* elapse(sql, 3_600_000)
        expect(yield* store.insert(record("r", { version: 7 }))).toBe(true)
        expect(Option.map(yield* store.get("r"), (r) => [r.status, r.version])).toEqual(Option.some(["paused", 7]))
      }).pipe(Effect.scoped))

    it.effect("the store's failures are StoreErrors with the database's message, never defects", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const { sql, store } = yield* storeOn(database)
        yield* store.insert(record("bad"))
        yield* sql`UPDATE agentfx_runs SET checkpoint = ${"{not json"} WHERE run_id = ${"bad"}`
        const corrupt = yield* Effect.flip(store.get("bad"))
        expect(corrupt._tag).toBe("StoreError")
        expect(corrupt.message).toContain("JSON")
        yield* sql`INSERT INTO agentfx_outcomes (run_id, version, outcome) VALUES (${"bad"}, 1, ${JSON.stringify({ _tag: "Exploded" })})`
        const bad = (yield* Effect.flip(store.outcomes("bad"))).message
        expect([bad.includes(`Expected { readonly "_tag": "Succeeded", ... } |`), bad.includes(`at [0]["outcome"]`)]).toEqual([true, true])
        yield* sql`DROP TABLE agentfx_runs`
        const missing = yield* Effect.flip(store.list())
        expect(missing._tag).toBe("StoreError")
        expect(missing.message).toMatch(dialect.name === "SQLite" ? /no such table: agentfx_runs/ : /relation "agentfx_runs" does not exist/)
      }).pipe(Effect.scoped))
  })
}

describe("SqlRunStore leases (SQLite, on TestClock)", () => {
  const database = dialects[0]!.database

  it.effect("a lease is renewed while its scope is open: after 4 ttls the other client is still refused; closed, it is free", () =>
    Effect.gen(function*() {
      const db = yield* database
      const a = yield* storeOn(db, { leaseTtl: "3 seconds" })
      const b = yield* storeOn(db, { leaseTtl: "3 seconds" })
      const held = yield* Scope.make()
      expect(yield* a.store.lease("conversation:c", { owner: "run-a", wait: false }).pipe(Scope.provide(held))).toBe(true)
      for (let second = 1; second <= 12; second++) {
        // a second of the database's, and of the TestClock that renews the lease
        yield* elapse(b.sql, 1_000)
        yield* TestClock.adjust("1 second")
        expect(yield* b.store.lease("conversation:c", { owner: "run-b", wait: false }).pipe(Effect.scoped)).toBe(false)
      }
      expect(yield* b.store.holder("conversation:c")).toEqual(Option.some("run-a"))
      yield* Scope.close(held, Exit.void)
      expect(yield* b.store.holder("conversation:c")).toEqual(Option.none())
      expect(yield* b.store.lease("conversation:c", { owner: "run-b", wait: false }).pipe(Effect.scoped)).toBe(true)
    }).pipe(Effect.scoped))

  it.effect("a lease whose holder stops renewing (its database connection is gone) expires after the ttl; then another takes it", () =>
    Effect.gen(function*() {
      const db = yield* database
      const b = yield* storeOn(db, { leaseTtl: "3 seconds" })
      const process = yield* Scope.make()
      const a = yield* storeOn(db, { leaseTtl: "3 seconds" }).pipe(Scope.provide(process))
      const held = yield* Scope.make()
      expect(yield* a.store.lease("run:r", { owner: "r", wait: false }).pipe(Scope.provide(held))).toBe(true)
      // renewed at 1 s (every third of the ttl): it expires at 4 s on the database's clock unless renewed again
      yield* elapse(b.sql, 1_000)
      yield* TestClock.adjust("1 second")
      // the "process" dies: its connection closes, its lease is neither renewed nor released
      yield* Scope.close(process, Exit.void)
      yield* elapse(b.sql, 2_000)
      yield* TestClock.adjust("2 seconds")
      expect(yield* b.store.holder("run:r")).toEqual(Option.some("r"))
      expect(yield* b.store.lease("run:r", { owner: "recover:r", wait: false }).pipe(Effect.scoped)).toBe(false)
      yield* elapse(b.sql, 1_000)
      expect(yield* b.store.holder("run:r")).toEqual(Option.none())
      expect(yield* b.store.lease("run:r", { owner: "recover:r", wait: false }).pipe(Effect.scoped)).toBe(true)
      yield* Scope.close(held, Exit.void)
    }).pipe(Effect.scoped))

  it.effect("a waiting lease polls with a backoff up to half a second: it is held at most 600 ms after the holder lets go", () =>
    Effect.gen(function*() {
      const db = yield* database
      const a = yield* storeOn(db)
      const b = yield* storeOn(db)
      const held = yield* Scope.make()
      yield* a.store.lease("conversation:c", { owner: "a", wait: false }).pipe(Scope.provide(held))
      const waiter = yield* Effect.forkChild(Effect.scoped(Effect.andThen(b.store.lease("conversation:c", { owner: "b", wait: true }), Effect.clockWith((c) => c.currentTimeMillis))))
      yield* TestClock.adjust("1 minute")
      yield* Scope.close(held, Exit.void)
      yield* TestClock.adjust("600 millis")
      const at = yield* Fiber.await(waiter)
      expect(Exit.isSuccess(at) && at.value > 60_000 && at.value <= 60_600).toBe(true)
    }).pipe(Effect.scoped))

  it.effect("a waiting lease gives up its wait when interrupted, and takes nothing", () =>
    Effect.gen(function*() {
      const db = yield* database
      const a = yield* storeOn(db)
      const held = yield* Scope.make()
      yield* a.store.lease("conversation:c", { owner: "a", wait: false }).pipe(Scope.provide(held))
      const waiter = yield* Effect.forkChild(Effect.scoped(a.store.lease("conversation:c", { owner: "b", wait: true })))
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.interrupt(waiter)
      yield* Scope.close(held, Exit.void)
      yield* TestClock.adjust("2 seconds")
      expect(yield* a.store.holder("conversation:c")).toEqual(Option.none())
    }).pipe(Effect.scoped))
})

describe("SqlRunStore leases on PostgreSQL", () => {
  it.live("a lease attempt waiting on a database that does not answer can be interrupted: it ends at once and leaves no row", () =>
    Effect.gen(function*() {
      const db = yield* dialects[1]!.database
      const { sql, store } = yield* storeOn(db)
      const unlock = yield* Deferred.make<void>()
      // another session holds the table: the lease's INSERT waits for it
      const locker = yield* Effect.forkChild(sql.withTransaction(Effect.andThen(sql`LOCK TABLE agentfx_leases IN ACCESS EXCLUSIVE MODE`, Deferred.await(unlock))))
      yield* Effect.sleep("200 millis")
      const attempt = yield* Effect.forkChild(Effect.scoped(store.lease("conversation:c", { owner: "interrupted", wait: false })))
      const waiting = sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO agentfx_leases%'`
      yield* Effect.repeat(waiting, { until: (rows) => rows[0]!.n === 1, schedule: Schedule.spaced("20 millis") })
      // the table is still locked: the interruption does not wait for it
      yield* Effect.forkChild(Fiber.interrupt(attempt))
      const ended = yield* Fiber.await(attempt).pipe(Effect.timeout("5 seconds"))
      expect(Exit.isFailure(ended) && Cause.hasInterruptsOnly(ended.cause)).toBe(true)
      yield* Deferred.succeed(unlock, undefined)
      yield* Fiber.join(locker)
      expect(yield* sql`SELECT owner FROM agentfx_leases`).toEqual([])
      expect(yield* store.holder("conversation:c")).toEqual(Option.none())
    }).pipe(Effect.scoped), 30_000)
})

describe("SqlRunStore options", () => {
  it.effect("a lease ttl or a retention that is not a positive, finite duration is refused with a StoreError naming it", () =>
    Effect.gen(function*() {
      const db = yield* dialects[0]!.database
      const refusal = (options: SqlRunStore.Options) =>
        SqlRunStore.layer(options).pipe(Layer.provide(db.client), Layer.build, Effect.flip, Effect.map((e) => (e as RunStore.StoreError).message))
      expect(yield* refusal({ leaseTtl: "0 millis" })).toBe("Invalid SqlRunStore option: leaseTtl must be a positive, finite duration (got 0)")
      expect(yield* refusal({ retention: Duration.infinity })).toBe("Invalid SqlRunStore option: retention must be a positive, finite duration (got Infinity)")
      expect(yield* refusal({ retention: "a while" as never })).toBe(`Invalid SqlRunStore option: retention "a while" is not a duration`)
    }).pipe(Effect.scoped))

  it.effect("defaults: a retention of 24 hours and a lease ttl of 30 seconds", () =>
    Effect.gen(function*() {
      const db = yield* dialects[0]!.database
      const b = yield* storeOn(db)
      expect(b.store.retentionMillis).toBe(86_400_000)
      const process = yield* Scope.make()
      const a = yield* storeOn(db).pipe(Scope.provide(process))
      yield* a.store.lease("k", { owner: "a", wait: false }).pipe(Scope.provide(yield* Scope.make()))
      // renewed every 10 s while held (at 10, 20, 30 and 40 s) ...
      for (let renewal = 1; renewal <= 4; renewal++) {
        yield* elapse(b.sql, 10_000)
        yield* TestClock.adjust("10 seconds")
      }
      expect(yield* b.store.holder("k")).toEqual(Option.some("a"))
      // ... and lost 30 s after the last renewal once its holder is gone (on the database's clock)
      yield* Scope.close(process, Exit.void)
      yield* elapse(b.sql, 29_000)
      expect(yield* b.store.holder("k")).toEqual(Option.some("a"))
      yield* elapse(b.sql, 1_000)
      expect(yield* b.store.holder("k")).toEqual(Option.none())
    }).pipe(Effect.scoped))
})
