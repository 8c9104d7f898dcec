/**
 * A service read in the step that uses it. `Effect.flatMap(Tag, f)` takes two run-loop
 * steps (the tag, then its lookup); this is one, on the hot path of every model call and
 * batch (docs/performance.md). A missing service is a defect, as with the tag.
 */
import type { Context } from "effect"
import { Context as C, Effect } from "effect"

export const withService = <I, S, A, E, R>(
  tag: Context.Tag<I, S>,
  f: (service: S) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | I> => Effect.withFiberRuntime<A, E, R | I>((fiber) => f(C.get(fiber.currentContext as Context.Context<I>, tag)))
