/**
 * Runs a segment of a chat's message — a turn, or the resume of its pause — in a fiber of the
 * endpoint's own scope, so that a client that goes away does not stop the run: its events go
 * to the replay buffer, and to whoever listens. The request that started it listens from the
 * message's `start`, which is sent once the run was admitted: its first event after
 * `RunStarted` (the run then holds its conversation; `RunStarted` comes before, and a busy
 * conversation fails the run after it), or a resume's `RunResumed` (its claim was won). A
 * failure before that is the request's refusal, and nothing was sent.
 */
import type { AgentEvent } from "@agentfx/core"
import type { Scope } from "effect"
import { Cause, Clock, Deferred, Effect, Exit, Option, Stream } from "effect"
import type { UiChunk } from "../UiChunk.js"
import * as Replay from "./replay.js"
import * as Translate from "./translate.js"

/** What clients are told of a defect: a fixed text (its own message may hold anything); the cause is logged. */
export const unexpected = "The run failed unexpectedly"

/** The text of the `error` chunk of a run that failed after it started. */
const errorText = (cause: Cause.Cause<{ readonly message: string }>): string => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) return failure.value.message
  return Cause.hasInterruptsOnly(cause) ? "The server stopped while the run was running" : unexpected
}

export interface Segment<E> {
  readonly chatId: string
  /** The run's events. */
  readonly events: Stream.Stream<AgentEvent.AgentEvent, E>
  /** What the segment says first, after `start` (a resume: the calls its decision answers). */
  readonly prelude: ReadonlyArray<UiChunk>
}

/**
 * Runs the segment in `scope`; succeeds with the response's events once the run was admitted,
 * or fails with the run's failure before that.
 */
export const run = <E extends { readonly message: string }>(
  replay: Replay.Replay,
  scope: Scope.Scope,
  segment: Segment<E>
): Effect.Effect<Stream.Stream<Uint8Array>, E> =>
  Effect.gen(function*() {
    const opened = yield* Deferred.make<void, E>()
    const listener = yield* Replay.listen
    let message: Replay.Message | undefined
    let translator: Translate.Translator | undefined
    /** Whether this segment ended its message (the message itself may go on, in the segment of a resume). */
    let settled = false

    const publish = (event: AgentEvent.AgentEvent) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.suspend(() => {
          // a run's start is not its admission: the conversation is held (or refused as busy) after it
          if (message === undefined && event._tag === "RunStarted") return Effect.void
          if (message === undefined || translator === undefined) {
            message = replay.open(segment.chatId, event.runId, listener.queue)
            translator = Translate.make(event.runId)
            replay.push(message, segment.prelude)
          }
          const chunks = translator.event(event)
          if (event.runId !== message.messageId || (event._tag !== "RunPaused" && event._tag !== "RunCompleted")) {
            replay.push(message, chunks)
            return Deferred.succeed(opened, undefined)
          }
          settled = true
          replay.end(message, chunks, event._tag === "RunPaused" ? "tool-calls" : "stop", now)
          return Deferred.succeed(opened, undefined)
        }))

    const ended = (exit: Exit.Exit<void, E>): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (message === undefined || translator === undefined) {
          return yield* Exit.isFailure(exit) ? Deferred.failCause(opened, exit.cause) : Deferred.die(opened, new Error("The run ended without an event"))
        }
        if (settled) return
        if (Exit.isFailure(exit) && Option.isNone(Cause.findErrorOption(exit.cause)) && !Cause.hasInterruptsOnly(exit.cause)) {
          yield* Effect.logError(`The run of chat ${segment.chatId} failed unexpectedly`, exit.cause)
        }
        const text = Exit.isFailure(exit) ? errorText(exit.cause) : "The run ended without completing or pausing"
        replay.end(message, [...translator.failed(), { type: "error", errorText: text }], "error", yield* Clock.currentTimeMillis)
      })

    yield* segment.events.pipe(Stream.runForEach(publish), Effect.onExit(ended), Effect.forkIn(scope))
    yield* Deferred.await(opened)
    return listener.stream(() => message)
  })
