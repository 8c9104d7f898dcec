/**
 * The handler of an agent's entity, one per entity (a conversation, or an ephemeral run) on
 * the runner that owns it. Starts and decisions drive the entity's runs one at a time, in the
 * order they arrived (a conversation's turns in order); a cancel does not wait for them. A start
 * on a conversation of an agent whose running turn a newer message steers or cancels does not
 * wait either: the conversation is then held by its turn (`conversationLock.ts`), and the core's
 * policy answers it (decision 175).
 *
 * A message is redelivered when the runner that was handling it crashed. The run store tells
 * what had happened: no record — the run never started, start it; `running` — its driver
 * died (nothing else drives this entity's runs: the entity is the only one, one at a time),
 * continue it with the crash rule (`Agent.recover`: recorded results kept, a call cut off runs
 * again only if its tool is idempotent); paused or ended — answer with what the record says.
 */
import type { AgentExit, ChatModel } from "@agentfx/core"
import { Agent, AgentEvent, RunStore } from "@agentfx/core"
import { Entity } from "effect/cluster"
import type { Context } from "effect"
import { Cause, Deferred, Effect, Exit, Fiber, Option } from "effect"
import { identity } from "effect/Function"
import { RunLocation } from "../RunLocation.js"
import type * as RunOutcome from "../RunOutcome.js"
import * as ConversationLock from "./conversationLock.js"
import * as Outcome from "./outcome.js"
import { owned } from "./ownedStore.js"
import * as Feeds from "./feeds.js"
import type { Cancel, Decide, Start, Watch } from "./protocol.js"
import * as Watching from "./watch.js"
import { entityIdOf } from "./watch.js"
import * as RunOptions from "./runOptions.js"
import * as Written from "./written.js"

type StartPayload = (typeof Start)["payloadSchema"]["Type"]
type DecidePayload = (typeof Decide)["payloadSchema"]["Type"]
type CancelPayload = (typeof Cancel)["payloadSchema"]["Type"]

/** One at a time, in the order `run` was called (Effect's semaphore wakes its waiters in no order). */
export const makeTurns = () => {
  let last: Deferred.Deferred<void> | undefined
  return <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const previous = last
      const mine = Deferred.makeUnsafe<void>()
      last = mine
      const waitPrevious = previous === undefined ? Effect.void : Deferred.await(previous)
      let waited = false
      // the next turn waits for this one, and for the previous one should this one be interrupted while
      // waiting (a turn that waited holds no reference to the previous: the chain does not grow)
      return Effect.ensuring(
        Effect.andThen(Effect.tap(waitPrevious, Effect.sync(() => void (waited = true))), self),
        Effect.suspend(() => {
          if (waited && last === mine) last = undefined
          return Deferred.completeWith(mine, waited ? Effect.void : waitPrevious)
        })
      )
    })
}

/** Turns: one at a time, in the order they were asked for. */
export type Turns = ReturnType<typeof makeTurns>

/**
 * The turns of each entity on one runner, shared by the entity's instances: the engine can
 * build a new instance of an entity while the one it is passivating still drives a run (a
 * message that arrived in the reaper's tick), and the new instance's turns wait for it. An
 * entity's entry lives while it has turns in flight.
 */
export const makeRunnerTurns = () => {
  const byEntity = new Map<string, { readonly turns: Turns; inFlight: number }>()
  return (entityId: string): Turns => (self) =>
    Effect.suspend(() => {
      let entry = byEntity.get(entityId)
      if (entry === undefined) byEntity.set(entityId, entry = { turns: makeTurns(), inFlight: 0 })
      const mine = entry
      mine.inFlight++
      return Effect.ensuring(
        mine.turns(self),
        Effect.sync(() => {
          if (--mine.inFlight === 0 && byEntity.get(entityId) === mine) byEntity.delete(entityId)
        })
      )
    })
}

/**
 * `store` as a decision of entity `entityId` reads run `runId`: telling `paused` the version of
 * each record it reads while paused — what the run's segment is keyed by (decision 174: the
 * resume's own read, not one of its own) — and finding no record of a run of another entity (a
 * client sent the decision where the run is not: it reads the record and sends it again).
 */
const pausedRead = (store: RunStore.RunStore.Service, entityId: string, runId: string, paused: (version: number) => void): RunStore.RunStore.Service => ({
  ...store,
  get: (id) =>
    id !== runId ? store.get(id) : Effect.map(store.get(id), (record) => {
      if (Option.isNone(record)) return record
      if (entityIdOf(record.value) !== entityId) return Option.none()
      if (record.value.status === "paused") paused(record.value.version)
      return record
    })
})

/** What names a segment for its watchers: known at once (a start's), or from the version of the paused record its body reads first (a decision's). */
type SegmentKey = string | ((pausedAt: number | undefined) => string)

/**
 * What a run's body is told of its driving: `withdraw` drops the start's `RunStarted` kept back
 * (the start was refused before anything was written); `fromMemory` tells whether the run's
 * paused record was read from what this entity wrote (not from the store) — and forgets that it
 * was, so that a decision refused after such a read is made again on the store's record.
 */
interface Driving {
  readonly withdraw: () => void
  readonly fromMemory: () => boolean
}

/** A read of the store whose failure refuses the message (nothing changed). */
const readStore = <A>(runId: string, read: Effect.Effect<A, RunStore.StoreError>) => Effect.mapError(read, (error) => Outcome.refused(runId, error))

/**
 * The entity's handlers for `agent`, with the runner's services in `context`, its entities'
 * turns in `turnsOf`, and what it keeps of the runs it drives for their watchers in `feeds`.
 */
export const make = Effect.fnUntraced(function*(
  agent: Agent.Any,
  context: Context.Context<ChatModel.ChatModel>,
  turnsOf: (entityId: string) => Turns,
  feeds: Feeds.Feeds = Feeds.make()
) {
  const address = yield* Entity.CurrentAddress
  const runner = yield* Entity.CurrentRunnerAddress
  const store = yield* RunStore.RunStore
  const holder = `${runner.host}:${runner.port}`
  // where this entity is driven, for the inbox: noted once per activation; a failed note stops nothing
  const locations = yield* Effect.serviceOption(RunLocation)
  if (Option.isSome(locations)) {
    yield* locations.value.enter(agent.name, address.entityId, holder).pipe(
      Effect.catch((error) => Effect.logWarning(`The run location of ${address.entityId} was not noted`, error))
    )
  }
  const turns = turnsOf(address.entityId)
  // the paused records this entity wrote: its next decision's read (decision 174, second round)
  const written = Written.make()
  // a conversation whose running turn a newer message steers or cancels: held by its turn, its starts not queued
  const cooperative = address.entityId.startsWith("conversation:") && ConversationLock.cooperative.has(agent.onConversationBusy)
  const driving = new Map<string, { readonly fiber: Fiber.Fiber<RunOutcome.RunOutcome, RunOutcome.Refused>; cancelledBy?: string | undefined; cancelled: boolean }>()

  /**
   * Drives run `runId` in a fiber that a cancel can interrupt, with the entity's leases held by
   * its ownership; its events are kept as a segment of the run for its watchers (the segment
   * begins with its first event: a message refused before the run moved has none). The
   * segment's key is named when it begins, from the version of the paused record the body read
   * first (a decision's resume reads it before its claim), or none. `body` is given `withdraw`:
   * a run that was refused before anything was written (a start sent again) emitted only its
   * `RunStarted`, which is then dropped, not kept. After the entity's other starts and
   * decisions, unless `queued` is false.
   */
  const drive = (
    runId: string,
    key: SegmentKey,
    body: (driving: Driving) => Effect.Effect<RunOutcome.RunOutcome, RunOutcome.Refused, ChatModel.ChatModel>,
    queued = true
  ) =>
    (queued ? turns : identity)(Effect.suspend(() => {
      let segment: Feeds.Segment | undefined
      return Effect.onInterrupt(driveIn(runId, key, body, (begun) => void (segment = begun)), () =>
        Effect.sync(() => segment !== undefined && !segment.done && feeds.abandon(segment)))
    }))

  /**
   * The segment a decision drives: the one of the pause it names; for a decision that names none,
   * the pause its resume read when its turn came (the one it claims); a decision that found its
   * run not paused, its own.
   */
  const decisionKey = ({ payload, requestId }: Entity.Request<typeof Decide>) => (pausedAt: number | undefined): string => {
    const revision = payload.revision ?? pausedAt
    return revision === undefined ? `decision:${requestId}` : Feeds.keyOf(revision)
  }

  const driveIn = (
    runId: string,
    key: SegmentKey,
    body: (driving: Driving) => Effect.Effect<RunOutcome.RunOutcome, RunOutcome.Refused, ChatModel.ChatModel>,
    begun: (segment: Feeds.Segment) => void
  ) =>
    cooperative
      ? ConversationLock.holding(store, address.entityId, holder, runId, (view) => driveWith(view, runId, key, body, begun))
      : driveWith(owned(store, new Set([address.entityId, `run:${runId}`]), holder), runId, key, body, begun)

  const driveWith = (
    view: RunStore.RunStore.Service,
    runId: string,
    key: SegmentKey,
    body: (driving: Driving) => Effect.Effect<RunOutcome.RunOutcome, RunOutcome.Refused, ChatModel.ChatModel>,
    begun: (segment: Feeds.Segment) => void
  ) =>
    Effect.gen(function*() {
      let pausedAt: number | undefined
      const remembered = written.view(view)
      // a decision's segment is keyed by the paused record it read
      const leased = typeof key === "string" ? remembered : pausedRead(remembered, address.entityId, runId, (version) => void (pausedAt ??= version))
      let segment: Feeds.Segment | undefined
      // a start's RunStarted, kept back until the run's next event: a start sent again is refused by its first write
      let withheld: AgentEvent.AgentEvent | undefined
      const keep = (event: AgentEvent.AgentEvent) => {
        // a recovery's first event is its RunResumed "Recover": the events before it were the lost runner's
        if (segment === undefined) begun(segment = feeds.begin(runId, typeof key === "string" ? key : key(pausedAt), event._tag === "RunResumed" && event.decision === "Recover"))
        feeds.push(segment, { _tag: "Event", event })
      }
      const release = () => {
        if (withheld !== undefined) keep(withheld)
        withheld = undefined
      }
      const observe = (event: AgentEvent.AgentEvent) => {
        if (segment === undefined && event._tag === "RunStarted") return void (withheld = event)
        release()
        keep(event)
      }
      const told: Driving = {
        withdraw: () => void (withheld = undefined),
        fromMemory: () => {
          const was = written.fromMemory(runId)
          if (was) pausedAt = undefined
          return was
        }
      }
      const fiber = yield* body(told).pipe(
        Effect.catchDefect((defect) => Effect.succeed(Outcome.fromDefect(runId, defect))),
        AgentEvent.withSink(observe),
        Effect.provideService(RunStore.RunStore, leased),
        Effect.provide(context),
        Effect.forkChild
      )
      const entry = { fiber, cancelled: false as boolean, cancelledBy: undefined as string | undefined }
      driving.set(runId, entry)
      const exit = yield* Effect.ensuring(Fiber.await(fiber), Effect.sync(() => driving.delete(runId)))
      const outcome: Exit.Exit<RunOutcome.RunOutcome, RunOutcome.Refused> =
        Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) && entry.cancelled
          ? Exit.succeed(Outcome.fromCancel(runId, entry.cancelledBy))
          : exit
      release()
      if (segment !== undefined) settle(segment, outcome)
      return yield* outcome
    })

  /**
   * A segment's stop for its watchers: a pause or an answer was its last event; a failure or a
   * refusal after its first event is told as the outcome. A driving interrupted (the runner
   * shutting down, its shard lost) is abandoned: its watchers' streams end without a stop, and
   * the segment's next driving (the message redelivered) is theirs to follow.
   */
  const settle = (segment: Feeds.Segment, exit: Exit.Exit<RunOutcome.RunOutcome, RunOutcome.Refused>) => {
    if (Exit.isSuccess(exit)) {
      if (exit.value._tag !== "Completed" && exit.value._tag !== "Paused") feeds.push(segment, { _tag: "Outcome", outcome: exit.value })
      return feeds.stop(segment)
    }
    const refusal = Cause.findErrorOption(exit.cause)
    if (Option.isNone(refusal)) return feeds.abandon(segment)
    feeds.push(segment, { _tag: "Outcome", outcome: Outcome.failedBy(refusal.value) })
    feeds.stop(segment)
  }

  const exitOf = (runId: string, run: Effect.Effect<AgentExit.AgentExit, { readonly _tag: string; readonly message: string }, ChatModel.ChatModel>) =>
    Effect.matchEffect(run, {
      onFailure: (error) => Outcome.fromError(runId, error),
      onSuccess: (exit) => Outcome.fromExit(agent, exit)
    })

  /**
   * A start runs the run: its first write refuses a run id the store has or had (the record's
   * insert, atomically; a conversation's turn reads it first, once it holds the conversation and
   * before it writes anything). Only then is the record read, to tell a start sent again apart.
   */
  const start = ({ conversationId, input, runId, ...carried }: StartPayload) => ({ withdraw }: Driving) =>
    Effect.flatMap(RunOptions.decode(agent, runId, carried), (options) =>
      exitOf(runId, Agent.run(agent, { ...options, runId, input, ...(conversationId === undefined ? {} : { conversationId }) }))).pipe(
        Effect.catchIf((refusal) => refusal.reason === "InvalidRunInput", (refusal) =>
          Effect.andThen(Effect.sync(withdraw), startedBefore({ conversationId, runId }, refusal)))
      )

  /**
   * A start refused as invalid: maybe its message, sent again or redelivered after a crash. The
   * record says what happened: none — the refusal stands, unless the run finished and was
   * forgotten but for its ending (a SQL store keeps finished records whole); another agent's or
   * conversation's run — the id is taken; `running` — its driver died (nothing else drives this
   * entity's runs), continue it with the crash rule; paused or ended — answer with the record.
   */
  const startedBefore = Effect.fnUntraced(function*({ conversationId, runId }: Pick<StartPayload, "conversationId" | "runId">, refusal: RunOutcome.Refused) {
    const record = yield* readStore(runId, store.get(runId))
    if (Option.isNone(record)) {
      const finished = yield* readStore(runId, store.finished(runId))
      return Option.isSome(finished) ? Outcome.fromFinished(runId, finished.value) : yield* refusal
    }
    if (record.value.agent !== agent.name || (conversationId !== undefined && record.value.conversationId !== conversationId)) {
      return yield* Outcome.fromError(runId, Outcome.runIdTaken(runId))
    }
    return record.value.status === "running" ? yield* exitOf(runId, Agent.recover(agent, runId)) : Outcome.fromRecord(record.value)
  })

  /**
   * A decision finds its run not paused (the resume read the record and refused, nothing
   * changed): maybe its message, redelivered after a crash. The record says what happened:
   * `running` — the resume it carried was cut off (nothing else drives this entity's runs),
   * continue it with the crash rule; ended after this very message's claim (its reply was not
   * stored) — answer with how it ended; anything else, a second decision by the same person
   * included — the refusal stands. The claim records the message's id (`decisionId`); a record
   * claimed before ids were recorded is told by who decided, as it was then.
   */
  const redelivered = Effect.fnUntraced(function*({ decidedBy, runId }: DecidePayload, decisionId: string, refusal: RunOutcome.Refused) {
    const record = yield* readStore(runId, store.get(runId))
    if (Option.isNone(record) || record.value.agent !== agent.name) return yield* refusal
    const { status } = record.value
    if (status === "running") return yield* exitOf(runId, Agent.recover(agent, runId))
    const claimedByThis = record.value.decisionId === undefined
      ? decidedBy !== undefined && record.value.decidedBy === decidedBy
      : record.value.decisionId === decisionId
    if ((status === "completed" || status === "failed") && claimedByThis) return Outcome.fromRecord(record.value)
    return yield* refusal
  })

  // the resume reads the record first and refuses a run that is not paused before it changes
  // anything: only then is the record read again, to tell a redelivered decision apart. A
  // message keeps its request id (and its payload) when redelivered, and no other message has it.
  // A record this entity paused is read from what its pause wrote (`written.ts`): a refusal
  // before the claim (the record moved since, outside this entity) wrote nothing, and the
  // decision is made again on the store's record.
  const decide = ({ payload, requestId }: Pick<Entity.Request<typeof Decide>, "payload" | "requestId">) => ({ fromMemory }: Driving): Effect.Effect<RunOutcome.RunOutcome, RunOutcome.Refused, ChatModel.ChatModel> => {
    const decisionId = payload.decisionId ?? String(requestId)
    return exitOf(
      payload.runId,
      Agent.resume(agent, payload.runId, payload.decision, {
        decisionId,
        ...(payload.decidedBy === undefined ? {} : { decidedBy: payload.decidedBy }),
        ...(payload.revision === undefined ? {} : { revision: payload.revision })
      })
    ).pipe(Effect.catch((refusal) =>
      fromMemory()
        ? decide({ payload, requestId })({ fromMemory: () => false, withdraw: () => {} })
        : refusal.reason === "RunAlreadyResumed"
        ? redelivered(payload, decisionId, refusal)
        : Effect.fail(refusal)
    ))
  }

  const watch = Watching.make(agent, feeds, store, address)

  const cancel = Effect.fnUntraced(function*({ cancelledBy, runId }: CancelPayload) {
    written.forget(runId)
    yield* Agent.cancel(agent, runId, cancelledBy === undefined ? {} : { cancelledBy }).pipe(
      Effect.mapError((error) => Outcome.refused(runId, error))
    )
    const entry = driving.get(runId)
    if (entry !== undefined) {
      entry.cancelled = true
      entry.cancelledBy = cancelledBy
      yield* Fiber.interrupt(entry.fiber)
    }
  })

  return {
    Start: (request: Entity.Request<typeof Start>) => drive(request.payload.runId, Feeds.keyOf(undefined), start(request.payload), !cooperative),
    Decide: (request: Entity.Request<typeof Decide>) => drive(request.payload.runId, decisionKey(request), decide(request)),
    Cancel: (request: Entity.Request<typeof Cancel>) => cancel(request.payload),
    Watch: (request: Entity.Request<typeof Watch>) => watch(request.payload)
  }
})
