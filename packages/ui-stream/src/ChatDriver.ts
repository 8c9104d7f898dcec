/**
 * What drives the runs of the chat endpoints (`Chat`, `AgUi`). By default the endpoint's own
 * process: a turn is `Agent.stream`, an answer to a pause `Agent.streamResume`, with the Layer's
 * services. A cluster of runners drives them elsewhere (`@agentfx/cluster`'s
 * `ClusterChat.driver()`): the turn or the decision is sent to the runner that holds the
 * conversation, and its events come back from there. The endpoint reads the pause an answer
 * names, the thread and the conversation from the run store and `ChatMemory` either way: give
 * it the same stores as the runners.
 *
 * @since 0.2.0
 */
import type { Agent, AgentError, AgentEvent, Decision } from "@agentfx/core"
import type { Stream } from "effect"

/**
 * Events of a run that the driver could not give (the runner that drove it was killed and
 * another took it over): told where they would have been. The chat endpoint sends a
 * `data-events-lost` part, the AG-UI endpoint a `CUSTOM` event named `agentfx.eventsLost`;
 * the run goes on after it.
 *
 * @example
 * ```ts
 * import type { ChatDriver } from "@agentfx/ui-stream"
 *
 * const lost: ChatDriver.EventsLost = { _tag: "EventsLost", runId: "r1", message: "Events were lost with the runner that drove run r1" }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface EventsLost {
  readonly _tag: "EventsLost"
  readonly runId: string
  readonly message: string
}

/**
 * The stop of a run whose stopping events were lost (told before by `EventsLost`): it completed
 * (its answer is in the conversation: a thread read shows it), or it failed (`failure`: the
 * error's tag and its sentence, what the client is told).
 *
 * @example
 * ```ts
 * import type { ChatDriver } from "@agentfx/ui-stream"
 *
 * const ended: ChatDriver.RunEnded = { _tag: "RunEnded", runId: "r1", failure: { error: "Cancelled", message: "Run r1 was cancelled" } }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface RunEnded {
  readonly _tag: "RunEnded"
  readonly runId: string
  readonly failure?: { readonly error: string; readonly message: string } | undefined
}

/**
 * One element a driver gives of a run: one of its events, or what stands for events it could not give.
 *
 * @example
 * ```ts
 * import type { ChatDriver } from "@agentfx/ui-stream"
 *
 * const tag = (driven: ChatDriver.Driven) => driven._tag
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type Driven = AgentEvent.AgentEvent | EventsLost | RunEnded

/**
 * The pause an answer resumes, as the endpoint read it from the run store: the run, the
 * revision of its record at the pause (the claim is made at it), and its checkpoint as stored.
 *
 * @example
 * ```ts
 * import type { ChatDriver } from "@agentfx/ui-stream"
 *
 * declare const stored: unknown
 * const pause: ChatDriver.Pause = { runId: "r1", revision: 3, checkpoint: stored }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Pause {
  readonly runId: string
  readonly revision: number
  readonly checkpoint: unknown
}

/**
 * A driver of the endpoints' runs. Each stream is a segment of a run, to its stop (`RunPaused`,
 * `RunCompleted`, `RunEnded`); a failure after its first event is the run's failure (the chat's
 * `error` chunk, AG-UI's `RUN_ERROR`, naming the error's tag). A refusal fails the stream before
 * any event, nothing consumed, with `Agent.run`'s or `Agent.resume`'s error: the endpoint answers
 * it as it answers its own (`RunAlreadyResumed` is `AlreadyDecided`, 409; `RunNotFound` 404; an
 * error it does not know is `Unavailable`, 503). A resume's stream begins once its decision
 * claimed the run: exactly one answer to a pause proceeds.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import type { ChatDriver } from "@agentfx/ui-stream"
 *
 * const nowhere: ChatDriver.ChatDriver = { stream: () => Stream.empty, resume: () => Stream.empty }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface ChatDriver {
  /** A turn of conversation `conversationId`: a new run, from its `RunStarted`. */
  readonly stream: (
    agent: Agent.Any,
    options: { readonly input: Agent.RunOptions<Agent.Slots>["input"]; readonly conversationId: string }
  ) => Stream.Stream<Driven, AgentError.ResumeError>
  /** The decision on `pause`, made by `decidedBy`: the run from its `RunResumed`. */
  readonly resume: (
    agent: Agent.Any,
    pause: Pause,
    decision: Decision.Decision,
    options: { readonly decidedBy: string }
  ) => Stream.Stream<Driven, AgentError.ResumeError>
}
