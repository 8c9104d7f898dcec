/**
 * Fan-out for the calls of a concurrent batch.
 *
 * `Effect.forEach(…, { concurrency: "unbounded" })` forks every element onto the scheduler
 * and joins every child fiber: ~11 µs per element on Effect 3 (docs/performance.md). Here each
 * effect gets its own fiber from the caller's context (services, references, scheduler),
 * started at once (`Effect.runForkWith` runs a new
 * fiber until it first suspends or yields): a call that completes without suspending is done
 * before the next starts, with no scheduler hop, no join and nothing to await; only the calls
 * that suspend or yield run on as fibers, which are then awaited. A call that yields (Effect
 * yields a fiber every 2,048 operations, or at `Effect.yieldNow`) goes on on the caller's
 * scheduler, as any fiber: the event loop runs between its slices, so its deadline's timer
 * fires (a synchronous scheduler flushed here would run such a call to its end first).
 */
import type { Fiber } from "effect"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as F from "effect/Fiber"

/**
 * Runs `effects` (which cannot fail) concurrently, one fiber each, and returns their values
 * in order. Same interruption semantics as `Effect.forEach` with unbounded concurrency:
 * interrupting the caller interrupts every child and waits for their finalizers; a child that
 * dies interrupts its siblings, and the caller fails with every cause that was not a success.
 */
export const concurrently = <A, R>(
  effects: ReadonlyArray<Effect.Effect<A, never, R>>
): Effect.Effect<Array<A>, never, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(restore(Effect.context<R>()), (context) =>
      Effect.withFiber((parent) => {
        const start = Effect.runForkWith(context)
        const fibers = effects.map((effect) => start(effect))
        const pending = fibers.filter((fiber) => fiber.pollUnsafe() === undefined)
        if (pending.length === 0) return collect(fibers)
        // the first child that dies (before or after the others started) interrupts its
        // siblings, once: the siblings' own interrupted exits must not do it again (with n
        // children that would be n² interruptions, seconds of a busy core for a wide batch)
        let stopping = false
        const interruptOthers = (self?: Fiber.Fiber<A>) => {
          if (stopping) return
          stopping = true
          for (const fiber of pending) if (fiber !== self) fiber.interruptUnsafe(parent.id)
        }
        if (fibers.some((fiber) => fiber.pollUnsafe()?._tag === "Failure")) interruptOthers()
        else for (const fiber of pending) fiber.addObserver((exit) => Exit.isFailure(exit) && interruptOthers(fiber))
        return restore(Effect.forEach(pending, F.await, { discard: true })).pipe(
          Effect.onInterrupt(() => {
            stopping = true
            return F.interruptAll(pending)
          }),
          Effect.flatMap(() => collect(fibers))
        )
      })
    )
  )

/** The values of fibers that have all ended, in order, or every cause that was not a success. */
const collect = <A>(fibers: ReadonlyArray<Fiber.Fiber<A>>): Effect.Effect<Array<A>> => {
  const values: Array<A> = []
  let failure: Cause.Cause<never> | undefined
  for (const fiber of fibers) {
    const exit = fiber.pollUnsafe()!
    if (Exit.isSuccess(exit)) values.push(exit.value)
    else failure = failure === undefined ? exit.cause : Cause.combine(failure, exit.cause)
  }
  return failure === undefined ? Effect.succeed(values) : Effect.failCause(failure)
}
