/**
 * Cluster runners and clients as real processes on PostgreSQL, in real time (failover is the
 * point): a runner SIGKILLed mid-tool, a runner SIGKILLed while its run is paused, one decision
 * sent at once from two processes, and 1,000 runs on two runners, one killed at a random moment.
 * Every tool execution is counted in a side table (agents.ts); no test calls `Agent.recover`.
 *
 * Runners use the documented fast settings (lock expiration 6 s, refresh 2 s): failover is
 * asserted within a generous 20 s (the contract is 10 s; the figure measured is printed).
 */
import { type Child, freePort, spawn } from "@agentfx/testing/Process"
import { postgresUrl } from "@agentfx/testing/PostgresUrl"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Redacted, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { fileURLToPath } from "node:url"
import { countsByCall, createExecutions, type Execution, executions } from "./agents.js"

const node = fileURLToPath(new URL("./node.ts", import.meta.url))
const cwd = fileURLToPath(new URL("../..", import.meta.url))

/**
 * A new database of its own (dropped with the scope): the engine's shard locks are PostgreSQL
 * advisory locks, which are per database, so runners of other tests never contend with these.
 */
const freshDatabase = Effect.gen(function*() {
  const name = `agentfx_cluster_${randomUUID().replaceAll("-", "")}`
  const server = postgresUrl()
  const admin = yield* PgClient.make({ url: Redacted.make(server) }).pipe(Effect.provide(Reactivity.layer))
  yield* admin.unsafe(`CREATE DATABASE ${name}`)
  yield* Effect.addFinalizer(() => Effect.orDie(admin.unsafe(`DROP DATABASE ${name} WITH (FORCE)`)))
  const url = new URL(server)
  url.pathname = `/${name}`
  const db = PgClient.layer({ url: Redacted.make(url.toString()) })
  yield* Effect.provide(createExecutions, db)
  return { url: url.toString(), db }
}).pipe(Effect.orDie)

const readyOf = (message: unknown) => (message as { ready?: number }).ready

/** A runner process on `url`, once its Layer is built. */
const runner = (url: string) =>
  Effect.gen(function*() {
    const child = yield* spawn(node, ["runner", url, String(yield* Effect.promise(freePort))], { cwd })
    yield* child.waitFor("ready", readyOf, 180_000)
    return child
  })

/** A client-only process on `url`, once its Layer is built. */
const client = (url: string) =>
  Effect.gen(function*() {
    const child = yield* spawn(node, ["client", url], { cwd })
    yield* child.waitFor("ready", readyOf, 180_000)
    return child
  })

interface Reply {
  readonly id: string
  readonly ok?: any
  readonly error?: string
  readonly message?: string
}

/** Sends `command` to a client process; its reply (within `timeout` ms). */
const ask = (child: Child, command: Record<string, unknown>, timeout = 60_000) =>
  Effect.gen(function*() {
    const id = randomUUID()
    yield* child.send(JSON.stringify({ ...command, id }))
    return yield* child.waitFor(`the reply to ${JSON.stringify(command)}`, (m) => (m as Reply).id === id ? m as Reply : undefined, timeout)
  })

/** Polls `check` every 100 ms until it returns a value (dies after `seconds`). */
const until = <A, E, R>(what: string, check: Effect.Effect<A | undefined, E, R>, seconds = 60) =>
  check.pipe(
    Effect.flatMap((found) => found === undefined ? Effect.fail("not yet" as const) : Effect.succeed(found)),
    Effect.retry({ while: (e) => e === "not yet", schedule: Schedule.spaced("100 millis"), times: seconds * 10 }),
    Effect.catchIf((e) => e === "not yet", () => Effect.die(new Error(`timed out waiting for ${what}`)))
  )

/** Two runners (both holding shards) and a client on a fresh database. */
const cluster = Effect.gen(function*() {
  const { db, url } = yield* freshDatabase
  const [first, second, starter] = yield* Effect.all([runner(url), runner(url), client(url)], { concurrency: "unbounded" })
  yield* until("both runners holding shards", Effect.provide(shardHolders, db).pipe(Effect.map((n) => n === 2 ? n : undefined)))
  const inDb = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provide(effect, db)
  const other = (pid: number) => pid === first.pid ? second : first
  const holding = (pid: number) => pid === first.pid ? first : second
  return { url, inDb, runners: [first, second] as const, starter, other, holding }
})

/** How many runners hold shards now: their lock connections hold the shards' advisory locks. */
const shardHolders = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ readonly n: number }>`SELECT count(DISTINCT pid)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).pipe(
    Effect.map(([row]) => row!.n),
    Effect.catch(() => Effect.succeed(0))
  )

const statuses = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ readonly status: string; readonly n: number }>`SELECT status, count(*)::int AS n FROM agentfx_runs GROUP BY status`).pipe(
    Effect.map((rows) => Object.fromEntries(rows.map((row) => [row.status, Number(row.n)])))
  )

const byCall = (rows: ReadonlyArray<Execution>, callId: string) => rows.filter((row) => row.callId === callId)

const report = (line: string) => Effect.sync(() => process.stderr.write(`[cluster processes] ${line}\n`))

describe("cluster runners as processes on PostgreSQL", () => {
  it.live("SIGKILL a runner mid-tool: the other finishes the run by itself; the idempotent call re-runs once, the other is reported cancelled", () =>
    Effect.gen(function*() {
      const { holding, inDb, other, starter } = yield* cluster
      const reply = yield* Effect.forkChild(ask(starter, { op: "run", input: "crash" }, 90_000))
      const pid = yield* until("both calls started", inDb(executions).pipe(Effect.map((rows) => {
        const counts = countsByCall(rows)
        return counts.call_charge === 1 && counts.call_fetch === 1 ? rows[0]!.pid : undefined
      })))
      const survivor = other(pid)
      const killedAt = Date.now()
      yield* holding(pid).kill()
      const outcome = (yield* Fiber.join(reply)).ok
      const rows = yield* inDb(executions)
      expect(countsByCall(rows)).toEqual({ call_charge: 1, call_fetch: 2 })
      expect(byCall(rows, "call_fetch").map((row) => row.pid)).toEqual([pid, survivor.pid])
      expect(outcome._tag).toBe("Completed")
      expect(outcome.text).toBe(`charge: "cancelled: the call was interrupted before it returned a result"; fetch: "fetch ran in ${survivor.pid}"`)
      expect(yield* inDb(statuses)).toEqual({ completed: 1 })
      const failover = byCall(rows, "call_fetch")[1]!.at - killedAt
      yield* report(`SIGKILL mid-tool → the idempotent call re-ran on the survivor after ${failover.toFixed(0)} ms; reply after ${Date.now() - killedAt} ms`)
      expect(failover).toBeGreaterThan(0)
      expect(failover).toBeLessThan(20_000)
    }).pipe(Effect.scoped), 180_000)

  it.live("SIGKILL the runner holding a paused run: a decision from a third, client-only process completes it on the survivor", () =>
    Effect.gen(function*() {
      const { holding, inDb, other, starter, url } = yield* cluster
      const paused = (yield* ask(starter, { op: "run", input: "pay 1" })).ok
      expect(paused._tag).toBe("Paused")
      const [lookup] = yield* inDb(executions)
      const survivor = other(lookup!.pid)
      const decider = yield* client(url)
      const killedAt = Date.now()
      yield* holding(lookup!.pid).kill()
      const decided = yield* ask(decider, { op: "decide", runId: paused.runId, decidedBy: "ada" }, 90_000)
      const repliedAt = Date.now()
      expect(decided.ok?._tag).toBe("Completed")
      const rows = yield* inDb(executions)
      expect(rows.map((row) => [row.callId, row.pid])).toEqual([["lookup-1", lookup!.pid], ["transfer-1", survivor.pid]])
      expect(yield* inDb(statuses)).toEqual({ completed: 1 })
      yield* report(`SIGKILL while paused, decision sent at once from a new client: the tool ran after ${(rows[1]!.at - killedAt).toFixed(0)} ms, reply after ${repliedAt - killedAt} ms`)
      expect(repliedAt - killedAt).toBeLessThan(20_000)
    }).pipe(Effect.scoped), 180_000)

  it.live("one decision sent at once from two client processes: one execution; the other gets the typed refusal naming who decided", () =>
    Effect.gen(function*() {
      const { inDb, starter, url } = yield* cluster
      const paused = (yield* ask(starter, { op: "run", input: "pay 2" })).ok
      expect(paused._tag).toBe("Paused")
      const [alice, bob] = yield* Effect.all([client(url), client(url)], { concurrency: "unbounded" })
      const replies = yield* Effect.all([
        ask(alice!, { op: "decide", runId: paused.runId, decidedBy: "alice" }),
        ask(bob!, { op: "decide", runId: paused.runId, decidedBy: "bob" })
      ], { concurrency: "unbounded" })
      const won = replies.filter((reply) => reply.ok?._tag === "Completed")
      const refused = replies.filter((reply) => reply.error === "RunAlreadyResumed")
      expect([won.length, refused.length]).toEqual([1, 1])
      const winner = replies[0] === won[0] ? "alice" : "bob"
      expect(refused[0]!.message).toContain(winner)
      const rows = yield* inDb(executions)
      expect(countsByCall(rows)).toEqual({ "lookup-2": 1, "transfer-2": 1 })
    }).pipe(Effect.scoped), 180_000)

  it.live("1,000 runs on 2 runners, one SIGKILLed at a random moment: every run ends Completed, Paused or a typed failure; no call ran twice", () =>
    Effect.gen(function*() {
      const { inDb, runners, starter } = yield* cluster
      const count = 1_000
      const reply = yield* Effect.forkChild(ask(starter, { op: "runMany", count }, 600_000))
      const at = 50 * (1 + Math.floor(Math.random() * 10))
      yield* starter.waitFor(`${at} runs done`, (m) => ((m as { progress?: number }).progress ?? 0) >= at ? true : undefined, 300_000)
      const victim = runners[Math.floor(Math.random() * 2)]!
      yield* victim.kill()
      const killedAt = Date.now()
      const tags = (yield* Fiber.join(reply)).ok as Record<string, number>
      yield* report(`1,000 runs, runner ${victim.pid} killed after ${at} runs: outcomes ${JSON.stringify(tags)}, ${Date.now() - killedAt} ms after the kill`)
      const total = Object.values(tags).reduce((a, b) => a + b, 0)
      expect(total).toBe(count)
      // Ended: the Start was delivered again after its run had ended (the runner died between the
      // end and the stored reply); the record says how it ended, checked below with every other
      expect(Object.keys(tags).filter((tag) => !["Completed", "Paused", "Failed", "Ended"].includes(tag) && !tag.startsWith("error:"))).toEqual([])
      const final = yield* inDb(statuses)
      expect(final.running ?? 0).toBe(0)
      expect((final.completed ?? 0) + (final.paused ?? 0) + (final.failed ?? 0)).toBe(count)
      const twice = Object.entries(countsByCall(yield* inDb(executions))).filter(([, n]) => n > 1)
      expect(twice).toEqual([])
    }).pipe(Effect.scoped), 600_000)
})

