/**
 * Worker-isolated tools, measured: deadline overshoot of a `while (true) {}` tool, spawn cost
 * (cold pool: spawn + import + first call), pooled round trip. Run:
 * `pnpm tsx examples/worker-tools.ts`. The figures in docs/workers.md come from this script.
 *
 * The measuring functions are exported (and run nothing on import) so that a benchmark harness
 * can reuse them.
 */
import { Tool, ToolCallingManager, Toolkit, WorkerPool } from "@agentfx/core"
import { type Duration, Effect, Schema } from "effect"
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

const worker = (name: string, exportName: string, module: URL, timeout?: Duration.DurationInput) =>
  Tool.make(name, {
    description: `${exportName} in a worker`,
    parameters: Schema.Struct({ text: Schema.String }),
    success: Schema.Struct({ text: Schema.String }),
    isolation: "worker",
    module,
    export: exportName,
    ...(timeout === undefined ? {} : { timeout })
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

const runOne = <R>(toolkit: Toolkit.Toolkit<R>, name: string, args: { readonly [key: string]: string | number } = { text: "x" }) =>
  Effect.map(ToolCallingManager.executeBatch(toolkit, [{ id: "c", name, args }]), ([result]) => result!)

const expectTag = (result: { readonly _tag: string; readonly error?: { readonly _tag: string } }, tag: string) => {
  const got = result._tag === "Failed" ? result.error!._tag : result._tag
  if (got !== tag) throw new Error(`expected ${tag}, got ${JSON.stringify(result)}`)
}

/**
 * Deadline overshoot: a `while (true) {}` tool with a `deadlineMillis` timeout on a warm
 * worker; how long after the deadline the `ToolTimeout` returns (the worker's thread has
 * exited by then), and the largest gap of a 10 ms ticker on the main thread meanwhile.
 */
export const measureOvershoot = (runs: number, deadlineMillis = 200) =>
  Effect.gen(function*() {
    const toolkit = yield* Toolkit.make(
      worker("spin", "spin", tsModule, `${deadlineMillis} millis`),
      worker("echo", "echo", tsModule)
    )
    const overshoot: Array<number> = []
    let maxTickGap = 0
    for (let i = 0; i < runs; i++) {
      expectTag(yield* runOne(toolkit, "echo"), "Succeeded") // the replacement worker is ready
      let last = performance.now()
      const ticker = setInterval(() => {
        const now = performance.now()
        maxTickGap = Math.max(maxTickGap, now - last)
        last = now
      }, 10)
      const start = performance.now()
      const result = yield* runOne(toolkit, "spin")
      overshoot.push(performance.now() - start - deadlineMillis)
      clearInterval(ticker)
      expectTag(result, "ToolTimeout")
    }
    return { overshoot: summarize(overshoot), maxTickGap }
  }).pipe(Effect.provide(WorkerPool.layer({ size: 1 })))

/** Spawn cost: the first call on a cold pool (spawn the worker, import `module`, call, reply). */
export const measureSpawn = (module: URL, runs: number) =>
  Effect.gen(function*() {
    const toolkit = yield* Toolkit.make(worker("echo", "echo", module))
    const samples: Array<number> = []
    for (let i = 0; i < runs; i++) {
      const start = performance.now()
      const result = yield* runOne(toolkit, "echo").pipe(Effect.provide(WorkerPool.layer({ size: 1 })))
      samples.push(performance.now() - start)
      expectTag(result, "Succeeded")
    }
    return summarize(samples)
  })

/**
 * Round trip on a warm worker, in µs per call: through the whole tool path
 * (`executeBatch`: decode, reserve, deadline, encode → structured clone → worker → back,
 * decode, encode), through `WorkerPool.run` alone, and an in-process tool for comparison.
 */
export const measureRoundTrip = (calls: number) =>
  Effect.gen(function*() {
    const inProcess = Tool.make("echo_here", {
      description: "echo in process",
      parameters: Schema.Struct({ text: Schema.String }),
      success: Schema.Struct({ text: Schema.String }),
      timeout: "1 second",
      handler: (args) => Effect.succeed(args)
    })
    const toolkit = yield* Toolkit.make(worker("echo", "echo", jsModule, "1 second"), inProcess)
    const pool = yield* WorkerPool.WorkerPool
    const perCall = <R>(self: Effect.Effect<unknown, never, R>) =>
      Effect.gen(function*() {
        for (let i = 0; i < Math.min(200, calls); i++) yield* self // warm up
        const start = performance.now()
        for (let i = 0; i < calls; i++) yield* self
        return ((performance.now() - start) * 1000) / calls
      })
    const context = { callId: "c", toolName: "echo", attempt: 1 }
    return {
      tool: yield* perCall(runOne(toolkit, "echo")),
      pool: yield* perCall(
        Effect.orDie(pool.run({ module: jsModule.href, export: "echo", toolName: "echo", args: { text: "x" }, context }))
      ),
      inProcess: yield* perCall(runOne(toolkit, "echo_here"))
    }
  }).pipe(Effect.provide(WorkerPool.layer({ size: 1 })))

/** Every figure of docs/workers.md. */
export const measureAll = (options: { readonly runs: number; readonly calls: number }) =>
  Effect.gen(function*() {
    const { maxTickGap, overshoot } = yield* measureOvershoot(options.runs)
    const spawnJs = yield* measureSpawn(jsModule, options.runs)
    const spawnTs = yield* measureSpawn(tsModule, options.runs)
    const roundTrip = yield* measureRoundTrip(options.calls)
    const crunched: string = yield* Effect.flatMap(Toolkit.make(crunch), (toolkit) => runOne(toolkit, "crunch", { n: 1_000_000 }))
      .pipe(Effect.map((result) => JSON.stringify(result)), Effect.provide(WorkerPool.layer({ size: 1 })))
    return { overshoot, maxTickGap, spawnJs, spawnTs, roundTrip, crunched }
  })

const ms = (s: Summary) => `min ${s.min.toFixed(1)} / p50 ${s.p50.toFixed(1)} / max ${s.max.toFixed(1)} ms (${s.runs} runs)`

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const figures = await Effect.runPromise(measureAll({ runs: 20, calls: 5_000 }))
  console.log(`node ${process.version}, ${process.execArgv.length > 0 ? "under tsx" : "plain node"}`)
  console.log(`while (true) {} under a 200 ms timeout: ToolTimeout after the deadline ${ms(figures.overshoot)}`)
  console.log(`  main-thread 10 ms ticker, largest gap: ${figures.maxTickGap.toFixed(1)} ms`)
  console.log(`spawn + import + first call, .mjs module: ${ms(figures.spawnJs)}`)
  console.log(`spawn + import + first call, .ts module (tsx): ${ms(figures.spawnTs)}`)
  console.log(
    `round trip on a warm worker: tool ${figures.roundTrip.tool.toFixed(0)} µs, WorkerPool.run ${
      figures.roundTrip.pool.toFixed(0)
    } µs (in-process tool ${figures.roundTrip.inProcess.toFixed(0)} µs)`
  )
  console.log(`crunch(1e6): ${figures.crunched}`)
}
