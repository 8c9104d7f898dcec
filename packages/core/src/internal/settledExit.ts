/**
 * Whether an effect is a value already: a synchronous schema decodes to an `Exit`, and so is
 * `Effect.succeed`. Alone in its module so that what a tool is (its schemas' JSON form) can
 * read it without knowing who schedules tools (`settled.ts` builds on it for the managers).
 */
import type * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/** The `Exit` this effect is, if it is one (`Effect.succeed`, `Effect.fail`). */
export const settledExit = <A, E>(effect: Effect.Effect<A, E, any>): Exit.Exit<A, E> | undefined => {
  const tag = (effect as { readonly _tag?: unknown })._tag
  return (tag === "Success" || tag === "Failure") && Exit.isExit(effect) ? effect as Exit.Exit<A, E> : undefined
}
