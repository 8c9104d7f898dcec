/**
 * Worker-isolated tools: a CPU-bound tool in a worker, and what isolation costs, measured on
 * this example's own worker modules (`.mjs` and `.ts`): deadline overshoot of a
 * `while (true) {}` tool, spawn cost (the replacement worker after a kill: spawn + import +
 * first call), pooled round trip. Run: `pnpm tsx examples/worker-tools.ts`.
 *
 * The measuring functions are the benchmark's (`@agentfx/bench/workers`), which scenario W of
 * `pnpm bench` runs against raw `worker_threads`: docs/workers.md gives its figures.
 */
import { measureKills, measureRoundTrips } from "@agentfx/bench/workers"
import { Tool, ToolCallingManager, Toolkit, WorkerPool } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Schema } from "effect"
import { pathToFileURL } from "node:url"

/** The arguments of `crunch`; its worker function receives them encoded (`typeof CrunchParams.Encoded`). */
export const CrunchParams = Schema.Struct({ n: Schema.Int })
/** The result of `crunch`, as the worker function returns it (`typeof CrunchResult.Encoded`). */
export const CrunchResult = Schema.Struct({ sum: Schema.Number })

/** A CPU-bound tool in a worker: its 1 s deadline terminates the worker. */
export const crunch = Tool.make("crunch", {
  description: "Sums i % 7 for i < n, synchronously",
  parameters: CrunchParams,
  success: CrunchResult,
  timeout: "1 second",
  isolation: "worker",
  module: Tool.workerModule(import.meta.url, "./workers/crunch.worker")
})

const tsModule = Tool.workerModule(import.meta.url, "./workers/crunch.worker")
const jsModule = new URL("./workers/echo.worker.mjs", import.meta.url)

/** min / p50 / max of a sample. */
export interface Summary {
  readonly runs: number
  readonly min: number
  readonly p50: number
  readonly max: number
}

export const summarize = (values: ReadonlyArray<number>): Summary => {
  const sorted = [...values].sort((a, b) => a - b)
  return { runs: sorted.length, min: sorted[0]!, p50: sorted[Math.floor(sorted.length / 2)]!, max: sorted.at(-1)! }
}

const onePool = WorkerPool.layer({ size: 1 })

/** `runs` kills of a `while (true) {}` under a 200 ms timeout, each followed by a call on a fresh worker. */
const kills = (module: URL, runs: number) => measureKills({ module, kills: runs }).pipe(Effect.provide(onePool))

/** Every figure printed below. */
export const measureAll = (options: { readonly runs: number; readonly calls: number }) =>
  Effect.gen(function*() {
    const js = yield* kills(jsModule, options.runs)
    const ts = yield* kills(tsModule, options.runs)
    const both = [...js, ...ts]
    const reps = 5
    const roundTrip = yield* measureRoundTrips({ module: jsModule, warmup: 200, calls: Math.ceil(options.calls / reps), reps })
      .pipe(Effect.provide(onePool))
    const crunched: string = yield* ToolCallingManager.executeBatch(Toolkit.make(crunch), [
      { id: "c", name: "crunch", args: { n: 1_000_000 } }
    ]).pipe(Effect.map(([result]) => JSON.stringify(result)), Effect.provide(onePool))
    return {
      /** Every kill ended in a `ToolTimeout`, the pool served the next call, and every round trip succeeded. */
      killed: both.every((kill) => kill.timedOut && kill.served) && roundTrip.failed === 0,
      overshoot: summarize(both.map((kill) => kill.overshootMs)),
      maxTickGap: Math.max(...both.map((kill) => kill.maxGapMs)),
      spawnJs: summarize(js.map((kill) => kill.spawnMs)),
      spawnTs: summarize(ts.map((kill) => kill.spawnMs)),
      roundTrip: {
        tool: summarize(roundTrip.tool).p50,
        pool: summarize(roundTrip.pool).p50,
        inProcess: summarize(roundTrip.inProcess).p50
      },
      crunched
    }
  })

const ms = (s: Summary) => `min ${s.min.toFixed(1)} / p50 ${s.p50.toFixed(1)} / max ${s.max.toFixed(1)} ms (${s.runs} runs)`

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  NodeRuntime.runMain(Effect.map(measureAll({ runs: 20, calls: 5_000 }), (figures) => {
    console.log(`node ${process.version}, ${process.execArgv.length > 0 ? "under tsx" : "plain node"}`)
    console.log(`while (true) {} under a 200 ms timeout: ToolTimeout after the deadline ${ms(figures.overshoot)}`)
    console.log(`  main-thread 10 ms ticker, largest gap: ${figures.maxTickGap.toFixed(1)} ms`)
    console.log(`  every kill a ToolTimeout, the next call served: ${figures.killed ? "yes" : "NO"}`)
    console.log(`spawn + import + first call after a kill, .mjs module: ${ms(figures.spawnJs)}`)
    console.log(`spawn + import + first call after a kill, .ts module (tsx): ${ms(figures.spawnTs)}`)
    console.log(
      `round trip on a warm worker: tool ${figures.roundTrip.tool.toFixed(0)} µs, WorkerPool.run ${
        figures.roundTrip.pool.toFixed(0)
      } µs (in-process tool ${figures.roundTrip.inProcess.toFixed(0)} µs)`
    )
    console.log(`crunch(1e6): ${figures.crunched}`)
  }))
}
