/**
 * Real processes on one database, in real time (it is the point): a child SIGKILLed mid-batch
 * and recovered by another; concurrent resumes of one paused run from two processes; a lease
 * that outlives its killed holder by at most its ttl.
 */
import { Agent, RunStore } from "@agentfx/core"
import * as SqlClient from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import type { Scope } from "effect"
import { Clock, Context, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { SqlStore } from "../src/index.js"
import { freshSchema, tempDir } from "./fixtures.js"
import { transferAgent, transferModel } from "./processes/agents.js"

const childScript = fileURLToPath(new URL("./processes/child.ts", import.meta.url))

interface Child {
  readonly process: ChildProcess
  /** The next line the child prints, parsed as JSON (fails after `timeout` ms, or when it exits first). */
  readonly next: (timeout?: number) => Effect.Effect<unknown, Error>
  /** Its exit code, once it exited. */
  readonly exited: Effect.Effect<number | null>
  readonly stderr: () => string
}

/** Starts `child.ts` with `args`; killed with the scope if still running. */
const start = (...args: ReadonlyArray<string>): Effect.Effect<Child, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, ["--conditions=@agentfx/source", "--import", "tsx", childScript, ...args], {
        cwd: fileURLToPath(new URL("..", import.meta.url)),
        stdio: ["pipe", "pipe", "pipe"]
      })
      const lines: Array<string> = []
      const waiting: Array<() => void> = []
      let buffered = ""
      let stderr = ""
      let exitCode: number | null | undefined
      const wake = () => waiting.splice(0).forEach((f) => f())
      child.stdout.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8")
        const parts = buffered.split("\n")
        buffered = parts.pop()!
        lines.push(...parts.filter((line) => line.trim() !== ""))
        wake()
      })
      child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString("utf8")))
      const exit = new Promise<number | null>((resolve) =>
        child.on("exit", (code) => {
          exitCode = code
          wake()
          resolve(code)
        })
      )
      const next = (timeout = 30_000) =>
        Effect.callback<unknown, Error>((resume) => {
          const timer = setTimeout(() => resume(Effect.fail(new Error(`no line from the child in ${timeout} ms; stderr: ${stderr}`))), timeout)
          const check = () => {
            const line = lines.shift()
            if (line !== undefined) {
              clearTimeout(timer)
              return resume(Effect.try({ try: () => JSON.parse(line), catch: () => new Error(`not JSON: ${line}`) }))
            }
            if (exitCode !== undefined) {
              clearTimeout(timer)
              return resume(Effect.fail(new Error(`the child exited (${exitCode}) without a line; stderr: ${stderr}`)))
            }
            waiting.push(check)
          }
          check()
          return Effect.sync(() => clearTimeout(timer))
        })
      return { process: child, next, exited: Effect.promise(() => exit), stderr: () => stderr }
    }),
    (child) => Effect.sync(() => child.process.exitCode === null && child.process.kill("SIGKILL"))
  )

const kill = (child: Child) => Effect.andThen(Effect.sync(() => child.process.kill("SIGKILL")), child.exited)

/** Polls `check` every 50 ms until it holds (fails after 30 s). */
const until = <E, R>(what: string, check: Effect.Effect<boolean, E, R>) =>
  check.pipe(
    Effect.flatMap((ok) => ok ? Effect.void : Effect.fail("not yet" as const)),
    Effect.retry({ while: (e) => e === "not yet", schedule: Schedule.spaced("50 millis"), times: 600 }),
    Effect.catchIf((e) => e === "not yet", () => Effect.die(new Error(`timed out waiting for ${what}`)))
  )

/** Executions per tool, from the side table. */
const executions = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly tool: string; readonly pid: number }>`SELECT tool, pid FROM executions ORDER BY id`).pipe(
  Effect.map((rows) => rows.map((row) => ({ tool: row.tool, pid: Number(row.pid) })))
)

const countsOf = (rows: ReadonlyArray<{ readonly tool: string }>) =>
  rows.reduce<Record<string, number>>((counts, row) => ({ ...counts, [row.tool]: (counts[row.tool] ?? 0) + 1 }), {})

const crashTest = (manager: "unbounded" | "sequential", c: "idempotent" | "not-idempotent" = "idempotent") =>
  Effect.gen(function*() {
    const db = join(yield* tempDir, "crash.db")
    const client = SqliteClient.layer({ filename: db })
    const inParent = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provide(effect, client)
    yield* inParent(Effect.andThen(
      SqlStore.migrate,
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE executions (id INTEGER PRIMARY KEY, tool TEXT NOT NULL, pid INTEGER NOT NULL)`)
    ))
    const crashing = yield* start("crash", db, manager, c)
    // killed mid-batch: `a` ended (its result recorded), `b` is running (and `c` too when unbounded)
    const inFlight = manager === "unbounded" ? ["a", "b", "c"] : ["a", "b"]
    yield* until(`${inFlight.join(", ")} started and a's result recorded`, inParent(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outcomes = yield* sql`SELECT outcome FROM agentfx_outcomes`
      return outcomes.length === 1 && Object.keys(countsOf(yield* executions)).sort().join() === inFlight.join()
    })))
    yield* kill(crashing)
    const left = yield* inParent(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly status: string }>`SELECT status FROM agentfx_runs`))
    expect(left).toEqual([{ status: "running" }])

    const recovering = yield* start("recover", db, manager, c)
    const result = (yield* recovering.next()) as { exit: string; text: string }
    expect(yield* recovering.exited).toBe(0)
    const crashPid = crashing.process.pid!
    const recoverPid = recovering.process.pid!
    const rows = yield* inParent(executions)
    return { result, rows, crashPid, recoverPid, db: inParent }
  })

describe("processes on SQLite", () => {
  it.live("SIGKILL mid-batch (3 calls at once): Agent.recover in a new process never re-runs the ended call, re-runs the idempotent one, cancels the other", () =>
    Effect.gen(function*() {
      const { crashPid, recoverPid, result, rows } = yield* crashTest("unbounded")
      expect(countsOf(rows)).toEqual({ a: 1, b: 1, c: 2 })
      expect(rows.filter((row) => row.tool === "c").map((row) => row.pid)).toEqual([crashPid, recoverPid])
      expect(result.exit).toBe("Completed")
      expect(result.text).toBe(
        `a: "a ran in ${crashPid}"; b: "cancelled: the call was interrupted before it returned a result"; c: "c ran in ${recoverPid}"`
      )
    }).pipe(Effect.scoped), 60_000)

  it.live("SIGKILL mid-batch (calls in turn): the ended call is kept, the cut-off one cancelled, the one not started runs in the new process", () =>
    Effect.gen(function*() {
      const { crashPid, db, recoverPid, result, rows } = yield* crashTest("sequential")
      expect(countsOf(rows)).toEqual({ a: 1, b: 1, c: 1 })
      expect(rows.map((row) => [row.tool, row.pid])).toEqual([["a", crashPid], ["b", crashPid], ["c", recoverPid]])
      expect(result.text).toBe(
        `a: "a ran in ${crashPid}"; b: "cancelled: the call was interrupted before it returned a result"; c: "c ran in ${recoverPid}"`
      )
      const status = yield* db(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly status: string }>`SELECT status FROM agentfx_runs`))
      expect(status).toEqual([{ status: "completed" }])
    }).pipe(Effect.scoped), 60_000)

  it.live("SIGKILL mid-batch (calls in turn), the call not started NOT idempotent: it was recorded as never started, so it runs in the new process, once", () =>
    Effect.gen(function*() {
      const { crashPid, recoverPid, result, rows } = yield* crashTest("sequential", "not-idempotent")
      expect(rows.map((row) => [row.tool, row.pid])).toEqual([["a", crashPid], ["b", crashPid], ["c", recoverPid]])
      expect(result.text).toBe(
        `a: "a ran in ${crashPid}"; b: "cancelled: the call was interrupted before it returned a result"; c: "c ran in ${recoverPid}"`
      )
    }).pipe(Effect.scoped), 60_000)
})

describe("processes on PostgreSQL", () => {
  it.live("8 concurrent resumes of one paused run from 2 processes: one completes, 7 are refused, the tool runs once", () =>
    Effect.gen(function*() {
      const url = yield* freshSchema
      const client = PgClient.layer({ url: Redacted.make(url) })
      const store = SqlStore.layer().pipe(Layer.provideMerge(client))
      const paused = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE executions (id BIGSERIAL PRIMARY KEY, tool TEXT NOT NULL, pid INTEGER NOT NULL)`
        return yield* Agent.run(transferAgent, { input: "pay", conversationId: "pay-1" })
      }).pipe(Effect.provide(store), Effect.provide(transferModel))
      if (paused._tag !== "Paused") throw new Error("expected a pause")
      const children = yield* Effect.all([start("resume", url, paused.runId, "4"), start("resume", url, paused.runId, "4")])
      for (const child of children) expect(yield* child.next()).toBe("ready")
      for (const child of children) child.process.stdin!.write("go\n")
      const results = (yield* Effect.all(children.map((child) => child.next()))).flat() as Array<string>
      expect(results.sort()).toEqual(["Completed", ...Array(7).fill("RunAlreadyResumed")])
      const rows = yield* Effect.provide(executions, client)
      expect(rows.length).toBe(1)
      expect(children.map((child) => child.process.pid)).toContain(rows[0]!.pid)
      const record = yield* Effect.flatMap(RunStore.RunStore, (s) => s.get(paused.runId)).pipe(Effect.provide(store))
      expect(Option.map(record, (r) => r.status)).toEqual(Option.some("completed"))
    }).pipe(Effect.scoped), 60_000)
})

const leaseTest = (dialect: "sqlite" | "pg") =>
  Effect.gen(function*() {
    const where = dialect === "sqlite" ? join(yield* tempDir, "lease.db") : yield* freshSchema
    const client: Layer.Layer<SqlClient.SqlClient, unknown> = dialect === "sqlite" ? SqliteClient.layer({ filename: where }) : PgClient.layer({ url: Redacted.make(where) })
    const ttl = 600
    const { store } = yield* Effect.map(
      Layer.build(SqlStore.layer({ leaseTtl: ttl }).pipe(Layer.provide(client))),
      (context) => ({ store: Context.get(context, RunStore.RunStore) })
    )
    const holder = yield* start("lease", dialect, where, String(ttl))
    expect(yield* holder.next()).toEqual({ held: true })
    // renewed while its holder lives: refused for 3 ttls
    const owner = `process-${holder.process.pid}`
    for (let i = 0; i < 9; i++) {
      expect(yield* Effect.scoped(store.lease("conversation:c", { owner: "parent", wait: false }))).toBe(false)
      yield* Effect.sleep(200)
    }
    expect(yield* store.holder("conversation:c")).toEqual(Option.some(owner))
    yield* kill(holder)
    const killedAt = yield* Clock.currentTimeMillis
    // it outlives its holder until it expires (at least 2/3 of the ttl after the last renewal) ...
    expect(yield* Effect.scoped(store.lease("conversation:c", { owner: "parent", wait: false }))).toBe(false)
    // ... and then a waiting owner takes it
    const heldAt = yield* Effect.scoped(Effect.andThen(store.lease("conversation:c", { owner: "parent", wait: true }), Clock.currentTimeMillis))
    const after = heldAt - killedAt
    expect(after).toBeGreaterThan(0)
    expect(after).toBeLessThan(ttl + 600 + 1_000)
  }).pipe(Effect.scoped)

describe("leases across processes", () => {
  it.live("SQLite: a killed holder's lease is refused to others until it expires, then taken", () => leaseTest("sqlite"), 60_000)
  it.live(`PostgreSQL: a killed holder's lease is refused to others until it expires, then taken`, () => leaseTest("pg"), 60_000)
})
