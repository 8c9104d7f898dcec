/**
 * What an effect already holds. Some effects are values: a synchronous schema decodes to an
 * `Either`, `Effect.succeed` is an `Exit`. Reading them at once saves a run-loop step and
 * its allocations on the hot path (docs/performance.md); any other effect is run as usual.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Result"
import * as Exit from "effect/Exit"

/** The `Either` this effect is, if it is one (a synchronous schema's decode or encode). */
export const settledEither = <A, E>(effect: Effect.Effect<A, E, any>): Result.Result<A, E> | undefined => {
  // a tag read first: most effects have none, and `Result.isResult` is a slower guard
  const tag = (effect as { readonly _tag?: unknown })._tag
  return (tag === "Right" || tag === "Left") && Result.isResult(effect) ? effect as Result.Result<A, E> : undefined
}

/** The `Exit` this effect is, if it is one (`Effect.succeed`, `Effect.fail`). */
export const settledExit = <A, E>(effect: Effect.Effect<A, E, any>): Exit.Exit<A, E> | undefined => {
  const tag = (effect as { readonly _tag?: unknown })._tag
  return (tag === "Success" || tag === "Failure") && Exit.isExit(effect) ? effect as Exit.Exit<A, E> : undefined
}

/** Whether the effect is a success already (`Effect.void`, `Effect.succeed`): nothing to wait for. */
export const succeeded = (effect: Effect.Effect<unknown, unknown, any>): boolean => {
  const now = settledExit(effect)
  return now !== undefined && Exit.isSuccess(now)
}

/** `f` of the effect's value: at once when the effect is a success already, else after it (`Effect.flatMap`). */
export const andThen = <A, E, R, B, E2, R2>(
  effect: Effect.Effect<A, E, R>,
  f: (a: A) => Effect.Effect<B, E2, R2>
): Effect.Effect<B, E | E2, R | R2> => {
  const now = settledExit(effect)
  return now !== undefined && Exit.isSuccess(now) ? f(now.value) : Effect.flatMap(effect, f)
}
