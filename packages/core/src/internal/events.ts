/**
 * Emitting lifecycle events: nothing is built when no sink listens.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { AgentEvent, Payload } from "../AgentEvent.js"
import type { Around } from "../Middleware.js"

/** Who is listening, and to which run. */
export interface Emitter {
  readonly runId: string
  readonly conversationId: string
  readonly sinks: ReadonlyArray<(event: AgentEvent) => void>
}

/** Emits the event built by `payload`, stamped with the run and `Clock`'s time; free without sinks. */
export const emit = (emitter: Emitter, payload: () => Payload): Effect.Effect<void> =>
  emitter.sinks.length === 0 ? Effect.void : Effect.map(Clock.currentTimeMillis, (timestamp) => {
    const event = { ...payload(), runId: emitter.runId, conversationId: emitter.conversationId, timestamp } as AgentEvent
    for (const sink of emitter.sinks) sink(event)
  })

/** The time now, when someone listens (for durations); 0 otherwise. */
export const now = (emitter: Emitter): Effect.Effect<number> =>
  emitter.sinks.length === 0 ? Effect.succeed(0) : Clock.currentTimeMillis

/** Composes middleware layers around `base`, the first layer outermost. */
export const compose = <I, A, E>(
  layers: ReadonlyArray<Around<I, A, E, any>>,
  base: (input: I) => Effect.Effect<A, E, any>
): (input: I) => Effect.Effect<A, E, any> =>
  layers.reduceRight<(input: I) => Effect.Effect<A, E, any>>(
    (next, layer) => (input) => layer(input, next as (input: I) => Effect.Effect<A, E>),
    base
  )
