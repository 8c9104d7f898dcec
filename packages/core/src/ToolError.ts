/**
 * The typed failures of a tool call, and the class that decides what happens next.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"

/**
 * What a tool failure means for the run:
 * - `transient`: may succeed if tried again (timeouts, rate limits, network). Retried per the tool's `retry`.
 * - `semantic`: the call itself is wrong (bad arguments, not found). Given to the model.
 * - `environment`: something outside needs a person (missing credentials, disk full).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { ToolError } from "@agentfx/core"
 *
 * Schema.is(ToolError.Reason)("environment") // true
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const Reason = Schema.Literals(["transient", "semantic", "environment"])

/**
 * @since 0.1.0
 * @category models
 */
export type Reason = typeof Reason.Type

/**
 * The error a tool handler fails with. Its `reason` decides whether the call is retried
 * (`transient`), handed to the model (`semantic`), or may pause the run (`environment`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ToolError } from "@agentfx/core"
 *
 * const failed = Effect.fail(new ToolError.ToolError({ reason: "semantic", message: "no such city" }))
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolError extends Schema.TaggedError<ToolError>("@agentfx/core/ToolError")("ToolError", {
  reason: Reason,
  message: Schema.String
}) {
  /**
   * True when trying again may succeed (`reason` is `transient`).
   *
   * @since 0.1.0
   */
  get isTransient(): boolean {
    return this.reason === "transient"
  }
}

/**
 * A failure that may succeed if tried again (rate limit, network): retried per the tool's `retry`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ToolError } from "@agentfx/core"
 *
 * const rateLimited = Effect.fail(ToolError.transient("HTTP 429 from the weather API"))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const transient = (message: string): ToolError => new ToolError({ reason: "transient", message })

/**
 * A failure of the call itself (bad arguments, not found): the model is told and may try otherwise.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ToolError } from "@agentfx/core"
 *
 * const notFound = Effect.fail(ToolError.semantic("no city named 'Atlantis'"))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const semantic = (message: string): ToolError => new ToolError({ reason: "semantic", message })

/**
 * A failure only a person can fix (missing credentials, disk full). With
 * `onEnvironmentError: "pause"` the run pauses after the batch.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ToolError } from "@agentfx/core"
 *
 * const noKey = Effect.fail(ToolError.environment("WEATHER_API_KEY is not set"))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const environment = (message: string): ToolError => new ToolError({ reason: "environment", message })

/**
 * A call whose handler ran past its timeout. Always `transient`: it is retried when the tool
 * declares `retry`. The handler's fiber was interrupted and its finalizers ran before this
 * value was produced; in process, synchronous code that never yields is not stopped (see
 * `docs/timeouts.md`); for a tool with `isolation: "worker"` the worker has been terminated.
 *
 * @example
 * ```ts
 * import { Duration } from "effect"
 * import { ToolError } from "@agentfx/core"
 *
 * const timeout = new ToolError.ToolTimeout({ toolName: "search", timeout: Duration.seconds(2) })
 * console.log(timeout.message) // Tool "search" timed out after 2s
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolTimeout extends Schema.TaggedError<ToolTimeout>("@agentfx/core/ToolTimeout")("ToolTimeout", {
  toolName: Schema.String,
  timeout: Schema.DurationFromMillis
}) {
  /**
   * A timeout is always transient.
   *
   * @since 0.1.0
   */
  get reason(): "transient" {
    return "transient"
  }

  /**
   * Always true: a timed-out call may succeed if tried again.
   *
   * @since 0.1.0
   */
  get isTransient(): true {
    return true
  }

  override get message(): string {
    return `Tool "${this.toolName}" timed out after ${Duration.format(this.timeout)}`
  }
}

/**
 * Every way a tool call can fail: its own `ToolError`, or the runtime's `ToolTimeout`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { ToolError } from "@agentfx/core"
 *
 * const json = Schema.encodeSync(ToolError.ToolFailure)(ToolError.transient("HTTP 429"))
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const ToolFailure = Schema.Union([ToolError, ToolTimeout])

/**
 * @since 0.1.0
 * @category models
 */
export type ToolFailure = ToolError | ToolTimeout
