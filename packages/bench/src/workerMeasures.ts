/**
 * Worker-isolated tools measured through agentfx's public API (`Tool.make` with
 * `isolation: "worker"`, `Toolkit.make`, `ToolCallingManager.executeBatch`, a
 * `WorkerPool.layer` provided by the caller): kills of a `while (true) {}` at its deadline,
 * the replacement worker's spawn, round trips on a warm worker. Scenario W runs them, and so
 * does `examples/worker-tools.ts` (imported as `@agentfx/bench/workers`).
 *
 * `module` is a worker module exporting `echo` (answers with its `{ text }` argument) and
 * `spin` (a `while (true) {}`).
 */
import type { ToolCall } from "@agentfx/core"
import { Tool, Toolkit, ToolCallingManager, WorkerPool } from "@agentfx/core"
import type { Duration } from "effect"
import { Effect, Schema } from "effect"
import type { Kill } from "./measure.js"
import { ticker } from "./measure.js"

export type { Kill } from "./measure.js"

const Text = Schema.Struct({ text: Schema.String })

/** A worker tool `name` running export `exportName` of `module` on `{ text }`. */
export const workerTool = (name: string, exportName: string, module: URL, timeout?: Duration.Input) =>
  Tool.make(name, {
    description: `${exportName} in a worker`,
    parameters: Text,
    success: Text,
    isolation: "worker",
    module,
    export: exportName,
    ...(timeout === undefined ? {} : { timeout })
  })

const runOne = <R>(toolkit: Toolkit.Toolkit<R>, name: string) =>
  Effect.map(ToolCallingManager.executeBatch(toolkit, [{ id: "c", name, args: { text: "x" } }]), ([result]) => result!)

const timedOut = (result: ToolCall.Result) => result._tag === "Failed" && result.error._tag === "ToolTimeout"

/**
 * Kills one after the other, on a pool whose worker is warm (`echo` ran on it first): each time
 * `spin` under a `deadlineMillis` timeout until its result, with a 10 ms ticker on the main
 * thread; `afterKill(i)`; the pool's `stats.live`; then `echo` again, which needs a fresh
 * worker (spawn + import + first call). Use a pool of size 1, so that every kill leaves it
 * empty.
 */
export const measureKills = (options: {
  readonly module: URL
  readonly kills: number
  readonly deadlineMillis?: number
  readonly afterKill?: (i: number) => void
}) =>
  Effect.gen(function*() {
    const deadline = options.deadlineMillis ?? 200
    const toolkit = Toolkit.make(
      workerTool("spin", "spin", options.module, `${deadline} millis`),
      workerTool("echo", "echo", options.module)
    )
    const pool = yield* WorkerPool.WorkerPool
    yield* runOne(toolkit, "echo") // the first worker: spawned, module imported
    const kills: Array<Kill> = []
    for (let i = 0; i < options.kills; i++) {
      const tick = ticker()
      const start = performance.now()
      const killed = yield* runOne(toolkit, "spin")
      const overshootMs = performance.now() - start - deadline
      const maxGapMs = tick.stop()
      options.afterKill?.(i)
      const { live } = yield* pool.stats
      const next = performance.now()
      const served = yield* runOne(toolkit, "echo")
      kills.push({
        timedOut: timedOut(killed),
        overshootMs,
        maxGapMs,
        liveWorkers: live,
        served: served._tag === "Succeeded",
        spawnMs: performance.now() - next
      })
    }
    return kills
  })

/** µs per call, one sample per round of calls, and how many calls did not succeed. */
export interface RoundTrips {
  /** The whole tool path: `executeBatch` of a worker tool with a 1 s timeout (decode, reserve, deadline, encode → worker → back, decode, encode). */
  readonly tool: ReadonlyArray<number>
  /** `WorkerPool.run` alone (a structured clone each way, one worker). */
  readonly pool: ReadonlyArray<number>
  /** The same echo as an in-process tool with a 1 s timeout, for comparison. */
  readonly inProcess: ReadonlyArray<number>
  readonly failed: number
}

/**
 * Round trips on a warm worker, one call at a time: `warmup` calls of each path, then `reps`
 * rounds of `calls` calls of each path, the paths interleaved round by round.
 */
export const measureRoundTrips = (options: {
  readonly module: URL
  readonly calls: number
  readonly reps: number
  readonly warmup: number
}) =>
  Effect.gen(function*() {
    const inProcess = Tool.make("echo_here", {
      description: "echo in process",
      parameters: Text,
      success: Text,
      timeout: "1 second",
      handler: (args) => Effect.succeed(args)
    })
    const toolkit = Toolkit.make(workerTool("echo", "echo", options.module, "1 second"), inProcess)
    const pool = yield* WorkerPool.WorkerPool
    const succeeded = (result: ToolCall.Result) => result._tag === "Succeeded"
    const call = { module: options.module.href, export: "echo", toolName: "echo", args: { text: "x" } }
    const context = { callId: "c", toolName: "echo", attempt: 1 }
    const paths = {
      tool: Effect.map(runOne(toolkit, "echo"), succeeded),
      pool: pool.run({ ...call, context }).pipe(Effect.as(true), Effect.orElseSucceed(() => false)),
      inProcess: Effect.map(runOne(toolkit, "echo_here"), succeeded)
    }
    const figures = { tool: new Array<number>(), pool: new Array<number>(), inProcess: new Array<number>() }
    let failed = 0
    const round = (path: Effect.Effect<boolean, never, WorkerPool.WorkerPool>, calls: number) =>
      Effect.gen(function*() {
        const start = performance.now()
        for (let i = 0; i < calls; i++) if (!(yield* path)) failed++
        return ((performance.now() - start) * 1000) / calls
      })
    for (const path of Object.values(paths)) yield* round(path, options.warmup)
    for (let rep = 0; rep < options.reps; rep++) {
      for (const name of ["tool", "pool", "inProcess"] as const) figures[name].push(yield* round(paths[name], options.calls))
    }
    return { ...figures, failed } satisfies RoundTrips
  })
