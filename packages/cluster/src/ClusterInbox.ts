/**
 * The inbox (`@agentfx/inbox`) deciding runs that a cluster drives: `ClusterInbox.driver` is
 * its `RunDriver`. A decision is sent to the run's entity (`AgentCluster.decide`, persisted,
 * delivered to the runner that owns the run's conversation); the page is told once the run was
 * claimed (the store's record names the decider), then each step of the run as the runner that
 * drives it emits it (`AgentCluster.watch`, decision 171) to its stop, and which runner drives it
 * (`RunLocation`). Events lost with a runner that was killed are told (`EventsLost`), and the run
 * goes on on the runner that took it over. A run decided elsewhere (another inbox process, a chat
 * endpoint) is followed too (`RunDriver.watch`: `GET …/events?revision=<its pause's revision>`).
 *
 * @since 0.1.0
 */
import type { Agent, Decision, RunStore } from "@agentfx/core"
import type { RunDriver } from "@agentfx/inbox"
// a value import of the inbox only here: this entry point is for the inbox's users (its optional peer)
import { LiveEvent } from "@agentfx/inbox"
import type { Sharding } from "effect/cluster/Sharding"
import { Clock, Duration, Effect, Option, Stream } from "effect"
import * as AgentCluster from "./AgentCluster.js"
import * as Decided from "./internal/decided.js"
import * as RunLocation from "./RunLocation.js"
import type * as RunOutcome from "./RunOutcome.js"

/**
 * Options of {@link driver}.
 *
 * @example
 * ```ts
 * import type * as ClusterInbox from "@agentfx/cluster/ClusterInbox"
 *
 * const options: ClusterInbox.Options = { claimPoll: "20 millis" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** How often the run store is read for the decision's claim, until the runner's reply comes. Default 50 milliseconds. */
  readonly claimPoll?: Duration.Input
}

/**
 * The inbox's `RunDriver` for runs a cluster drives, on a cluster member (a client-only one
 * is enough: `ClusterPg.layerClient`, `ClusterSqlite.layerClient`). A refusal comes before any
 * event, nothing consumed, as the core's error (`RunAlreadyResumed` naming who decided,
 * `RunNotFound`); a refusal the core's errors cannot carry from another process (e.g.
 * `UnknownDecision`) comes as a `StoreError` that quotes it.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import * as ClusterPg from "@agentfx/cluster/ClusterPg"
 * import * as ClusterInbox from "@agentfx/cluster/ClusterInbox"
 * import { Inbox } from "@agentfx/inbox"
 * import type { Agent } from "@agentfx/core"
 *
 * declare const support: Agent.Agent
 * const InboxLive = Layer.unwrap(
 *   Effect.map(ClusterInbox.driver(), (driver) => Inbox.layer({ agents: [support], driver }))
 * ).pipe(Layer.provide(ClusterPg.layerClient({ url: process.env.DATABASE_URL! as never })))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const driver = Effect.fnUntraced(function*(
  options?: Options
): Effect.fn.Return<RunDriver.RunDriver, never, Sharding | RunLocation.RunLocation> {
  const context = yield* Effect.context<Sharding | RunLocation.RunLocation>()
  const poll = Duration.fromInputUnsafe(options?.claimPoll ?? "50 millis")
  const entityOf = Decided.entities()

  const resume: RunDriver.RunDriver["resume"] = (agent, paused, decision, decidedBy) =>
    Stream.unwrap(Effect.map(Decided.follow(entityOf(agent), paused, decision, decidedBy, poll), ({ claim, watched }) =>
      // the claim's own event first (the watched RunResumed names no decider), then the steps from the runner that drives the run
      Stream.concat(
        Stream.fromEffect(resumedEvent(agent, paused, decision, decidedBy, claim)),
        watched.pipe(
          Stream.mapEffect((element) => liveEvent(paused, element)),
          Stream.filter((event): event is LiveEvent.LiveEvent => event !== undefined)
        )
      ))).pipe(Stream.provideContext(context))

  const watch: NonNullable<RunDriver.RunDriver["watch"]> = (agent, record, { after, revision }) =>
    AgentCluster.watch(entityOf(agent), record.runId, { from: revision, ...(after === undefined ? {} : { after }) }).pipe(
      Stream.mapEffect((watched) =>
        Effect.map(
          // the claim's event names its decider, read from the record once claimed (the watched RunResumed names none)
          watched._tag === "Event" && watched.event._tag === "RunResumed" && watched.event.runId === record.runId
            ? Effect.map(Decided.readClaim(record.runId), (claim) => LiveEvent.fromAgentEvent(watched.event, claim?.decidedBy))
            : liveEvent(record, watched),
          (event) => event === undefined ? undefined : { id: watched.cursor, event }
        )
      ),
      Stream.filter((numbered): numbered is { readonly id: string; readonly event: LiveEvent.LiveEvent } => numbered !== undefined),
      // a watch that cannot go on (the run's record gone) ends the page's stream: it says what it had
      Stream.catch(() => Stream.empty),
      Stream.provideContext(context)
    )

  return {
    resume,
    watch,
    location: (record) =>
      RunLocation.of(record).pipe(
        Effect.map(Option.map(({ runner }) => runner)),
        Effect.catch(() => Effect.succeed(Option.none<string>())),
        Effect.provide(context)
      )
  }
})

const resumedEvent = (agent: Agent.Any, paused: RunStore.RunRecord, decision: Decision.Decision, decidedBy: string, claim: RunStore.RunRecord | undefined) =>
  Effect.map(Clock.currentTimeMillis, (now): LiveEvent.LiveEvent => ({
    _tag: "RunResumed",
    runId: paused.runId,
    conversationId: paused.conversationId,
    timestamp: claim?.decidedAt ?? now,
    agent: agent.name,
    decision: decision._tag,
    decidedBy
  }))

const failedEvent = (paused: RunStore.RunRecord, timestamp: number, error: string, message: string): LiveEvent.LiveEvent => ({
  _tag: "RunFailed",
  runId: paused.runId,
  conversationId: paused.conversationId,
  timestamp,
  error,
  message
})

/** A watched element of the run as the page's event; none for the watched RunResumed (the claim's event is the driver's). */
const liveEvent = (paused: RunStore.RunRecord, watched: AgentCluster.Watched): Effect.Effect<LiveEvent.LiveEvent | undefined> => {
  switch (watched._tag) {
    case "Event":
      return Effect.succeed(
        watched.event._tag === "RunResumed" && watched.event.runId === paused.runId ? undefined : LiveEvent.fromAgentEvent(watched.event)
      )
    case "Gap":
      return Effect.map(Clock.currentTimeMillis, (timestamp): LiveEvent.LiveEvent => ({
        _tag: "EventsLost",
        runId: paused.runId,
        conversationId: paused.conversationId,
        timestamp,
        message: watched.message
      }))
    case "Outcome":
      return finalEvent(paused, watched.outcome)
  }
}

/** The reply of the runner, as the inbox's last event of the run. */
const finalEvent = (paused: RunStore.RunRecord, outcome: RunOutcome.RunOutcome) =>
  Effect.map(Clock.currentTimeMillis, (timestamp): LiveEvent.LiveEvent => {
    const meta = { runId: paused.runId, conversationId: paused.conversationId, timestamp }
    switch (outcome._tag) {
      case "Completed":
        return { _tag: "RunCompleted", ...meta, text: outcome.text }
      case "Paused":
        return {
          _tag: "RunPaused",
          ...meta,
          kind: outcome.kind,
          pending: outcome.pending.map(({ args, callId, toolName }) => ({ callId, toolName, args: args as never }))
        }
      case "Failed":
        return failedEvent(paused, timestamp, outcome.error, outcome.message)
      case "Ended":
        return outcome.status === "completed"
          ? { _tag: "RunCompleted", ...meta, text: "" }
          : failedEvent(paused, timestamp, "Failed", "The run failed")
      case "Steered": // a start's answer: a decision's reply is never one
        return failedEvent(paused, timestamp, "Steered", `The input joined run ${outcome.takenBy}`)
    }
  })
