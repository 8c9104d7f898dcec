/**
 * What an effect already holds. Some effects are values: a synchronous schema decodes to an
 * `Exit`, and so is `Effect.succeed`. Reading them at once saves a run-loop step and
 * its allocations on the hot path (docs/performance.md); any other effect is run as usual.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import { settledExit } from "./settledExit.js"

/**
 * The value or the failure this effect settled with, if it is an `Exit` already (a synchronous
 * schema's decode or encode); `undefined` for any other effect, and for a settled defect.
 */
export const settledResult = <A, E>(effect: Effect.Effect<A, E, any>): Result.Result<A, E> | undefined => {
  const now = settledExit(effect)
  if (now === undefined) return undefined
  if (Exit.isSuccess(now)) return Result.succeed(now.value)
  const error = Cause.findErrorOption(now.cause)
  return error._tag === "Some" ? Result.fail(error.value) : undefined
}

/** Whether the effect is a success already (`Effect.void`, `Effect.succeed`): nothing to wait for. */
export const succeeded = (effect: Effect.Effect<unknown, unknown, any>): boolean => {
  const now = settledExit(effect)
  return now !== undefined && Exit.isSuccess(now)
}

/** `f` of the effect's value: at once when the effect is a success already, else after it (`Effect.flatMap`: 2 run-loop operations more per A step, decision 169). */
export const andThen = <A, E, R, B, E2, R2>(
  effect: Effect.Effect<A, E, R>,
  f: (a: A) => Effect.Effect<B, E2, R2>
): Effect.Effect<B, E | E2, R | R2> => {
  const now = settledExit(effect)
  return now !== undefined && Exit.isSuccess(now) ? f(now.value) : Effect.flatMap(effect, f)
}
