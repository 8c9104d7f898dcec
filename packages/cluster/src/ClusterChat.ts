/**
 * The chat endpoints (`@agentfx/ui-stream`'s `Chat` for `useChat`, `AgUi` for AG-UI clients)
 * driving their runs on a cluster: `ClusterChat.driver()` is their `ChatDriver`. A turn is a
 * start sent to the conversation's entity and followed as the runner that drives it emits its
 * events (`AgentCluster.stream`); an answer to a pause is a decision sent to the run's entity
 * (`AgentCluster.decide`, claimed on the runner: exactly one answer proceeds), followed once it
 * claimed the run (`AgentCluster.watch` from the pause's revision). Events lost with a runner
 * that was killed are told (`EventsLost`: the chat's `data-events-lost` part, AG-UI's `CUSTOM`
 * `agentfx.eventsLost`), and the run goes on on the runner that took it over.
 *
 * @since 0.2.0
 */
import type { Agent, AgentEvent } from "@agentfx/core"
import { AgentExit, RunStore } from "@agentfx/core"
import type { ChatDriver } from "@agentfx/ui-stream"
import type { Sharding } from "effect/cluster/Sharding"
import { Clock, Duration, Effect, Option, Stream } from "effect"
import * as AgentCluster from "./AgentCluster.js"
import * as Decided from "./internal/decided.js"
import type * as RunOutcome from "./RunOutcome.js"

/**
 * Options of {@link driver}.
 *
 * @example
 * ```ts
 * import type * as ClusterChat from "@agentfx/cluster/ClusterChat"
 *
 * const options: ClusterChat.Options = { claimPoll: "20 millis" }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** How often the run store is read for an answer's claim, until the runner's reply comes. Default 50 milliseconds. */
  readonly claimPoll?: Duration.Input
}

/**
 * The chat endpoints' `ChatDriver` for runs a cluster drives, on a cluster member (a client-only
 * one is enough: `ClusterPg.layerClient`, or on `ClusterSqlite` the runner's own process, where
 * watches are served). The endpoint reads answers' pauses and threads from the run store and
 * `ChatMemory` of that member's Layer: the runners'. A refusal comes before any event, nothing
 * consumed, as the core's error (`RunAlreadyResumed` naming who decided: the endpoint's
 * `AlreadyDecided`, 409; `RunNotFound`); one the core's errors cannot carry from another process
 * (e.g. `UnknownDecision`), or a cluster that cannot be reached, as a `StoreError` quoting it
 * (`Unavailable`, 503). A conversation's turns wait for each other on its entity: a turn sent
 * while another runs streams once that one stopped (no `ConversationBusy`).
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import type { Agent } from "@agentfx/core"
 * import * as ClusterPg from "@agentfx/cluster/ClusterPg"
 * import * as ClusterChat from "@agentfx/cluster/ClusterChat"
 * import { Chat } from "@agentfx/ui-stream"
 *
 * declare const support: Agent.Agent
 * const ChatLive = Layer.unwrap(
 *   Effect.map(ClusterChat.driver(), (driver) => Chat.serve({ agent: support, driver, port: 3000 }))
 * ).pipe(Layer.provide(ClusterPg.layerClient({ url: process.env.DATABASE_URL! as never })))
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const driver = Effect.fnUntraced(function*(
  options?: Options
): Effect.fn.Return<ChatDriver.ChatDriver, never, Sharding> {
  const context = yield* Effect.context<Sharding>()
  const poll = Duration.fromInputUnsafe(options?.claimPoll ?? "50 millis")
  const entityOf = Decided.entities()

  const stream: ChatDriver.ChatDriver["stream"] = (agent, { conversationId, input }) =>
    Stream.suspend(() => {
      // named here, so that a gap before the run's first event still names its run
      const runId = crypto.randomUUID()
      return AgentCluster.stream(entityOf(agent), { input, conversationId, runId }).pipe(
        Stream.mapError(Decided.asResumeError),
        Stream.mapEffect((watched) => driven(agent, runId, watched))
      )
    }).pipe(Stream.provideContext(context))

  const resume: ChatDriver.ChatDriver["resume"] = (agent, pause, decision, { decidedBy }) =>
    Stream.unwrap(Effect.map(
      Decided.follow(entityOf(agent), { runId: pause.runId, version: pause.revision }, decision, decidedBy, poll),
      ({ watched }) => Stream.mapEffect(watched, (element) => driven(agent, pause.runId, element))
    )).pipe(Stream.provideContext(context))

  return { stream, resume }
})

/**
 * A watched element of run `runId` as the endpoints' element: an event as it is, a gap as
 * `EventsLost`, a stop no event said as what ends the segment — but a start the running turn
 * took (`Steered`, an agent that steers) as the core's `Steered`, which the endpoint answers with
 * that turn's message.
 */
const driven = (agent: Agent.Any, runId: string, watched: AgentCluster.Watched): Effect.Effect<ChatDriver.Driven, RunStore.Steered> => {
  switch (watched._tag) {
    case "Event":
      return Effect.succeed(watched.event)
    case "Gap":
      return Effect.succeed({ _tag: "EventsLost", runId, message: watched.message })
    case "Outcome":
      return watched.outcome._tag === "Steered"
        ? Effect.fail(new RunStore.Steered({ conversationId: watched.outcome.conversationId, runId: watched.outcome.takenBy }))
        : stopOf(agent, watched.outcome)
  }
}

/**
 * A segment's stop that no event said: a pause (read from the run's record) as its `RunPaused`,
 * so that its approvals or interrupts are shown; a completion or a failure as `RunEnded`.
 */
const stopOf = (agent: Agent.Any, outcome: Exclude<RunOutcome.RunOutcome, RunOutcome.Steered>): Effect.Effect<ChatDriver.Driven> => {
  switch (outcome._tag) {
    case "Completed":
      return Effect.succeed({ _tag: "RunEnded", runId: outcome.runId })
    case "Failed":
      return Effect.succeed({ _tag: "RunEnded", runId: outcome.runId, failure: { error: outcome.error, message: outcome.message } })
    case "Ended":
      return Effect.succeed(
        outcome.status === "completed"
          ? { _tag: "RunEnded", runId: outcome.runId }
          : { _tag: "RunEnded", runId: outcome.runId, failure: { error: "Failed", message: `Run ${outcome.runId} failed` } }
      )
    case "Paused":
      return pausedEvent(agent, outcome)
  }
}

/** The pause of `outcome` as the run's `RunPaused`, with the checkpoint of its record; a pause decided since is the segment's end. */
const pausedEvent = (agent: Agent.Any, outcome: RunOutcome.Paused): Effect.Effect<ChatDriver.Driven> =>
  Effect.gen(function*() {
    const record = yield* AgentCluster.get(outcome.runId).pipe(Effect.map(Option.getOrUndefined), Effect.orElseSucceed(() => undefined))
    if (record === undefined || record.status !== "paused" || record.version !== outcome.revision || record.agent !== agent.name) {
      return {
        _tag: "RunEnded",
        runId: outcome.runId,
        failure: { error: "RunAlreadyResumed", message: `Run ${outcome.runId} paused, and its pause was decided since` }
      } as const
    }
    const event: AgentEvent.RunPaused = {
      _tag: "RunPaused",
      runId: outcome.runId,
      conversationId: outcome.conversationId,
      timestamp: yield* Clock.currentTimeMillis,
      exit: AgentExit.Paused({
        runId: outcome.runId,
        conversationId: outcome.conversationId,
        kind: outcome.kind,
        pending: outcome.pending.map(({ args, callId, toolName, why }) => ({ call: { id: callId, name: toolName, args: args as never }, why })),
        checkpoint: record.checkpoint as never
      })
    }
    return event
  })
