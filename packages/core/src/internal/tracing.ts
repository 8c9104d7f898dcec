/**
 * Spans that cost nothing when no tracer is installed.
 */
import { Context, DefaultServices, Effect, Tracer } from "effect"

/** The tracer every fiber has unless one is provided (`@effect/opentelemetry`, a test tracer). */
const defaultTracer: Tracer.Tracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/**
 * `Effect.withSpan`, skipped when the fiber runs with Effect's default tracer — whose spans
 * nobody exports — so that a run without tracing pays one reference comparison per step.
 * `attributes` is only evaluated when a span is made.
 */
export const withSpan = (name: string, attributes: () => Record<string, unknown>) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tracerWith((tracer) =>
    tracer === defaultTracer ? self : Effect.withSpan(self, name, { attributes: attributes(), captureStackTrace: false })
  )

/** Adds attributes to the current span, when there is one worth annotating. */
export const annotate = (attributes: () => Record<string, unknown>): Effect.Effect<void> =>
  Effect.tracerWith((tracer) => tracer === defaultTracer ? Effect.void : Effect.annotateCurrentSpan(attributes()))
