/**
 * The memory of suspended runs in `pnpm bench:cluster`'s runners, and what taking an entity on
 * again costs. The runners serve the bench agent with `AgentCluster.runner`'s default
 * `idleTimeout` (10 s): an entity with no message in flight leaves memory between 10 s and
 * 20 s after its last reply (the engine's reaper checks every 10 s), so the bench waits
 * {@link passivated} before it reads what passivated entities leave.
 *
 * - memory: once every entity is passivated, heap after a full GC in every runner (before);
 *   `suspended` runs paused (64 at a time); heap, and the entities still live (with); after
 *   {@link passivated} more, heap again (passivated). Per suspended run: (passivated − before)
 *   / suspended, what a paused run costs once its entity is gone; and that plus (with −
 *   passivated) / live entities, what it costs while its entity is live;
 * - decisions one at a time: `decisions` of the suspended runs (passivated: each decision takes
 *   its entity on again, `Handler.make` and one `RunLocation` note) and as many runs just
 *   paused (live), alternately. Each counts decide → completed reply and the runners' CPU time
 *   meanwhile; the entities taken on again are counted exactly (rows of
 *   `agentfx_cluster_locations` noted since the decisions began).
 */
import type { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import { askAll, type Child, cost, percentile } from "./processes.js"

/** Twice the runners' idle timeout (10 s, `AgentCluster.runner`'s default), and a second: every idle entity is gone after it. */
export const passivated = "21 seconds"

/** What decisions one at a time cost: their count, decide → completed reply p50 / p99 (ms), the runners' CPU per decision (ms), the entities taken on again. */
export interface Decisions {
  readonly count: number
  readonly latency: readonly [number, number]
  readonly cpuPerDecision: number
  readonly reactivated: number
}

/** What the memory phase measured (bytes per suspended run) and the entities live or left. */
export interface Memory {
  readonly heapPerRun: number
  readonly heapPerLiveRun: number
  readonly liveAtPause: number
  readonly liveAfterWait: number
}

/** The bench's run, its decision and its client, as the scenario defines them. */
export interface Scenario {
  readonly runners: ReadonlyArray<Child>
  readonly sql: PgClient.PgClient
  readonly inClient: <A, E>(effect: Effect.Effect<A, E, any>) => Effect.Effect<A>
  readonly pause: Effect.Effect<string, unknown, any>
  readonly decide: (runId: string) => Effect.Effect<number, unknown, any>
}

/** Decides `runIds` one at a time: for each, decide → completed reply (ms) and the runners' CPU time spent meanwhile (ms). */
const oneAtATime = (s: Scenario, runIds: ReadonlyArray<string>) =>
  Effect.forEach(runIds, (runId) =>
    Effect.gen(function*() {
      const spent = yield* cost(s.runners, s.sql)
      const time = yield* s.inClient(s.decide(runId))
      return { time, cpu: (yield* spent).cpu }
    }))

/** The entities of `runIds` noted in `agentfx_cluster_locations` since `since` (epoch ms): taken on again. */
const takenOn = (s: Scenario, runIds: ReadonlyArray<string>, since: number) =>
  Effect.map(
    s.sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM agentfx_cluster_locations WHERE since >= ${since} AND entity_id IN ${s.sql.in(runIds.map((id) => `run:${id}`))}`.pipe(Effect.orDie),
    ([row]) => row!.n
  )

/** What `runIds`'s decisions measured. */
const summary = (s: Scenario, runIds: ReadonlyArray<string>, measured: ReadonlyArray<{ readonly time: number; readonly cpu: number }>, since: number) =>
  Effect.map(takenOn(s, runIds, since), (reactivated): Decisions => ({
    count: runIds.length,
    latency: [percentile(measured.map((m) => m.time), 0.5), percentile(measured.map((m) => m.time), 0.99)],
    cpuPerDecision: measured.reduce((sum, m) => sum + m.cpu, 0) / measured.length,
    reactivated
  }))

/**
 * The memory of `suspended` paused runs, before and after passivation; then `decisions` of them
 * (passivated) and `decisions` runs just paused (live) decided one at a time, alternately, so
 * that both find the runners in the same state (the code paths as warm, the heap as collected).
 * The rest stay paused: their run ids are returned.
 */
export const measure = (s: Scenario, options: { readonly suspended: number; readonly decisions: number }) =>
  Effect.gen(function*() {
    const heap = askAll(s.runners, "heap", "heap")
    const entities = askAll(s.runners, "entities", "entities")
    const pauseAll = (n: number) => s.inClient(Effect.forEach(Array.from({ length: n }), () => s.pause, { concurrency: 64 }))

    yield* Effect.sleep(passivated)
    const before = yield* heap
    const paused = yield* pauseAll(options.suspended)
    const withEntities = yield* heap
    const liveAtPause = yield* entities
    yield* Effect.sleep(passivated)
    const after = yield* heap
    const liveAfterWait = yield* entities
    const perRun = (after - before) / options.suspended
    const memory: Memory = {
      heapPerRun: perRun,
      heapPerLiveRun: perRun + (liveAtPause === 0 ? 0 : (withEntities - after) / liveAtPause),
      liveAtPause,
      liveAfterWait
    }

    const passivatedIds = paused.slice(0, options.decisions)
    const liveIds = yield* pauseAll(options.decisions)
    const since = Date.now()
    const measured = yield* oneAtATime(s, passivatedIds.flatMap((id, i) => [liveIds[i]!, id]))
    return {
      memory,
      live: yield* summary(s, liveIds, measured.filter((_, i) => i % 2 === 0), since),
      reactivated: yield* summary(s, passivatedIds, measured.filter((_, i) => i % 2 === 1), since),
      rest: paused.slice(options.decisions)
    }
  })
