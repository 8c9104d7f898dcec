/**
 * A pool of `node:worker_threads` workers that runs tools declared with
 * `isolation: "worker"`. A timeout or an interruption **terminates** the worker running the
 * call — a true kill, even of a `while (true) {}` — and the pool replaces it.
 *
 * @since 0.1.0
 */
import type { Duration } from "effect"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import { validateTimeout } from "./internal/options.js"
import { Pool } from "./internal/workerPool.js"
import type * as internal from "./internal/workerPool.js"
import type { CallContext } from "./Tool.js"
import type { ToolError } from "./ToolError.js"

/**
 * The worker pool a worker-isolated tool runs in. A worker tool's requirements include it,
 * so whatever runs such a tool needs {@link layer} provided.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { WorkerPool } from "@agentfx/core"
 *
 * const program = Effect.gen(function*() {
 *   const pool = yield* WorkerPool.WorkerPool
 *   return yield* pool.stats // { size: 2, live: 0, busy: 0, spawned: 0, exited: 0 }
 * }).pipe(Effect.provide(WorkerPool.layer({ size: 2 })))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class WorkerPool extends Context.Service<WorkerPool, WorkerPool.Service>()("@agentfx/core/WorkerPool") {}

/**
 * @since 0.1.0
 * @category services
 */
export declare namespace WorkerPool {
  /**
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /** How many workers may run at once. */
    readonly size: number
    /**
     * Runs an exported function in a worker and returns what it returned (structured-cloned,
     * not yet decoded). Waits for a free worker unless the current attempt holds one
     * ({@link Service.reserve}). Interrupting the Effect terminates the worker. A function that
     * throws or rejects fails with a `semantic` `ToolError` (the worker stays); a worker that
     * crashes or calls `process.exit` fails with a `semantic` `ToolError` (the worker is
     * replaced); a module that cannot be imported, or lacks the export, fails with an
     * `environment` `ToolError`.
     */
    readonly run: (call: Call) => Effect.Effect<unknown, ToolError>
    /**
     * Holds a worker that has imported `target` while `self` runs; `run` inside `self` uses it
     * without waiting. The executor puts this around each attempt's timeout, so the wait for
     * a worker, its spawn and the module's import do not count against the deadline.
     */
    readonly reserve: (target: Target) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ToolError, R>
    /** The pool's counters right now. */
    readonly stats: Effect.Effect<Stats>
  }
}

/**
 * Which function a worker runs: the export `export` of the module at the `file:` URL
 * `module`, on behalf of the tool `toolName` (named in errors).
 *
 * @example
 * ```ts
 * import { WorkerPool } from "@agentfx/core"
 *
 * const target: WorkerPool.Target = {
 *   module: new URL("./crunch.worker.js", import.meta.url).href,
 *   export: "default",
 *   toolName: "crunch"
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Target extends internal.Target {}

/**
 * One call of a worker function: the target, the **encoded** arguments (they are
 * structured-cloned into the worker) and the call's context (passed as the second argument).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { WorkerPool } from "@agentfx/core"
 *
 * const sum = Effect.gen(function*() {
 *   const pool = yield* WorkerPool.WorkerPool
 *   return yield* pool.run({
 *     module: new URL("./crunch.worker.js", import.meta.url).href,
 *     export: "default",
 *     toolName: "crunch",
 *     args: { n: 1000 },
 *     context: { callId: "call_1", toolName: "crunch", attempt: 1 }
 *   })
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Call extends Target {
  readonly args: unknown
  /** What the worker function is told of the call. The run state does not cross to workers. */
  readonly context: Omit<CallContext, "state">
}

/**
 * A pool's counters: `live` workers (threads not yet exited), `busy` slots, and how many
 * workers were `spawned` and have `exited` since it was built — terminated by the pool (a
 * timeout, an interruption, a crash, a failed import, the shutdown) or ended on their own
 * (`process.exit`, an uncaught exception). `live` is `spawned - exited`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { WorkerPool } from "@agentfx/core"
 *
 * const report = Effect.flatMap(WorkerPool.WorkerPool, (pool) => pool.stats).pipe(
 *   Effect.tap((stats: WorkerPool.Stats) => Effect.log(`${stats.live} live, ${stats.exited} exited`))
 * )
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Stats extends internal.Stats {}

/**
 * Options of {@link layer}.
 *
 * @example
 * ```ts
 * import { WorkerPool } from "@agentfx/core"
 *
 * const options: WorkerPool.Options = { size: 4, startupTimeout: "10 seconds" }
 * const PoolLive = WorkerPool.layer(options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How many workers may run at once; calls beyond it wait (FIFO) for a free one. A positive integer. */
  readonly size: number
  /**
   * Deadline for starting a worker and importing a tool's module, which happen before the
   * tool's own timeout starts. Exceeding it terminates the worker and fails the call with an
   * `environment` error. Positive and finite; default 30 seconds.
   */
  readonly startupTimeout?: Duration.Input
}

/**
 * The pool Layer was given options it cannot honour; `problems` names each one.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { WorkerPool } from "@agentfx/core"
 *
 * const program = Layer.build(WorkerPool.layer({ size: 0 })).pipe(
 *   Effect.catchTag("InvalidWorkerPool", (e) => Effect.logError(e.message)),
 *   Effect.scoped
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidWorkerPool extends Data.TaggedError("InvalidWorkerPool")<{
  readonly problems: ReadonlyArray<string>
}> {
  override get message(): string {
    return `Invalid WorkerPool options: ${this.problems.join("; ")}`
  }
}

/**
 * A pool of `size` workers owned by the Layer. Workers are spawned lazily, on the first call
 * that needs one, and kept for later calls; a worker is terminated and its slot refilled on
 * next use when a call times out, is interrupted, or crashes it. Closing the Layer's scope
 * terminates every worker at once (no graceful wait). Uses raw `node:worker_threads`.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Schema } from "effect"
 * import { Tool, ToolCallingManager, Toolkit, WorkerPool } from "@agentfx/core"
 *
 * const crunch = Tool.make("crunch", {
 *   description: "CPU-heavy work, killed at its deadline",
 *   parameters: Schema.Struct({ n: Schema.Number }),
 *   success: Schema.Number,
 *   timeout: "2 seconds",
 *   isolation: "worker",
 *   module: Tool.workerModule(import.meta.url, "./crunch.worker")
 * })
 * const program = Effect.gen(function*() {
 *   const toolkit = Toolkit.make(crunch)
 *   return yield* ToolCallingManager.executeBatch(toolkit, [{ id: "1", name: "crunch", args: { n: 1e6 } }])
 * }).pipe(Effect.provide(Layer.merge(WorkerPool.layer({ size: 4 }), ToolCallingManager.bounded({ permits: 4 }))))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<WorkerPool, InvalidWorkerPool> =>
  Layer.effect(
    WorkerPool,
    Effect.suspend(() => {
      const problems: Array<string> = []
      if (!Number.isInteger(options.size) || options.size < 1) {
        problems.push(`size ${options.size} is not a positive integer`)
      }
      const startupTimeout = validateTimeout(options.startupTimeout ?? "30 seconds", "startupTimeout")
      if (Result.isFailure(startupTimeout)) problems.push(startupTimeout.failure)
      if (problems.length > 0 || Result.isFailure(startupTimeout)) return Effect.fail(new InvalidWorkerPool({ problems }))
      return Effect.map(
        Effect.acquireRelease(Effect.sync(() => new Pool(options.size, startupTimeout.success)), (pool) => pool.close),
        (pool): WorkerPool.Service => ({
          size: pool.size,
          run: (call) => pool.run(call, call.args, call.context),
          reserve: (target) => pool.reserve(target),
          stats: pool.stats
        })
      )
    })
  )
