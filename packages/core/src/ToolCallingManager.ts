/**
 * How a batch of tool calls is scheduled: one after another, all at once, or through a
 * bulkhead of `permits`. Chosen by providing a Layer; sequential when none is provided.
 *
 * @since 0.1.0
 */
import type { Duration } from "effect"
import { Context, Data, Effect, Either, Layer, Option } from "effect"
import { Bulkhead } from "./internal/bulkhead.js"
import { executeCalls } from "./internal/executor.js"
import { validateTimeout } from "./internal/options.js"
import type * as ToolCall from "./ToolCall.js"
import type * as Toolkit from "./Toolkit.js"

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
export class ToolCallingManager extends Context.Reference<ToolCallingManager>()(
  "@agentfx/core/ToolCallingManager",
  { defaultValue: (): ToolCallingManager.Service => makeService("sequential", 1, Option.none(), (self) => self) }
) {}

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
  readonly defaultTimeout?: Duration.DurationInput
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

const makeService = (
  mode: ToolCallingManager.Service["mode"],
  concurrency: ToolCallingManager.Service["concurrency"],
  defaultTimeout: Option.Option<Duration.Duration>,
  withPermit: ToolCallingManager.Service["withPermit"]
): ToolCallingManager.Service => ({ mode, concurrency, defaultTimeout, withPermit })

const checkOptions = (
  options: Options | undefined,
  problems: Array<string>
): Option.Option<Duration.Duration> =>
  options?.defaultTimeout === undefined ? Option.none() : Either.match(validateTimeout(options.defaultTimeout, "defaultTimeout"), {
    onLeft: (problem) => {
      problems.push(problem)
      return Option.none()
    },
    onRight: Option.some
  })

const layerFrom = (
  build: (problems: Array<string>) => Effect.Effect<ToolCallingManager.Service>
): Layer.Layer<ToolCallingManager, InvalidManagerOptions> =>
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
export const sequential = (options?: Options): Layer.Layer<ToolCallingManager, InvalidManagerOptions> =>
  layerFrom((problems) => Effect.succeed(makeService("sequential", 1, checkOptions(options, problems), (self) => self)))

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
export const unbounded = (options?: Options): Layer.Layer<ToolCallingManager, InvalidManagerOptions> =>
  layerFrom((problems) =>
    Effect.succeed(makeService("unbounded", "unbounded", checkOptions(options, problems), (self) => self))
  )

/**
 * Calls run concurrently, at most `permits` at a time across **every run that uses this
 * Layer** (a bulkhead): the `Semaphore` is created once when the Layer is built. A permit
 * is held for one attempt of a handler and released on success, failure, timeout and
 * interruption; retry delays hold no permit. A tool's timeout starts when it has its
 * permit: queueing does not count against it.
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
): Layer.Layer<ToolCallingManager, InvalidManagerOptions> =>
  layerFrom((problems) => {
    const defaultTimeout = checkOptions(options, problems)
    if (!Number.isInteger(options.permits) || options.permits < 1) {
      problems.push(`permits ${options.permits} is not a positive integer`)
      return Effect.succeed(makeService("bounded", "unbounded", defaultTimeout, (self) => self))
    }
    const bulkhead = new Bulkhead(options.permits)
    return Effect.succeed(makeService("bounded", "unbounded", defaultTimeout, bulkhead.withPermit))
  })

/**
 * Runs a batch of calls with the current manager and returns one result per call, in call
 * order. One call's timeout or failure leaves the others' results intact; a call naming an
 * unknown tool gets a `semantic` failure. Interrupting the batch interrupts every running
 * call (their finalizers run) and is not turned into results. Handlers see an empty state
 * snapshot, and `Tool.result` writes are dropped: run state belongs to an agent run.
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
 * const program = Effect.gen(function*() {
 *   const toolkit = yield* Toolkit.make(echo)
 *   return yield* ToolCallingManager.executeBatch(toolkit, [
 *     { id: "1", name: "echo", args: { text: "a" } },
 *     { id: "2", name: "echo", args: { text: "b" } }
 *   ])
 * }).pipe(Effect.provide(ToolCallingManager.unbounded()))
 * ```
 *
 * @since 0.1.0
 * @category execution
 */
export const executeBatch = <R>(
  toolkit: Toolkit.Toolkit<R>,
  calls: ReadonlyArray<ToolCall.ToolCall>
): Effect.Effect<Array<ToolCall.Result>, never, R> =>
  Effect.flatMap(
    ToolCallingManager,
    (manager) =>
      executeCalls(
        toolkit,
        calls,
        manager,
        {},
        undefined,
        undefined,
        (executed) => Effect.succeed((Array.isArray(executed) ? executed : [executed]).map((e) => e.result))
      )
  )
