/**
 * Spans that cost nothing when no tracer is installed.
 *
 * `Effect.withSpan` cost 11–23 µs per span on Effect 3 even with Effect's default tracer, whose
 * spans nobody exports. A run checks once, when it starts, whether its fiber has another tracer
 * (`@effect/opentelemetry`, a test tracer); without one, the span sites are plain branches.
 */
import type { ChatModel } from "../ChatModel.js"
import * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"
import { modelAttributes } from "./traced.js"

/** How `@effect/opentelemetry` marks its spans (a `Symbol.for` key: no import needed). */
const OtelSpanTypeId = Symbol.for("@effect/opentelemetry/Tracer/OtelSpan")

interface OtelSpanLike {
  readonly span: { readonly setAttribute: (key: string, value: ReadonlyArray<string>) => unknown }
}

const isOtelSpan = (span: Tracer.AnySpan): span is Tracer.AnySpan & OtelSpanLike =>
  OtelSpanTypeId in span && typeof (span as Partial<OtelSpanLike>).span?.setAttribute === "function"

const isStrings = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((item) => typeof item === "string")

/**
 * The attributes that are string arrays, set again on the OpenTelemetry span under an
 * `@effect/opentelemetry` span: it hands OpenTelemetry only strings, numbers and booleans as
 * they are, and an array as its JSON text; OpenTelemetry takes string arrays. Other tracers
 * keep the arrays they were given.
 */
const stringArrays = (attributes: Record<string, unknown>): Effect.Effect<void> => {
  const arrays = Object.entries(attributes).filter((entry): entry is [string, ReadonlyArray<string>] => isStrings(entry[1]))
  return arrays.length === 0 ? Effect.void : Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
    Effect.sync(() => {
      if (span._tag === "Some" && isOtelSpan(span.value)) for (const [key, value] of arrays) span.value.span.setAttribute(key, value)
    }))
}

/** `Effect.withSpan` when `traced`; `attributes` is only evaluated then. */
export const withSpan = (traced: boolean, name: string, attributes: () => Record<string, unknown>) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  if (!traced) return self
  const evaluated = attributes()
  return Effect.withSpan(Effect.andThen(stringArrays(evaluated), self), name, { attributes: evaluated, captureStackTrace: false })
}

/** Adds attributes to the current span when `traced`. */
export const annotate = (traced: boolean, attributes: () => Record<string, unknown>): Effect.Effect<void> => {
  if (!traced) return Effect.void
  const evaluated = attributes()
  return Effect.andThen(Effect.annotateCurrentSpan(evaluated), stringArrays(evaluated))
}

/** `effect`, a model call of `model`, with the model's attributes on the current span first (when `traced`): a call that fails carries them too. */
export const withModelAttributes = <A, E>(traced: boolean, model: ChatModel.Service, effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  traced && (model.model !== undefined || model.provider !== undefined) ? Effect.andThen(annotate(true, () => modelAttributes(model)), effect) : effect
