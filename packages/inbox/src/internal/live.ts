/**
 * The runs this inbox resumed, and their events: a resume runs in a fiber of the inbox's own
 * scope (a browser that goes away does not stop a decided run), its events are kept per run
 * and handed to every subscriber — those so far, then the rest as they come — until the run
 * completes, pauses again or fails.
 */
import type { AgentError } from "@agentfx/core"
import { Agent, Decision, RunStore } from "@agentfx/core"
import type { RunDriver } from "../RunDriver.js"
import type { Scope } from "effect"
import { Cause, Clock, Context, Deferred, Effect, Exit, Option, Queue, Schema, Stream } from "effect"
import { DecisionLog } from "../DecisionLog.js"
import * as LiveEvent from "../LiveEvent.js"

/** An event with its Server-Sent Events id: `<generation>-<index>`. */
export interface Numbered {
  readonly id: string
  readonly event: LiveEvent.LiveEvent
}

interface Live {
  readonly runId: string
  readonly conversationId: string
  /** The revision of the pause whose decision this is. */
  readonly revision: number
  readonly generation: number
  readonly events: Array<LiveEvent.LiveEvent>
  readonly listeners: Set<Queue.Queue<Numbered>>
  final: boolean
}

/**
 * What followers are told of a defect: a fixed message, as core tells a model of a tool's
 * defect (its own message may hold anything — a query, a credential); the cause is logged.
 */
export const unexpected = { _tag: "Defect", message: "The run failed unexpectedly" } as const

/** How many finished runs keep their events for a late subscriber; the oldest go first. */
export const finishedKept = 100

export interface LiveRuns {
  /**
   * Resumes the paused run of `paused` in the background, from the record's checkpoint: the
   * claim holds only while the run is still at that record's revision (decided and paused
   * again since, it is `RunAlreadyResumed`). Succeeds with the time of its claim (the record's
   * `decidedAt`) once the resume claimed the run (the decision is then in the `DecisionLog`),
   * or fails with the resume's refusal (nothing was consumed).
   */
  readonly resume: (
    agent: Agent.Any,
    paused: RunStore.RunRecord,
    decision: Decision.Decision,
    decidedBy: string
  ) => Effect.Effect<number, AgentError.ResumeError>
  /**
   * The run's events after `lastEventId` (all of them without one), ending with its final event;
   * `None` when this inbox has not resumed it — or, given `revision`, not from its pause at that revision.
   */
  readonly subscribe: (
    runId: string,
    lastEventId: string | undefined,
    revision: number | undefined
  ) => Effect.Effect<Option.Option<Stream.Stream<Numbered>>>
}

const encodeDecision = Schema.encodeEffect(Decision.Decision)

/**
 * Writes the decision that won the run's claim to the log. A log that fails (one of your own,
 * whose database is gone) is logged: the run was claimed, it goes on, and the decider is
 * answered (the store's record keeps who decided and when).
 */
const record = (agent: Agent.Any, runId: string, decidedBy: string, decision: Decision.Decision, decidedAt: number) =>
  Effect.flatMap(Effect.orDie(encodeDecision(decision)), (encoded) =>
    DecisionLog.use((log) => log.record({ runId, agent: agent.name, decidedBy, decidedAt, decision: encoded }))).pipe(
      Effect.catchCause((cause) => Effect.logError(`The decision on run ${runId} could not be written to the decision log`, cause))
    )

/**
 * The store of `context`, telling `claimed` the record its run's claim (`paused → running`)
 * wrote: the time the store recorded for the decision.
 */
const watchingClaim = (context: Context.Context<any>, runId: string, claimed: (record: RunStore.RunRecord) => void) => {
  const store = Context.get(context, RunStore.RunStore)
  const seen = (id: string, transition: RunStore.Transition, next: RunStore.RunRecord | undefined) =>
    Effect.sync(() => {
      if (next !== undefined && id === runId && transition.from.status === "paused" && transition.to === "running") claimed(next)
    })
  const { transitionHolding } = store
  return Context.add(context, RunStore.RunStore, {
    ...store,
    transition: (id, transition) => Effect.tap(store.transition(id, transition), (next) => seen(id, transition, next)),
    // a durable store's claim also holds its run, in the same step
    ...(transitionHolding === undefined ? {} : {
      transitionHolding: (id, transition, hold) => Effect.tap(transitionHolding(id, transition, hold), ({ record }) => seen(id, transition, record))
    })
  })
}

/**
 * A resume in this process, with the services of `context` (the agents' requirements, the model,
 * the stores): its events as the page follows them, its claim's time on the first.
 */
const resumeHere = (context: Context.Context<any>): RunDriver["resume"] => (agent, paused, decision, decidedBy) => {
  let claim: RunStore.RunRecord | undefined
  return Agent.streamResume(agent, paused.checkpoint, decision, { decidedBy }).pipe(
    Stream.map((event) => {
      const wire = LiveEvent.fromAgentEvent(event, decidedBy)
      // a store that does not time its claims: the time of the resume's first event
      return wire._tag === "RunResumed" && claim?.decidedAt !== undefined ? { ...wire, timestamp: claim.decidedAt } : wire
    }),
    Stream.provideContext(watchingClaim(context, paused.runId, (record) => void (claim = record)))
  ) as Stream.Stream<LiveEvent.LiveEvent, AgentError.ResumeError>
}

/** Runs resumes in `scope` with `driver` — by default in this process, with the services of `context`. */
export const make = (context: Context.Context<any>, scope: Scope.Scope, driver?: RunDriver): LiveRuns => {
  const drive = driver?.resume ?? resumeHere(context)
  const lives = new Map<string, Live>()
  const finished: Array<Live> = []
  let generations = 0

  const push = (live: Live, event: LiveEvent.LiveEvent) => {
    const numbered = { id: `${live.generation}-${live.events.length}`, event }
    live.events.push(event)
    for (const listener of live.listeners) Queue.offerUnsafe(listener, numbered)
    if (!LiveEvent.isFinal(event)) return
    live.final = true
    finished.push(live)
    while (finished.length > finishedKept) {
      const oldest = finished.shift()!
      if (lives.get(oldest.runId) === oldest) lives.delete(oldest.runId)
    }
  }

  const resume: LiveRuns["resume"] = (agent, paused, decision, decidedBy) =>
    Effect.gen(function*() {
      const { runId } = paused
      const claimed = yield* Deferred.make<number, AgentError.ResumeError>()
      let live: Live | undefined
      const publish = (event: LiveEvent.LiveEvent) =>
        Effect.suspend(() => {
          if (live === undefined) {
            live = { runId, conversationId: event.conversationId, revision: paused.version, generation: ++generations, events: [], listeners: new Set(), final: false }
            lives.set(runId, live)
            push(live, event)
            // the first event comes once the run was claimed, at the claim's time
            return Effect.andThen(record(agent, runId, decidedBy, decision, event.timestamp), Deferred.succeed(claimed, event.timestamp))
          }
          push(live, event)
          return Effect.void
        })
      const ended = (exit: Exit.Exit<void, AgentError.ResumeError>): Effect.Effect<void> =>
        Effect.gen(function*() {
          if (live === undefined) {
            // refused before its claim: the caller is told, nothing was consumed
            return yield* Exit.isFailure(exit)
              ? Deferred.failCause(claimed, exit.cause)
              : Deferred.die(claimed, new Error(`The resume of run ${runId} ended without an event`))
          }
          if (Exit.isSuccess(exit) || live.final) return
          const failure = Cause.findErrorOption(exit.cause)
          if (Option.isNone(failure) && !Cause.hasInterruptsOnly(exit.cause)) {
            yield* Effect.logError(`Run ${runId} failed unexpectedly after its claim`, exit.cause)
          }
          push(live, LiveEvent.failed(
            { runId, conversationId: live.conversationId, timestamp: yield* Clock.currentTimeMillis },
            Option.isSome(failure)
              ? { _tag: failure.value._tag, message: failure.value.message }
              : Cause.hasInterruptsOnly(exit.cause)
              ? { _tag: "Interrupted", message: "The inbox stopped while the run was running" }
              : unexpected
          ))
        })
      yield* drive(agent, paused, decision, decidedBy).pipe(
        Stream.runForEach(publish),
        Effect.onExit(ended),
        Effect.forkIn(scope)
      )
      return yield* Deferred.await(claimed)
    })

  const subscribe: LiveRuns["subscribe"] = (runId, lastEventId, revision) =>
    Effect.gen(function*() {
      const queue = yield* Queue.unbounded<Numbered>()
      return yield* Effect.sync(() => {
        const live = lives.get(runId)
        if (live === undefined || (revision !== undefined && revision !== live.revision)) return Option.none()
        const match = lastEventId === undefined ? null : /^(\d+)-(\d+)$/.exec(lastEventId)
        const from = match !== null && Number(match[1]) === live.generation ? Number(match[2]) + 1 : 0
        const replay = live.events.slice(from).map((event, i): Numbered => ({ id: `${live.generation}-${from + i}`, event }))
        if (live.final) return Option.some(Stream.fromIterable(replay))
        live.listeners.add(queue)
        return Option.some(
          Stream.concat(Stream.fromIterable(replay), Stream.fromQueue(queue)).pipe(
            Stream.takeUntil(({ event }) => LiveEvent.isFinal(event)),
            Stream.ensuring(Effect.sync(() => live.listeners.delete(queue)))
          )
        )
      })
    })

  return { resume, subscribe }
}
