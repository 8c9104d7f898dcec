/**
 * The inbox (`@agentfx/inbox`) deciding runs that a cluster drives: `ClusterInbox.driver` is
 * its `RunDriver`. A decision is sent to the run's entity (`AgentCluster.decide`, persisted,
 * delivered to the runner that owns the run's conversation); the page is told once the run was
 * claimed (the store's record names the decider), then each step of the run as the runner that
 * drives it emits it (`AgentCluster.watch`, decision 171) to its stop, and which runner drives it
 * (`RunLocation`). Events lost with a runner that was killed are told (`EventsLost`), and the run
 * goes on on the runner that took it over.
 *
 * @since 0.1.0
 */
import type { Agent, Decision } from "@agentfx/core"
import type { AgentError } from "@agentfx/core"
import { RunStore } from "@agentfx/core"
import type { RunDriver } from "@agentfx/inbox"
// a value import of the inbox only here: this entry point is for the inbox's users (its optional peer)
import { LiveEvent } from "@agentfx/inbox"
import type { Sharding } from "effect/cluster/Sharding"
import { Clock, Duration, Effect, Fiber, Option, Schedule, Stream } from "effect"
import * as AgentCluster from "./AgentCluster.js"
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
  const entities = new Map<string, AgentCluster.AgentEntity<any, any, any>>()
  const entityOf = (agent: Agent.Any) => {
    let entity = entities.get(agent.name)
    if (entity === undefined) entities.set(agent.name, entity = AgentCluster.make(agent))
    return entity
  }

  const resume: RunDriver.RunDriver["resume"] = (agent, paused, decision, decidedBy) =>
    Stream.unwrap(Effect.gen(function*() {
      const reply = yield* Effect.forkScoped(
        AgentCluster.decide(entityOf(agent), paused.runId, decision, { revision: paused.version, decidedBy }).pipe(Effect.mapError(asResumeError))
      )
      const first = yield* Effect.raceFirst(
        Effect.map(Fiber.join(reply), (outcome) => ({ claim: Option.none<RunStore.RunRecord>(), outcome: Option.some(outcome) })),
        Effect.map(claimOf(paused, decidedBy, poll), (claim) => ({ claim: Option.some(claim), outcome: Option.none<RunOutcome.RunOutcome>() }))
      )
      // answered before the store was read: the run was claimed (its reply says how it went on); the claim's time from the record
      const claim = Option.isSome(first.claim) ? first.claim.value : yield* readClaim(paused.runId)
      const resumed = yield* resumedEvent(agent, paused, decision, decidedBy, claim)
      const ending = Option.isSome(first.outcome)
        ? Effect.succeed(first.outcome.value)
        : Fiber.join(reply)
      const fromReply = Stream.fromEffect(Effect.matchEffect(ending, {
        onFailure: (error) => Effect.map(Clock.currentTimeMillis, (timestamp) => failedEvent(paused, timestamp, error._tag, error.message)),
        onSuccess: (outcome) => finalEvent(paused, outcome)
      }))
      // the steps, from the runner that drives the run (the segment its decision on this pause drives), to the stop;
      // the claim's own event is the one above (the watched RunResumed names no decider). A watch that fails ends with the reply.
      let stopped = false
      const steps = AgentCluster.watch(entityOf(agent), paused.runId, { from: paused.version }).pipe(
        Stream.mapEffect((watched) => liveEvent(paused, watched)),
        Stream.filter((event): event is LiveEvent.LiveEvent => event !== undefined),
        Stream.tap((event) => Effect.sync(() => void (stopped ||= event.runId === paused.runId && LiveEvent.isFinal(event)))),
        Stream.catch(() => Stream.empty)
      )
      return Stream.concat(Stream.make(resumed), Stream.concat(steps, Stream.suspend(() => stopped ? Stream.empty : fromReply)))
    })).pipe(Stream.provideContext(context))

  return {
    resume,
    location: (record) =>
      RunLocation.of(record).pipe(
        Effect.map(Option.map(({ runner }) => runner)),
        Effect.catch(() => Effect.succeed(Option.none<string>())),
        Effect.provide(context)
      )
  }
})

/** The record once the decision was claimed by `decidedBy` (past the pause it was made on); polled until then, or until the reply wins the race. */
const claimOf = (paused: RunStore.RunRecord, decidedBy: string, poll: Duration.Duration) =>
  Effect.flatMap(RunStore.RunStore, (store) =>
    store.get(paused.runId).pipe(
      // a failed read is read again: the runner's reply ends the wait whatever the store says
      Effect.catch(() => Effect.succeed(Option.none<RunStore.RunRecord>())),
      Effect.flatMap((record) =>
        Option.isSome(record) && record.value.version > paused.version && record.value.decidedBy === decidedBy
          ? Effect.succeed(record.value)
          : Effect.fail("unclaimed" as const)
      ),
      Effect.retry(Schedule.spaced(poll)),
      Effect.orDie
    ))

const readClaim = (runId: string) =>
  Effect.flatMap(RunStore.RunStore, (store) => store.get(runId)).pipe(
    Effect.map(Option.getOrUndefined),
    Effect.catch(() => Effect.succeed(undefined))
  )

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
    }
  })

/** A failure of the decision's delivery or a refusal, as a resume's error. */
const asResumeError = (
  error: Effect.Error<ReturnType<typeof AgentCluster.decide>>
): AgentError.ResumeError => {
  switch (error._tag) {
    case "RunAlreadyResumed":
    case "RunNotFound":
    case "StoreError":
      return error
    case "Refused":
      return new RunStore.StoreError({ message: `The runner refused the decision (${error.reason}): ${error.message}` })
    default:
      return new RunStore.StoreError({ message: `The decision could not be delivered to the cluster (${error._tag}): ${describe(error)}` })
  }
}

const describe = (error: unknown) =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" && error.message !== ""
    ? error.message
    : String(error)
