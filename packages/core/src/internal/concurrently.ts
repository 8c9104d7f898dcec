/**
 * Fan-out for the calls of a concurrent batch.
 *
 * `Effect.forEach(…, { concurrency: "unbounded" })` joins every child fiber, and joining
 * merges the child's FiberRefs into the parent: measured at ~2/3 of its ~13 µs per element
 * (docs/performance.md). The calls of a batch have nothing to merge — a call's outcome is its
 * value, and run state travels through slot writes — so this forks one fiber per effect and
 * only awaits them.
 */
import { Cause, Effect, Exit, Fiber } from "effect"

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
    Effect.suspend(() => {
      const fibers: Array<Fiber.RuntimeFiber<A>> = []
      const interruptSiblings = (self: number) =>
        Effect.forEach(fibers, (fiber, i) => (i === self ? Effect.void : Fiber.interruptFork(fiber)), { discard: true })
      const forkAll = Effect.forEach(
        effects,
        (effect, i) =>
          Effect.map(
            Effect.fork(restore(Effect.catchAllCause(effect, (cause) => Effect.zipRight(interruptSiblings(i), Effect.failCause(cause))))),
            (fiber) => void fibers.push(fiber)
          ),
        { discard: true }
      )
      const awaitAll = Effect.suspend(() => Effect.forEach(fibers, Fiber.await))
      return forkAll.pipe(
        Effect.zipRight(restore(awaitAll)),
        Effect.onInterrupt(() => Fiber.interruptAll(fibers)),
        Effect.flatMap((exits) => {
          const values: Array<A> = []
          let failure: Cause.Cause<never> | undefined
          for (const exit of exits) {
            if (Exit.isSuccess(exit)) values.push(exit.value)
            else failure = failure === undefined ? exit.cause : Cause.parallel(failure, exit.cause)
          }
          return failure === undefined ? Effect.succeed(values) : Effect.failCause(failure)
        })
      )
    })
  )
