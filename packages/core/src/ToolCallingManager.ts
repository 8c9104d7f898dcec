/**
 * How a batch of tool calls is scheduled: one after another, all at once, or through a
 * bulkhead of `permits`. Chosen by providing a Layer; sequential when none is provided.
 *
 * @since 0.1.0
 */
import type { Duration } from "effect"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Bulkhead } from "./internal/bulkhead.js"
import { callTool, executeCalls, runCall } from "./internal/executor.js"
import { validateTimeout } from "./internal/options.js"
import type * as Tool from "./Tool.js"
import type * as ToolCall from "./ToolCall.js"
import type { ToolFailure } from "./ToolError.js"
import * as Toolkit from "./Toolkit.js"

/**
 * The scheduling policy of tool calls. A `Context.Reference`: without a Layer, runs use
 * {@link sequential} with no default timeout.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ToolCallingManager } from "@agentfx/core"
 *
 * const program = Effect.gen(function*() {
 *   const manager = yield* ToolCallingManager.ToolCallingManager
 *   return manager.mode // "sequential" unless a Layer says otherwise
 * })
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export const ToolCallingManager: Context.Reference<ToolCallingManager.Service> = Context.Reference<ToolCallingManager.Service>("@agentfx/core/ToolCallingManager", {
  defaultValue: () => makeService("sequential", 1, Option.none(), (self) => self, unlimited)
})

/**
 * @since 0.1.0
 * @category services
 */
export declare namespace ToolCallingManager {
  /**
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    readonly mode: "sequential" | "unbounded" | "bounded"
    /** Deadline for tools that declare none. */
    readonly defaultTimeout: Option.Option<Duration.Duration>
    /** How many calls of one batch run at once (1 for a batch containing a `serial` tool). */
    readonly concurrency: number | "unbounded"
    /** Wraps each attempt of a handler, outside its timeout: the bulkhead permit of `bounded`. */
    readonly withPermit: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /**
     * The bulkhead's permits not held right now (`bounded`); `Infinity` for a manager without
     * one. Shared by every run that uses this service instance (see {@link bounded}).
     */
    readonly freePermits: Effect.Effect<number>
  }
}

/**
 * Options shared by every manager.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * Deadline for one attempt of a tool that declares no `timeout` of its own. Must be
   * positive and finite. Without it (and without the tool's), a tool runs unbounded.
   */
  readonly defaultTimeout?: Duration.Input
}

/**
 * A manager Layer was given options it cannot honour; `problems` names each one.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ToolCallingManager } from "@agentfx/core"
 *
 * const program = Layer.build(ToolCallingManager.bounded({ permits: 0 })).pipe(
 *   Effect.catchTag("InvalidManagerOptions", (e) => Effect.logError(e.message)),
 *   Effect.scoped
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidManagerOptions extends Data.TaggedError("InvalidManagerOptions")<{
  readonly problems: ReadonlyArray<string>
}> {
  override get message(): string {
    return `Invalid ToolCallingManager options: ${this.problems.join("; ")}`
  }
}

const unlimited: Effect.Effect<number> = Effect.succeed(Infinity)

const makeService = (
  mode: ToolCallingManager.Service["mode"],
  concurrency: ToolCallingManager.Service["concurrency"],
  defaultTimeout: Option.Option<Duration.Duration>,
  withPermit: ToolCallingManager.Service["withPermit"],
  freePermits: Effect.Effect<number>
): ToolCallingManager.Service => ({ mode, concurrency, defaultTimeout, withPermit, freePermits })

const checkOptions = (
  options: Options | undefined,
  problems: Array<string>
): Option.Option<Duration.Duration> =>
  options?.defaultTimeout === undefined ? Option.none() : Result.match(validateTimeout(options.defaultTimeout, "defaultTimeout"), {
    onFailure: (problem) => {
      problems.push(problem)
      return Option.none()
    },
    onSuccess: Option.some
  })

const layerFrom = (
  build: (problems: Array<string>) => Effect.Effect<ToolCallingManager.Service>
): Layer.Layer<never, InvalidManagerOptions> =>
  Layer.effect(
    ToolCallingManager,
    Effect.suspend(() => {
      const problems: Array<string> = []
      return Effect.flatMap(
        build(problems),
        (service) => problems.length > 0 ? Effect.fail(new InvalidManagerOptions({ problems })) : Effect.succeed(service)
      )
    })
  )

/**
 * Calls run one after another, in call order. The default when no manager is provided.
 *
 * @example
 * ```ts
 * import { ToolCallingManager } from "@agentfx/core"
 *
 * const ManagerLive = ToolCallingManager.sequential({ defaultTimeout: "30 seconds" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const sequential = (options?: Options): Layer.Layer<never, InvalidManagerOptions> =>
  layerFrom((problems) => Effect.succeed(makeService("sequential", 1, checkOptions(options, problems), (self) => self, unlimited)))

/**
 * All calls of a batch run concurrently (a batch containing a `serial` tool still runs
 * sequentially).
 *
 * @example
 * ```ts
 * import { ToolCallingManager } from "@agentfx/core"
 *
 * const ManagerLive = ToolCallingManager.unbounded({ defaultTimeout: "10 seconds" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const unbounded = (options?: Options): Layer.Layer<never, InvalidManagerOptions> =>
  layerFrom((problems) =>
    Effect.succeed(makeService("unbounded", "unbounded", checkOptions(options, problems), (self) => self, unlimited))
  )

/**
 * Calls run concurrently, at most `permits` at a time (a bulkhead). The permits belong to
 * the service the Layer builds: runs that share one built Layer share them — provide it
 * once, at the top of the app or in a `ManagedRuntime`. Providing the Layer to each run
 * (`Effect.provide(Agent.run(…), ToolCallingManager.bounded(…))` per run) builds a bulkhead
 * per run, so that three runs with `permits: 2` may run six calls at once. `freePermits`
 * tells how many are free. A permit is held for one attempt of a handler and released on
 * success, failure, timeout and interruption; retry delays hold no permit. A tool's timeout
 * starts when it has its permit: queueing does not count against it.
 *
 * @example
 * ```ts
 * import { ToolCallingManager } from "@agentfx/core"
 *
 * const ManagerLive = ToolCallingManager.bounded({ permits: 4, defaultTimeout: "30 seconds" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const bounded = (
  options: Options & { readonly permits: number }
): Layer.Layer<never, InvalidManagerOptions> =>
  layerFrom((problems) => {
    const defaultTimeout = checkOptions(options, problems)
    if (!Number.isInteger(options.permits) || options.permits < 1) {
      problems.push(`permits ${options.permits} is not a positive integer`)
      return Effect.succeed(makeService("bounded", "unbounded", defaultTimeout, (self) => self, unlimited))
    }
    const bulkhead = new Bulkhead(options.permits)
    return Effect.succeed(
      makeService("bounded", "unbounded", defaultTimeout, bulkhead.withPermit, Effect.sync(() => bulkhead.available))
    )
  })

/**
 * Runs a batch of calls with the current manager and returns one result per call, in call
 * order: each call's arguments decoded, its timeout (else the manager's default), permit and
 * retries applied, its value encoded — the executor of an agent run. One call's timeout or
 * failure leaves the others' results intact; a call naming an unknown tool gets a `semantic`
 * failure; a handler that dies, or interrupts itself (`Effect.interrupt`, a join of a fiber it
 * interrupted), gets a `semantic` failure. Interrupting the batch interrupts every running call
 * (their finalizers run) and is not turned into results. Handlers see an empty state snapshot, and `Tool.output` writes are
 * dropped: run state belongs to an agent run.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool, ToolCallingManager, Toolkit } from "@agentfx/core"
 *
 * const echo = Tool.make("echo", {
 *   description: "Echo a text",
 *   parameters: Schema.Struct({ text: Schema.String }),
 *   success: Schema.String,
 *   handler: ({ text }) => Effect.succeed(text)
 * })
 * const program = ToolCallingManager.executeBatch(Toolkit.make(echo), [
 *   { id: "1", name: "echo", args: { text: "a" } },
 *   { id: "2", name: "echo", args: { text: "b" } }
 * ]).pipe(Effect.provide(ToolCallingManager.unbounded()))
 * ```
 *
 * @since 0.1.0
 * @category execution
 */
export const executeBatch = <R>(
  toolkit: Toolkit.Toolkit<R>,
  calls: ReadonlyArray<ToolCall.ToolCall>
): Effect.Effect<Array<ToolCall.Result>, never, R> =>
  Effect.flatMap(ToolCallingManager, (manager) =>
    Effect.map(
      executeCalls(toolkit, calls.map((call) => ({ call })), manager.concurrency, (item) => runCall(toolkit, item, manager, {})),
      (executed) => executed.map((e) => e.result)
    ))

const entries = new WeakMap<Tool.Any, Result.Result<Toolkit.Entry, Toolkit.InvalidToolkit>>()

/**
 * Calls one tool with the current manager, outside any agent run: `args` (encoded, as a model
 * would send them) decoded with the tool's `parameters`, the tool's timeout (else the
 * manager's `defaultTimeout`), the manager's permit and the tool's retries, the value checked
 * against `success` — the same executor as every call of an agent run. Succeeds with the
 * handler's value; fails with the `ToolError` (bad arguments are `semantic`, a defect or the
 * handler's own interruption a logged `semantic` error) or the `ToolTimeout`, or `InvalidToolkit` for a tool whose options are
 * invalid. `Tool.output` writes are dropped.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool, ToolCallingManager } from "@agentfx/core"
 *
 * const getWeather = Tool.make("get_weather", {
 *   description: "Current weather for a city",
 *   parameters: Schema.Struct({ city: Schema.String }),
 *   success: Schema.String,
 *   timeout: "2 seconds",
 *   handler: ({ city }) => Effect.succeed(`Sunny in ${city}`)
 * })
 * const weather = ToolCallingManager.call(getWeather, { city: "Oslo" }) // Effect<string, ToolFailure | InvalidToolkit>
 * ```
 *
 * @since 0.1.0
 * @category execution
 */
export const call = <T extends Tool.Any>(
  tool: T,
  args: unknown
): Effect.Effect<Tool.Success<T>, ToolFailure | Toolkit.InvalidToolkit, Tool.Requirements<T>> =>
  Effect.flatMap(ToolCallingManager, (manager) => {
    let entry = entries.get(tool)
    if (entry === undefined) {
      entry = Result.map(Toolkit.validate([tool]), (toolkit) => toolkit.entries.get(tool.name)!)
      entries.set(tool, entry)
    }
    return Result.isFailure(entry)
      ? Effect.fail(entry.failure)
      : callTool<Tool.Requirements<T>>(entry.success, args, manager) as Effect.Effect<
        Tool.Success<T>,
        ToolFailure | Toolkit.InvalidToolkit,
        Tool.Requirements<T>
      >
  })
