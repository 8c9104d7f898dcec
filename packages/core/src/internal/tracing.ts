/**
 * Spans that cost nothing when no tracer is installed.
 *
 * `Effect.withSpan` costs 11–23 µs per span even with Effect's default tracer, whose spans
 * nobody exports. A run checks once, when it starts, whether its fiber has another tracer
 * (`@effect/opentelemetry`, a test tracer); without one, the span sites are plain branches.
 */
import type { Fiber } from "effect"
import { Context, DefaultServices, Effect, Tracer } from "effect"

/** The tracer every fiber has unless one is provided. */
const defaultTracer: Tracer.Tracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/** Whether this fiber's spans go anywhere. */
export const isTraced = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean => fiber.currentTracer !== defaultTracer

/** `Effect.withSpan` when `traced`; `attributes` is only evaluated then. */
export const withSpan = (traced: boolean, name: string, attributes: () => Record<string, unknown>) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  traced ? Effect.withSpan(self, name, { attributes: attributes(), captureStackTrace: false }) : self

/** Adds attributes to the current span when `traced`. */
export const annotate = (traced: boolean, attributes: () => Record<string, unknown>): Effect.Effect<void> =>
  traced ? Effect.annotateCurrentSpan(attributes()) : Effect.void
