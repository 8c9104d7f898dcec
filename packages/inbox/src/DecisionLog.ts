/**
 * Who decided which run, when, and how: the inbox writes an entry when a decision's resume
 * wins the run's claim (the run store records who and when, `decidedBy` and `decidedAt`, with
 * the claim; the log adds what). A second person deciding the same run is told who and when.
 *
 * @since 0.1.0
 */
import type { Decision } from "@agentfx/core"
import { Context, Effect, Option } from "effect"

/**
 * One decision that resumed a run. `decidedAt`: `Clock` milliseconds of the claim (the record's `decidedAt`).
 *
 * @example
 * ```ts
 * import type { DecisionLog } from "@agentfx/inbox"
 *
 * const line = (e: DecisionLog.Entry) => `${e.decidedBy} decided ${e.runId} (${e.decision._tag}) at ${new Date(e.decidedAt).toISOString()}`
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly runId: string
  readonly agent: string
  readonly decidedBy: string
  readonly decidedAt: number
  readonly decision: Decision.Encoded
}

/**
 * The log. A `Context.Reference`: without a Layer, a process-wide in-memory log keeping the
 * latest {@link capacity} entries.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { DecisionLog } from "@agentfx/inbox"
 *
 * const last = Effect.flatMap(DecisionLog.DecisionLog, (log) => log.latest("run-1"))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export const DecisionLog: Context.Reference<DecisionLog.Service> = Context.Reference<DecisionLog.Service>("@agentfx/inbox/DecisionLog", {
  defaultValue: () => makeMemory()
})

/**
 * @since 0.1.0
 * @category services
 */
export declare namespace DecisionLog {
  /**
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /** Keeps an entry. A record that fails (a defect) is logged by the inbox: the decision and its run go on. */
    readonly record: (entry: Entry) => Effect.Effect<void>
    /** The latest decision that resumed the run, if the log still has it. */
    readonly latest: (runId: string) => Effect.Effect<Option.Option<Entry>>
    /** Every entry kept, oldest first. */
    readonly entries: Effect.Effect<ReadonlyArray<Entry>>
  }
}

/**
 * How many entries the in-memory log keeps; the oldest go first.
 *
 * @example
 * ```ts
 * import { DecisionLog } from "@agentfx/inbox"
 *
 * console.log(`the in-memory log keeps ${DecisionLog.capacity} decisions`)
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const capacity = 10_000

/**
 * A fresh in-memory log.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { DecisionLog } from "@agentfx/inbox"
 *
 * const LogLive = Layer.sync(DecisionLog.DecisionLog, DecisionLog.makeMemory)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (): DecisionLog.Service => {
  const log: Array<Entry> = []
  return {
    record: (entry) =>
      Effect.sync(() => {
        log.push(entry)
        if (log.length > capacity) log.splice(0, log.length - capacity)
      }),
    latest: (runId) =>
      Effect.sync(() => {
        for (let i = log.length - 1; i >= 0; i--) if (log[i]!.runId === runId) return Option.some(log[i]!)
        return Option.none()
      }),
    entries: Effect.sync(() => log.slice())
  }
}
