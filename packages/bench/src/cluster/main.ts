/**
 * `pnpm bench:cluster [--quick]`: agentfx runs on @effect/cluster runner processes on PostgreSQL
 * (the server `AGENTFX_PG_URL` names, else an embedded one started for the bench), with 1, 2 and
 * 4 runners, each on a database of its own. The run: `lookup`, `transfer` (needs approval),
 * the answer — 3 model calls, one pause. This process is a client-only member.
 *
 * - throughput: `runs` runs, 64 at a time, each started, paused, decided and completed:
 *   completed runs per second;
 * - latency: decide → the reply of the resumed, completed run, one decision at a time (idle: on
 *   runs just paused, their entities live, and on runs whose entities were passivated) and 64
 *   at once (loaded): p50 / p99;
 * - memory: heap after a full GC in every runner, before and with `suspended` paused runs,
 *   once their entities are passivated and while they were live: bytes per suspended run
 *   (memory.ts);
 * - where the time goes, apart from the machine's load: the runners' CPU time and the
 *   database's committed transactions (`pg_stat_database`, read once PostgreSQL has reported
 *   them: processes.ts, `cost`), per run.
 *
 * The floor, on the same runners, measured the same way: an entity whose `Start` and `Decide`
 * (persisted, as agentfx's are) do nothing (floor.ts) — what the engine alone costs.
 *
 * Checks (exact, never a time): every run paused then completed, every call ran exactly once,
 * no entity left live in the runners after the passivation wait.
 *
 * `--failover`: the failure scenarios instead (failover.ts). `--write`: the figures go to
 * RESULTS.md's cluster section too (results.ts). `--cpu-prof=<dir>`: each runner's CPU profile of
 * the throughput runs, agentfx's and the floor's, goes to `<dir>` (`agentfx-<runners>-<runner>` and
 * `floor-<runners>-<runner>.cpuprofile`).
 */
import { AgentCluster } from "@agentfx/cluster"
import { Decision } from "@agentfx/core"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import { loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import * as Tally from "../tally.js"
import { benchAgent } from "./agent.js"
import { failover } from "./failover.js"
import { type Figures, figureRows, sectionMarkdown } from "./figures.js"
import { section, withSection } from "./results.js"
import { Floor } from "./floor.js"
import * as Memory from "./memory.js"
import { askAll, client, cost, freshDatabase, percentile, profiled, runners as startRunners, server } from "./processes.js"

const quick = process.argv.includes("--quick")
const failoverArg = process.argv.find((a) => a.startsWith("--failover"))
const failures = failoverArg !== undefined
const only = failoverArg?.split("=")[1]?.split(",") ?? []
const write = process.argv.includes("--write") && !quick && !failures
const profileDir = process.argv.find((a) => a.startsWith("--cpu-prof="))?.split("=")[1]
const sizes = quick ? [1, 2] : [1, 2, 4]
const runs = quick ? 50 : 300
const suspended = quick ? 300 : 500
const idleDecisions = quick ? 20 : 100
const concurrency = 64

const Bench = AgentCluster.make(benchAgent)

const { check, checks, finish, rows } = Tally.make()

const scenario = (serverUrl: string, size: number) =>
  Effect.gen(function*() {
    const { sql, url } = yield* freshDatabase(serverUrl)
    const runners = yield* startRunners(url, sql, size)
    const inClient = yield* client(url)
    let next = 0
    const pause = Effect.suspend(() => {
      const n = next++
      return Effect.flatMap(AgentCluster.run(Bench, { input: String(n) }), (outcome) =>
        outcome._tag === "Paused" ? Effect.succeed(outcome.runId) : Effect.die(new Error(`run ${n}: ${outcome._tag}, not Paused`)))
    })
    const decide = (runId: string) =>
      Effect.gen(function*() {
        const start = performance.now()
        const outcome = yield* AgentCluster.decide(Bench, runId, Decision.approveAll())
        if (outcome._tag !== "Completed") return yield* Effect.die(new Error(`run ${runId}: ${outcome._tag}, not Completed`))
        return performance.now() - start
      })
    // warm-up: the client's assignments, every runner's code paths
    yield* inClient(Effect.forEach(Array.from({ length: 20 }), () => Effect.flatMap(pause, decide), { concurrency: 8 }))

    // throughput
    const profile = yield* profiled(runners, profileDir, `agentfx-${size}`)
    const costs = yield* cost(runners, sql, true)
    const started = performance.now()
    const loaded = yield* inClient(Effect.forEach(Array.from({ length: runs }), () => Effect.flatMap(pause, decide), { concurrency }))
    const perSecond = runs / ((performance.now() - started) / 1000)
    const perRun = yield* costs
    yield* profile

    // memory per suspended run before and after passivation, latency one at a time on live and passivated
    // entities (memory.ts); then the rest at once
    const { live, memory, reactivated, rest } = yield* Memory.measure({ runners, sql, inClient, pause, decide }, { suspended, decisions: idleDecisions })
    yield* inClient(Effect.forEach(rest, decide, { concurrency }))

    // the floor: the engine's two persisted messages per run, nothing else
    const floor = yield* inClient(Floor.client)
    const floorRun = (n: number) =>
      Effect.gen(function*() {
        yield* floor(`run:${n}`).Start({ n })
        const start = performance.now()
        yield* floor(`run:${n}`).Decide({ n })
        return performance.now() - start
      })
    yield* inClient(Effect.forEach(Array.from({ length: 20 }, (_, i) => -1 - i), floorRun, { concurrency: 8 }))
    const floorProfile = yield* profiled(runners, profileDir, `floor-${size}`)
    const floorCosts = yield* cost(runners, sql, true)
    const floorStarted = performance.now()
    const floorLoaded = yield* inClient(Effect.forEach(Array.from({ length: runs }, (_, i) => i), floorRun, { concurrency }))
    const floorPerSecond = runs / ((performance.now() - floorStarted) / 1000)
    const floorPerRun = yield* floorCosts
    yield* floorProfile
    const floorIdle = yield* inClient(Effect.forEach(Array.from({ length: idleDecisions }, (_, i) => runs + i), floorRun))

    const total = 20 + runs + idleDecisions + 2 * suspended
    const calls = yield* askAll(runners, "stats", "calls")
    const twice = yield* askAll(runners, "stats", "twice")
    const [record] = yield* sql<{ readonly completed: number; readonly other: number }>`SELECT count(*) FILTER (WHERE status = 'completed')::int AS completed, count(*) FILTER (WHERE status <> 'completed')::int AS other FROM agentfx_runs`
    check(`${size} runner(s): every run completed`, record!.completed === total && record!.other === 0, JSON.stringify(record))
    check(`${size} runner(s): every call ran exactly once`, calls === 2 * total && twice === 0, `${calls} calls of ${2 * total}, ${twice} twice`)
    check(`${size} runner(s): every entity passivated after ${Memory.passivated}`, memory.liveAfterWait === 0, `${memory.liveAfterWait} live`)
    return {
      size,
      perSecond,
      idle: live.latency,
      loaded: [percentile(loaded, 0.5), percentile(loaded, 0.99)],
      memory,
      live,
      reactivated,
      cpuPerRun: perRun.cpu / runs,
      transactionsPerRun: perRun.transactions / runs,
      floor: {
        perSecond: floorPerSecond,
        idle: [percentile(floorIdle, 0.5), percentile(floorIdle, 0.99)],
        loaded: [percentile(floorLoaded, 0.5), percentile(floorLoaded, 0.99)],
        cpuPerRun: floorPerRun.cpu / runs,
        transactionsPerRun: floorPerRun.transactions / runs
      }
    } satisfies Figures
  }).pipe(Effect.scoped)

const load = () => loadavg().map((x) => x.toFixed(2)).join(" / ")

const program = Effect.gen(function*() {
  const { url, which } = yield* server
  rows.push(["PostgreSQL server", which])
  rows.push(["load average (1 / 5 / 15 min) at the start", load()])
  const all: Array<Figures> = []
  if (failures) yield* failover(url, rows, checks, only)
  else for (const size of sizes) all.push(yield* scenario(url, size))
  rows.push(["load average (1 / 5 / 15 min) at the end", load()])
  rows.push(...figureRows(all))
  if (write) {
    const file = fileURLToPath(new URL("../../RESULTS.md", import.meta.url))
    const body = sectionMarkdown({ figures: all, which, rows, checks, runs, suspended, idleDecisions, concurrency, date: new Date().toISOString() })
    writeFileSync(file, withSection(readFileSync(file, "utf8"), section(body)))
  }
}).pipe(Effect.scoped)

finish(program, `cluster bench${quick ? " (--quick)" : ""}${failures ? " (--failover)" : ""}`)
