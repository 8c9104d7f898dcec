/**
 * What drives the runs the inbox decides. By default the inbox's own process: a decision is
 * resumed there (`Agent.streamResume`, with the inbox Layer's services) and its events stream to
 * the page. A cluster of runners drives them elsewhere (`@agentfx/cluster`'s
 * `ClusterInbox.driver()`): the decision is sent to the runner that holds the run, and the
 * page is told where it runs.
 *
 * @since 0.2.0
 */
import type { Agent, AgentError, Decision, RunStore } from "@agentfx/core"
import type { Effect, Option, Stream } from "effect"
import type { LiveEvent } from "./LiveEvent.js"

/**
 * A driver of decided runs.
 *
 * @example
 * ```ts
 * import { Effect, Option, Stream } from "effect"
 * import type { RunDriver } from "@agentfx/inbox"
 *
 * const nowhere: RunDriver.RunDriver = {
 *   resume: () => Stream.empty,
 *   location: () => Effect.succeed(Option.none())
 * }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface RunDriver {
  /**
   * Continues the paused run of `paused` with `decision`: the run's events, the first once the
   * run was claimed (its record then names `decidedBy`; the first event's `timestamp` is the
   * claim's time), the last the run's stop (`RunCompleted`, `RunPaused` or `RunFailed`). A
   * refused decision fails the stream before any event, nothing consumed: `RunAlreadyResumed`
   * (someone else decided, or the run moved past `paused.version`), or another of
   * `Agent.resume`'s refusals.
   */
  readonly resume: (
    agent: Agent.Any,
    paused: RunStore.RunRecord,
    decision: Decision.Decision,
    decidedBy: string
  ) => Stream.Stream<LiveEvent, AgentError.ResumeError>
  /** Where the run is driven, for the page (a cluster runner's address); `None` when nowhere in particular. */
  readonly location: (record: RunStore.RunRecord) => Effect.Effect<Option.Option<string>>
  /**
   * Follows a run that this inbox did not decide — decided by another inbox process, a chat
   * endpoint, a program — from wherever it is driven: the events of the decision on its pause at
   * `revision`, each with an id (`after`: the last one seen, to continue after it), to the run's
   * stop; a failure to follow ends the stream. Optional: a driver that cannot see runs it does not
   * drive (the default, this process) has none, and the inbox then has no events of such a run
   * (`NoLiveEvents`).
   */
  readonly watch?: (
    agent: Agent.Any,
    record: RunStore.RunRecord,
    options: { readonly revision: number; readonly after?: string | undefined }
  ) => Stream.Stream<{ readonly id: string; readonly event: LiveEvent }>
}
