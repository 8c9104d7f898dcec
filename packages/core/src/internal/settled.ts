/**
 * What an effect already holds. Some effects are values: a synchronous schema decodes to an
 * `Either`, `Effect.succeed` is an `Exit`. Reading them at once saves a run-loop step and
 * its allocations on the hot path (docs/performance.md); any other effect is run as usual.
 */
import type { Effect } from "effect"
import { Either, Exit } from "effect"

/** The `Either` this effect is, if it is one (a synchronous schema's decode or encode). */
export const settledEither = <A, E>(effect: Effect.Effect<A, E, any>): Either.Either<A, E> | undefined =>
  Either.isEither(effect) ? effect as Either.Either<A, E> : undefined

/** The `Exit` this effect is, if it is one (`Effect.succeed`, `Effect.fail`). */
export const settledExit = <A, E>(effect: Effect.Effect<A, E, any>): Exit.Exit<A, E> | undefined =>
  Exit.isExit(effect) ? effect as Exit.Exit<A, E> : undefined
