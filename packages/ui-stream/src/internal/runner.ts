/**
 * Runs a segment of a conversation's message — a turn, or the resume of its pause — in a fiber
 * of the endpoint's own scope, so that a client that goes away does not stop the run: its
 * events go to the replay buffer, and to whoever listens, encoded by the segment's `Wire` (the
 * UI message stream's chunks, AG-UI's events). The request that started it listens from the
 * segment's opening, which is sent once the run was admitted: its first event after
 * `RunStarted` (the run then holds its conversation; `RunStarted` comes before, and a busy
 * conversation fails the run after it), or a resume's `RunResumed` (its claim was won). A
 * failure before that is the request's refusal, and nothing was sent.
 */
import { RunStore } from "@agentfx/core"
import type { Scope } from "effect"
import { Cause, Clock, Deferred, Effect, Exit, Option, Stream } from "effect"
import type { Driven } from "../ChatDriver.js"
import * as Replay from "./replay.js"

/** What clients are told of a defect: a fixed text (its own message may hold anything); the cause is logged. */
export const unexpected = "The run failed unexpectedly"

/**
 * Why a segment failed after it was admitted, as a client is told: a sentence, and the failure's
 * tag (`code`); `interrupted` when a newer message cancelled the run (`TurnInterrupted`).
 */
export interface Failure {
  readonly message: string
  readonly code: string
  readonly interrupted?: RunStore.TurnInterrupted | undefined
}

/** What a segment's events become on the wire, and where the segment ends. */
export interface Output {
  readonly events: ReadonlyArray<Uint8Array>
  /** Set when these events end the segment: the run paused or ended, and what closes the segment without being kept. */
  readonly end?: { readonly status: "paused" | "ended"; readonly ending: ReadonlyArray<Uint8Array> } | undefined
}

/** A protocol's encoding of one segment of run `runId`. */
export interface Wire {
  /** What every listener of the message gets first, not kept (the UI message stream's `start`). */
  readonly head: ReadonlyArray<Uint8Array>
  /** What the segment says first, once admitted, kept. */
  readonly opening: ReadonlyArray<Uint8Array>
  /** A run's event, or what stands for events lost (`EventsLost`, a `RunEnded` that completed; a failed `RunEnded` is {@link failed}). */
  readonly event: (event: Driven) => Output
  /** What ends a segment that failed after it was admitted: its last events (kept), and what closes it. */
  readonly failed: (failure: Failure) => { readonly events: ReadonlyArray<Uint8Array>; readonly ending: ReadonlyArray<Uint8Array> }
}

/** What ends a segment that failed: the wire's last events, and what closes it. */
const failedOutput = (wire: Wire, failure: Failure): Output => {
  const { ending, events } = wire.failed(failure)
  return { events, end: { status: "ended", ending } }
}

/** The failure a client is told of. */
const failureOf = (cause: Cause.Cause<{ readonly message: string; readonly _tag?: string }>): Failure => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) {
    const { value } = failure
    return { message: value.message, code: value._tag ?? "Error", ...(value instanceof RunStore.TurnInterrupted ? { interrupted: value } : {}) }
  }
  return Cause.hasInterruptsOnly(cause)
    ? { message: "The server stopped while the run was running", code: "Interrupted" }
    : { message: unexpected, code: "Defect" }
}

export interface Segment<E> {
  readonly chatId: string
  /** The run's events, as its driver gives them. */
  readonly events: Stream.Stream<Driven, E>
  /** The segment's encoding, given the run's id once it is known. */
  readonly wire: (runId: string) => Wire
}

/**
 * Runs the segment in `scope`; succeeds with the response's events once the run was admitted,
 * or fails with the run's failure before that.
 */
export const run = <E extends { readonly message: string; readonly _tag?: string }>(
  replay: Replay.Replay,
  scope: Scope.Scope,
  segment: Segment<E>
): Effect.Effect<Stream.Stream<Uint8Array>, E> =>
  Effect.gen(function*() {
    const opened = yield* Deferred.make<void, E>()
    const listener = yield* Replay.listen
    let message: Replay.Message | undefined
    let wire: Wire | undefined
    /** Whether this segment ended its message (the message itself may go on, in the segment of a resume). */
    let settled = false

    const settle = (output: Output, now: number) => {
      if (message === undefined) return
      if (output.end === undefined) return replay.push(message, output.events)
      settled = true
      replay.end(message, output.events, output.end.ending, output.end.status, now)
    }

    const publish = (event: Driven) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.suspend(() => {
          // a run's start is not its admission: the conversation is held (or refused as busy) after it
          if (message === undefined && event._tag === "RunStarted") return Effect.void
          if (message === undefined || wire === undefined) {
            wire = segment.wire(event.runId)
            message = replay.open(segment.chatId, event.runId, listener.queue, wire.head)
            replay.push(message, wire.opening)
          }
          settle(event._tag === "RunEnded" && event.failure !== undefined ? failedOutput(wire, { message: event.failure.message, code: event.failure.error }) : wire.event(event), now)
          return Deferred.succeed(opened, undefined)
        }))

    const ended = (exit: Exit.Exit<void, E>): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (message === undefined || wire === undefined) {
          return yield* Exit.isFailure(exit) ? Deferred.failCause(opened, exit.cause) : Deferred.die(opened, new Error("The run ended without an event"))
        }
        if (settled) return
        if (Exit.isFailure(exit) && Option.isNone(Cause.findErrorOption(exit.cause)) && !Cause.hasInterruptsOnly(exit.cause)) {
          yield* Effect.logError(`The run of conversation ${segment.chatId} failed unexpectedly`, exit.cause)
        }
        const failure = Exit.isFailure(exit)
          ? failureOf(exit.cause)
          : { message: "The run ended without completing or pausing", code: "Incomplete" }
        settle(failedOutput(wire, failure), yield* Clock.currentTimeMillis)
      })

    yield* segment.events.pipe(Stream.runForEach(publish), Effect.onExit(ended), Effect.forkIn(scope))
    yield* Deferred.await(opened)
    return listener.stream(() => message)
  })
