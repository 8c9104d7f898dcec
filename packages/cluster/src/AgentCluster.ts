/**
 * An agent served by cluster runners. Each conversation (or each run without one) is an
 * `effect/cluster` entity, `agentfx/<agent name>` / `conversation:<id>` or `run:<id>`: one
 * runner drives it, one turn at a time. Its messages — start, decide, cancel — are stored
 * before they are delivered, and redelivered to the runner that owns the entity after a
 * crash, which continues the run with the crash rule (recorded results kept; a call cut off
 * runs again only if its tool is `idempotent`). The run store stays the authority over a
 * run's state: of two decisions at once, its claim lets one through, the other is refused.
 *
 * @since 0.1.0
 */
import type { ChatModel, Decision } from "@agentfx/core"
import { Agent, AgentError, RunStore } from "@agentfx/core"
import type { ClusterError } from "effect/cluster"
import { Entity } from "effect/cluster"
import type { Sharding } from "effect/cluster/Sharding"
import { Duration, Effect, Fiber, Layer, Option, Schedule, Stream } from "effect"
import { ConversationMismatch } from "./ClusterError.js"
import * as Feeds from "./internal/feeds.js"
import * as Follow from "./internal/follow.js"
import * as Handler from "./internal/handler.js"
import { durationProblem } from "./internal/settings.js"
import * as Protocol from "./internal/protocol.js"
import * as Routes from "./internal/routes.js"
import * as RunOptions from "./internal/runOptions.js"
import { entityIdOf } from "./internal/watch.js"
import type * as RunOutcome from "./RunOutcome.js"
import { Refused } from "./RunOutcome.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@agentfx/cluster/AgentCluster")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * An agent as a cluster entity (see {@link make}).
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentEntity<S extends Agent.Slots, R, A> {
  readonly [TypeId]: TypeId
  readonly agent: Agent.Agent<S, R, A>
  readonly entity: Entity.Entity<`agentfx/${string}`, typeof Protocol.messages[number]>
}

/**
 * The cluster entity of `agent`, of type `agentfx/<agent.name>`: define it once, at module
 * level, in the runners (which serve it with {@link runner}) and in the clients (which send
 * it messages). Processes agree on an agent by its name.
 *
 * @example
 * ```ts
 * import { Agent } from "@agentfx/core"
 * import { AgentCluster } from "@agentfx/cluster"
 *
 * const support = Agent.make({ name: "support" })
 * export const Support = AgentCluster.make(support)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <S extends Agent.Slots, R, A>(agent: Agent.Agent<S, R, A>): AgentEntity<S, R, A> => ({
  [TypeId]: TypeId,
  agent,
  entity: Entity.make(`agentfx/${agent.name}`, Protocol.messages)
})

/**
 * Options of {@link runner}.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunnerOptions {
  /**
   * How long an entity (a conversation, or an ephemeral run) stays in the runner's memory
   * with no message in flight. After it, the engine passivates the entity: its handler,
   * mailbox and fibers go, and a paused run holds nothing in the runner (the run store keeps
   * its state). Its next message — a decision, the conversation's next turn, a cancel — takes
   * it on again (one `RunLocation` note). The engine checks every
   * `max(min(idleTimeout, 30 s), 5 s)`, so an idle entity goes between `idleTimeout` and
   * `idleTimeout` plus that period after its last reply; an entity driving a run (a message
   * in flight) never goes. Default 10 seconds (the engine's own default is 1 minute). A value
   * that is not a duration above zero stops the runner's Layer with a defect naming it.
   */
  readonly idleTimeout?: Duration.Input
}

/** How long an idle entity stays in memory by default (see {@link RunnerOptions.idleTimeout}). */
const defaultIdleTimeout = Duration.seconds(10)

/**
 * Serves `entity` on this runner: the runner drives the runs of the entities (conversations,
 * ephemeral runs) of the shards it owns. Needs the cluster (`ClusterPg.layer`,
 * `ClusterSqlite.layer`: sharding, run store and chat memory on one database), a `ChatModel`,
 * and what the agent's tools need. An entity with no message in flight for `idleTimeout`
 * (default 10 s) leaves memory; its next message takes it on again.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { Agent, ScriptedChatModel } from "@agentfx/core"
 * import { AgentCluster } from "@agentfx/cluster"
 * import * as ClusterSqlite from "@agentfx/cluster/ClusterSqlite"
 *
 * const Support = AgentCluster.make(Agent.make({ name: "support" }))
 * const Runner = AgentCluster.runner(Support, { idleTimeout: "30 seconds" }).pipe(
 *   Layer.provide(ScriptedChatModel.layer([ScriptedChatModel.text("Hello.")])),
 *   Layer.provideMerge(ClusterSqlite.layer({ filename: "agentfx.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const runner = <S extends Agent.Slots, R, A>(
  entity: AgentEntity<S, R, A>,
  options?: RunnerOptions
): Layer.Layer<never, never, Sharding | R | ChatModel.ChatModel> =>
  Layer.unwrap(Effect.suspend(() => {
    const problem = options?.idleTimeout === undefined ? undefined : durationProblem("AgentCluster.runner: idleTimeout", options.idleTimeout)
    if (problem !== undefined) return Effect.die(new Error(problem))
    // one registry per runner: an entity's instances share its turns (the engine may build one while passivating another)
    const turnsOf = Handler.makeRunnerTurns()
    // and one keeping of the runs it drives, for their watchers (an entity's instances share it too)
    const feeds = Feeds.make()
    return entity.entity.toLayer(
      Effect.flatMap(Effect.context<R | ChatModel.ChatModel>(), (context) => Handler.make(entity.agent, context as never, turnsOf, feeds)),
      { concurrency: "unbounded", maxIdleTime: options?.idleTimeout ?? defaultIdleTimeout }
    ).pipe(Effect.succeed)
  })) as Layer.Layer<never, never, Sharding | R | ChatModel.ChatModel>

/**
 * Options of {@link start} and {@link run}: `Agent.run`'s, carried to the runner with the start
 * and checked there as `Agent.run` checks them (a refusal is `Refused`, nothing run). Not
 * `onConversationBusy`: the agent's applies — a conversation's turns wait for each other on its
 * entity (`"fail"`, `"wait"`), or a newer message steers or cancels the running turn (`"steer"`,
 * `"interrupt"`, `"rollback"`: see {@link run}). A `context`
 * policy cannot name a summary model (a service of the sender): the runner's `ChatModel`
 * writes the summary.
 *
 * @example
 * ```ts
 * import type { AgentCluster } from "@agentfx/cluster"
 * const options: AgentCluster.StartOptions = {
 *   input: "Pay the March invoices",
 *   conversationId: "c-42",
 *   budget: { modelCalls: 10 },
 *   settings: { temperature: 0 }
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface StartOptions<S extends Agent.Slots = Agent.Slots>
  extends Pick<Agent.RunOptions<S>, "budget" | "settings" | "toolChoice" | "context">
{
  /** What the person says: text, or text and files (`Part.text`, `Part.image`, `Part.file`). */
  readonly input: Agent.RunOptions<S>["input"]
  /**
   * Initial values of some of the agent's slots, sent encoded with each slot's schema (a slot
   * the agent lacks, or a value its schema refuses, is `Refused` with `InvalidRunInput`).
   */
  readonly state?: Agent.InitialState<S>
  /** Continue this conversation (kept in `ChatMemory`; its turns run one at a time, in order). Without it the run is ephemeral. */
  readonly conversationId?: string
  /**
   * The run's id. Default: a new unique id. A start sent again with the same id and
   * conversation is the same message: it runs once, and both are answered with its reply.
   */
  readonly runId?: string
}

/**
 * The errors of the cluster's client (`effect/cluster`'s): the message could not be stored, or
 * the entity's mailbox is full, or the message is being processed already, or the runner it
 * was sent to no longer owns the entity's shard.
 *
 * @since 0.1.0
 * @category errors
 */
export type ClientError =
  | ClusterError.MailboxFull
  | ClusterError.AlreadyProcessingMessage
  | ClusterError.PersistenceError
  | ClusterError.EntityNotAssignedToRunner

const entityId = (options: { readonly conversationId?: string | undefined; readonly runId: string }) =>
  options.conversationId === undefined ? `run:${options.runId}` : `conversation:${options.conversationId}`

const send = <S extends Agent.Slots, R, A>(entity: AgentEntity<S, R, A>, options: StartOptions<S>, discard: boolean) =>
  Effect.gen(function*() {
    const runId = options.runId ?? crypto.randomUUID()
    const client = yield* entity.entity.client
    const payload = yield* Protocol.checked(Protocol.Start, {
      runId,
      input: options.input,
      ...(options.conversationId === undefined ? {} : { conversationId: options.conversationId }),
      ...yield* RunOptions.encode(entity.agent, runId, options as RunOptions.Options)
    }, runId, "InvalidRunInput")
    const to = entityId({ runId, conversationId: options.conversationId })
    const toEntity = client(to)
    return {
      runId,
      to,
      // a persisted message is stored before its runner is told: a full mailbox after that is delivered
      // (a start), or waited out by sending it again (the same run id: the same message, its reply followed)
      reply: discard
        ? Effect.as(Effect.catchTag(toEntity.Start(payload, { discard: true }), "MailboxFull", () => Effect.void), undefined)
        : Effect.retry(toEntity.Start(payload), { while: (error) => error._tag === "MailboxFull", schedule: mailboxRetry }).pipe(
          Effect.catchTag("Refused", (error) => Effect.fail(steerRefused(error, options.conversationId)))
        )
    }
  })

/** A steered input's refusal (its running turn paused first) as the core's error, naming the paused run. */
const steerRefused = (error: Refused, conversationId: string | undefined): Refused | RunStore.SteerRefused =>
  error.reason === "SteerRefused" && conversationId !== undefined ? new RunStore.SteerRefused({ conversationId, runId: error.runId }) : error

/** How a start whose runner's mailbox was full is sent again. */
const mailboxRetry = Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("2 seconds")]).pipe(
  Schedule.upTo({ duration: "1 minute" })
)

/**
 * Starts a run and returns its id once its start is stored (the runner that owns its entity
 * drives it; a crash of that runner hands it to another). Works in a client-only process.
 *
 * @example
 * ```ts
 * import { Effect, Schedule } from "effect"
 * import { AgentCluster } from "@agentfx/cluster"
 *
 * declare const Support: AgentCluster.AgentEntity<{}, never, undefined>
 * const program = Effect.gen(function*() {
 *   const { runId } = yield* AgentCluster.start(Support, { input: "Refund order 42", conversationId: "c-1" })
 *   return runId
 * })
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const start = <S extends Agent.Slots, R, A>(
  entity: AgentEntity<S, R, A>,
  options: StartOptions<S>
): Effect.Effect<{ readonly runId: string }, ClientError | Refused, Sharding> =>
  Effect.flatMap(send(entity, options, true), ({ reply, runId }) => Effect.as(reply as Effect.Effect<unknown, ClientError | Refused>, { runId }))

/**
 * Starts a run and waits for its reply: `Completed`, `Paused` (decide it with {@link decide}),
 * `Failed`. The reply is stored: a run whose runner crashed is answered by the runner that
 * continued it. A start refused before it ran (`InvalidRunInput`, `ConversationBusy`) fails
 * with `Refused`.
 *
 * While a turn runs on the conversation, the agent's `onConversationBusy` says what the start
 * does (decision 175), as on one process: `"fail"` and `"wait"` queue it behind that turn on the
 * conversation's entity; `"steer"` adds its input to the running turn before its next model call,
 * answered `Steered` (`takenBy`: the run that answers it) — or, when that turn paused first,
 * fails with `RunStore.SteerRefused` naming the paused run, nothing written; `"interrupt"` and
 * `"rollback"` cancel the running turn (its own reply: `Failed` with error `TurnInterrupted`)
 * and run this one.
 *
 * @example
 * ```ts
 * import { Effect, Schedule } from "effect"
 * import { AgentCluster } from "@agentfx/cluster"
 *
 * declare const Support: AgentCluster.AgentEntity<{}, never, undefined>
 * const program = AgentCluster.run(Support, { input: "Refund order 42" }).pipe(
 *   Effect.tap((outcome) => Effect.log(outcome._tag))
 * )
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const run = <S extends Agent.Slots, R, A>(
  entity: AgentEntity<S, R, A>,
  options: StartOptions<S>
): Effect.Effect<RunOutcome.RunOutcome, ClientError | Refused | RunStore.SteerRefused, Sharding> =>
  Effect.flatMap(send(entity, options, false), ({ reply, runId, to }) =>
    Effect.tap(reply as Effect.Effect<RunOutcome.RunOutcome, ClientError | Refused | RunStore.SteerRefused>, (outcome) =>
      Effect.sync(() => outcome._tag === "Paused" && outcome.runId === runId && Routes.remember(entity.entity, runId, to))))

/**
 * Options of {@link decide}: `Agent.resume`'s — the pause's `revision`, who decided
 * (`decidedBy`), and the decision's id (`decisionId`, recorded by its claim as the record's
 * `decisionId`: give a unique one to tell your decision's claim from another's in the store;
 * default the message's id).
 *
 * @since 0.1.0
 * @category models
 */
export interface DecideOptions extends Agent.ResumeOptions {}

/** The entity a run belongs to, read from the run store. */
const entityOfRun = (runId: string) =>
  Effect.flatMap(RunStore.RunStore, (store) => store.get(runId)).pipe(
    Effect.flatMap((record) =>
      record._tag === "Some"
        ? Effect.succeed(record.value.ephemeral ? `run:${runId}` : `conversation:${record.value.conversationId}`)
        : Effect.fail(new AgentError.RunNotFound({ runId }))
    )
  )

/** A refusal as the core's error when it is one callers match on. */
const typed = (error: Refused): AgentError.RunAlreadyResumed | AgentError.RunNotFound | Refused =>
  error.reason === "RunAlreadyResumed" && error.status !== undefined
    ? new AgentError.RunAlreadyResumed({ runId: error.runId, status: error.status, decidedBy: error.decidedBy })
    : error.reason === "RunNotFound"
    ? new AgentError.RunNotFound({ runId: error.runId })
    : error

/**
 * Decides a paused run, from any process, and waits for its reply (the run's next pause, its
 * answer or its failure). The run store's claim is the authority: of two decisions at once,
 * exactly one runs; the other fails with `RunAlreadyResumed` naming who decided. A decision
 * refused before the claim (`UnknownDecision`, `IncompleteDecisions`, …) fails with `Refused`
 * and leaves the run paused. A run this process saw paused (the reply of `run` or `decide`) is
 * sent to its entity at once; any other after a read of its record, to find its entity.
 *
 * @example
 * ```ts
 * import { Effect, Schedule } from "effect"
 * import { Decision } from "@agentfx/core"
 * import { AgentCluster } from "@agentfx/cluster"
 *
 * declare const Support: AgentCluster.AgentEntity<{}, never, undefined>
 * const program = AgentCluster.decide(Support, "run-1", Decision.approveAll(), { decidedBy: "ada", revision: 3 }).pipe(
 *   Effect.catchTag("RunAlreadyResumed", (e) => Effect.log(`decided by ${e.decidedBy}`))
 * )
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const decide = <S extends Agent.Slots, R, A>(
  entity: AgentEntity<S, R, A>,
  runId: string,
  decision: Decision.Decision,
  options?: DecideOptions
): Effect.Effect<
  RunOutcome.RunOutcome,
  AgentError.RunAlreadyResumed | AgentError.RunNotFound | Refused | RunStore.StoreError | ClientError,
  Sharding
> =>
  Effect.gen(function*() {
    const payload = yield* Protocol.checked(Protocol.Decide, {
      runId,
      decision,
      ...(options?.revision === undefined ? {} : { revision: options.revision }),
      ...(options?.decidedBy === undefined ? {} : { decidedBy: options.decidedBy }),
      ...(options?.decisionId === undefined ? {} : { decisionId: options.decisionId })
    }, runId, "DecisionMismatch")
    const client = yield* entity.entity.client
    const decided = (to: string) =>
      client(to).Decide(payload).pipe(
        Effect.tap((outcome) => Effect.sync(() => outcome._tag === "Paused" ? Routes.remember(entity.entity, runId, to) : Routes.forget(entity.entity, runId))),
        Effect.tapError(() => Effect.sync(() => Routes.forget(entity.entity, runId)))
      )
    const read = Effect.flatMap(entityOfRun(runId), decided)
    // a run this process saw paused: to its entity at once; a run of another entity there is not found, then read
    const routed = Routes.find(entity.entity, runId)
    return yield* (routed === undefined
      ? read
      : Effect.catchIf(decided(routed), (error) => error._tag === "Refused" && error.reason === "RunNotFound", () => read)).pipe(
        Effect.catchTag("Refused", (error) => Effect.fail(typed(error)))
      )
  })

/**
 * Cancels a run, from any process: a paused run ends failed; a running one ends failed and is
 * interrupted on the runner driving it (its reply is `Failed` with error `Cancelled`). A run
 * that already ended is `RunAlreadyResumed`; an unknown one `RunNotFound`.
 *
 * @example
 * ```ts
 * import { AgentCluster } from "@agentfx/cluster"
 *
 * declare const Support: AgentCluster.AgentEntity<{}, never, undefined>
 * const program = AgentCluster.cancel(Support, "run-1", { cancelledBy: "ada" })
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const cancel = <S extends Agent.Slots, R, A>(
  entity: AgentEntity<S, R, A>,
  runId: string,
  options?: Agent.CancelOptions
): Effect.Effect<void, AgentError.RunAlreadyResumed | AgentError.RunNotFound | Refused | RunStore.StoreError | ClientError, Sharding> =>
  Effect.gen(function*() {
    const to = yield* entityOfRun(runId)
    const client = yield* entity.entity.client
    return yield* client(to).Cancel({ runId, ...(options?.cancelledBy === undefined ? {} : { cancelledBy: options.cancelledBy }) }).pipe(
      Effect.catchTag("Refused", (error) => Effect.fail(typed(error)))
    )
  })

/**
 * A run's record, read from the run store (from any process that shares it): its status,
 * version, checkpoint, who decided it.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { AgentCluster } from "@agentfx/cluster"
 *
 * const status = AgentCluster.get("run-1").pipe(Effect.map(Option.map((record) => record.status)))
 * ```
 *
 * @since 0.1.0
 * @category reading
 */
export const get = (runId: string): Effect.Effect<Option.Option<RunStore.RunRecord>, RunStore.StoreError> =>
  Effect.flatMap(RunStore.RunStore, (store) => store.get(runId))

/**
 * One element of a watched run ({@link watch}, {@link stream}): one of its events (`Event`);
 * a gap (`Gap`: events that were lost with a runner that was killed, or that the runner
 * driving the run does not keep — told, never skipped); or how the segment stopped when no
 * event says it (`Outcome`: a failure, a cancel, or the run's state read from its record). Each
 * has a `cursor`: give the last one seen as `after` to a new watch to continue after it.
 *
 * @example
 * ```ts
 * import type { AgentCluster } from "@agentfx/cluster"
 *
 * const show = (watched: AgentCluster.Watched) =>
 *   watched._tag === "Event" ? watched.event._tag : watched._tag === "Gap" ? `gap: ${watched.message}` : watched.outcome._tag
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type Watched = Follow.Watched

/**
 * Options of {@link watch}.
 *
 * @example
 * ```ts
 * import type { AgentCluster } from "@agentfx/cluster"
 *
 * const options: AgentCluster.WatchOptions = { conversationId: "c-1", from: 3, after: "1f2e3d4c.7:12" }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface WatchOptions {
  /** The last cursor seen: the watch continues after it (without it: from the segment's first event). */
  readonly after?: string
  /**
   * Which segment: the one a decision on the pause at this revision drives (`RunOutcome.Paused.revision`,
   * the record's `version` while paused). Without it: the segment the run's start drives.
   */
  readonly from?: number
  /** The conversation the watcher may see: a run of another one (or an ephemeral run) is refused with `ConversationMismatch`. */
  readonly conversationId?: string
}

/** A runner's refusal of a watch, as the error a watcher matches on. */
const watchRefusal = (error: { readonly _tag: string }): Option.Option<AgentError.RunNotFound | Refused> =>
  error._tag !== "Refused"
    ? Option.none()
    : Option.some((error as Refused).reason === "RunNotFound" ? new AgentError.RunNotFound({ runId: (error as Refused).runId }) : error as Refused)

const watchFrom = <S extends Agent.Slots, R, A>(
  entity: AgentEntity<S, R, A>,
  entityId: string,
  runId: string,
  from: number | undefined,
  after: string | undefined
): Stream.Stream<Watched, AgentError.RunNotFound | Refused, Sharding> =>
  Stream.unwrap(Effect.map(entity.entity.client, (client) =>
    Follow.follow(entity.agent, (payload) => client(entityId).Watch(payload) as never, runId, from, after, watchRefusal)))

/**
 * Follows a run of `entity` from any process of the cluster: its events, in the order the loop
 * emitted them, from the runner that drives it, to its segment's stop — the pause, the answer,
 * or the failure of the start (by default) or of the decision on the pause at revision `from`.
 * A segment not begun yet is waited for. Any number of watchers may follow one run; a watcher
 * that reconnects gives its last cursor as `after` and gets what came after it. Events are
 * observation only: watching never changes a run, and a run does not wait for its watchers.
 *
 * When the runner that drives the run is lost, the watch follows the run to the runner that
 * takes it over: that runner cannot replay the lost runner's events, so the watcher gets a `Gap`
 * saying so, then the events of the run as it continues (the crash rule's), never the same
 * event twice. A runner keeps a finished segment for late watchers a while (its last 200); a
 * segment it no longer keeps is a `Gap`, then the run's state from its record (`Outcome`).
 *
 * Refused before anything is sent: a run the store does not have, or another agent's, with
 * `RunNotFound`; a run of another conversation than `conversationId` with
 * `ConversationMismatch`. A runner serves watches through the cluster's transport: on
 * `ClusterSqlite`, only in the runner's own process.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { AgentCluster } from "@agentfx/cluster"
 *
 * declare const Support: AgentCluster.AgentEntity<{}, never, undefined>
 * const program = AgentCluster.watch(Support, "run-1", { conversationId: "c-1" }).pipe(
 *   Stream.runForEach((watched) => Effect.log(watched._tag === "Event" ? watched.event._tag : watched._tag))
 * )
 * ```
 *
 * @since 0.2.0
 * @category reading
 */
export const watch = <S extends Agent.Slots, R, A>(
  entity: AgentEntity<S, R, A>,
  runId: string,
  options?: WatchOptions
): Stream.Stream<Watched, AgentError.RunNotFound | ConversationMismatch | Refused | RunStore.StoreError, Sharding> =>
  Stream.unwrap(Effect.gen(function*() {
    const record = yield* get(runId)
    if (Option.isNone(record) || record.value.agent !== entity.agent.name) return yield* new AgentError.RunNotFound({ runId })
    const conversationId = options?.conversationId
    if (conversationId !== undefined && (record.value.ephemeral || record.value.conversationId !== conversationId)) {
      return yield* new ConversationMismatch({ runId, conversationId })
    }
    return watchFrom(entity, entityIdOf(record.value), runId, options?.from, options?.after)
  }))

/**
 * Starts a run ({@link start}) and follows it ({@link watch}) to its first stop: a pause, the
 * answer or a failure — `Agent.stream` for a run on the cluster. A start that is refused fails
 * the stream with `Refused`; so does one that the runner refuses before the run began. A start
 * steered into the running turn ends with its `Outcome`, `Steered` (watch `takenBy` for the
 * answer); one whose running turn paused first fails with `RunStore.SteerRefused`.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { AgentCluster } from "@agentfx/cluster"
 *
 * declare const Support: AgentCluster.AgentEntity<{}, never, undefined>
 * const program = AgentCluster.stream(Support, { input: "Refund order 42", conversationId: "c-1" }).pipe(
 *   Stream.filter((watched) => watched._tag === "Event" && watched.event._tag === "TextDelta"),
 *   Stream.runForEach((watched) => Effect.log(watched))
 * )
 * ```
 *
 * @since 0.2.0
 * @category running
 */
export const stream = <S extends Agent.Slots, R, A>(
  entity: AgentEntity<S, R, A>,
  options: StartOptions<S>
): Stream.Stream<Watched, ClientError | Refused | RunStore.SteerRefused | AgentError.RunNotFound, Sharding> =>
  Stream.unwrap(Effect.gen(function*() {
    const { reply, runId } = yield* send(entity, options, false)
    // the reply fails the stream if the start was refused; the watch's own stop ends it
    const replied = yield* Effect.forkScoped(reply)
    const refused = Stream.drain(Stream.fromEffect(Fiber.join(replied)))
    return Stream.merge(
      watchFrom(entity, entityId({ runId, conversationId: options.conversationId }), runId, undefined, undefined),
      refused,
      { haltStrategy: "left" }
    )
  }))
