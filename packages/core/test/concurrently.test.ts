import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Result } from "effect"
import { concurrently } from "../src/internal/concurrently.js"

/** An effect that counts itself started, holds a resource, waits for `gate`, then returns `value`. */
const held = (log: { started: number; released: Array<number> }, value: number, gate: Effect.Effect<void>) =>
  Effect.acquireRelease(
    Effect.sync(() => void log.started++),
    () => Effect.sync(() => void log.released.push(value))
  ).pipe(Effect.andThen(gate), Effect.as(value), Effect.scoped)

describe("concurrently", () => {
  it.effect("runs every effect at once and returns the values in order", () =>
    Effect.gen(function*() {
      const log = { started: 0, released: [] as Array<number> }
      const gate = yield* Deferred.make<void>()
      const fiber = yield* concurrently([3, 1, 2].map((v) => held(log, v, Deferred.await(gate)))).pipe(Effect.forkChild)
      while (log.started < 3) yield* Effect.yieldNow
      expect(log.released).toEqual([])
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(fiber)).toEqual([3, 1, 2])
    }))

  it.effect("interrupting the caller interrupts every child and waits for their finalizers", () =>
    Effect.gen(function*() {
      const log = { started: 0, released: [] as Array<number> }
      let releasedWhenCallerSawInterruption = -1
      const fiber = yield* concurrently([1, 2, 3, 4].map((v) => held(log, v, Effect.never))).pipe(
        Effect.onInterrupt(() => Effect.sync(() => (releasedWhenCallerSawInterruption = log.released.length))),
        Effect.andThen(Effect.never), // the caller's fiber goes on: children must not wait for it to end
        Effect.forkChild
      )
      while (log.started < 4) yield* Effect.yieldNow
      expect(Exit.hasInterrupts(yield* Effect.andThen(Fiber.interrupt(fiber), Fiber.await(fiber)))).toBe(true)
      expect(releasedWhenCallerSawInterruption).toBe(4)
    }))

  it.effect("a child that dies interrupts its siblings, and the caller dies with its defect", () =>
    Effect.gen(function*() {
      const log = { started: 0, released: [] as Array<number> }
      // dies once the three others hold their resource
      const boom: Effect.Effect<number> = Effect.suspend(() =>
        log.started < 3 ? Effect.andThen(Effect.yieldNow, boom) : Effect.die("boom")
      )
      const exit = yield* concurrently([
        held(log, 1, Effect.never),
        boom,
        held(log, 3, Effect.never),
        held(log, 4, Effect.never)
      ]).pipe(Effect.exit)
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(Result.getOrUndefined(Cause.findDefect(exit.cause))).toBe("boom")
      expect([...log.released].sort()).toEqual([1, 3, 4])
    }))

  it.effect("a child that dies at once interrupts the siblings started after it", () =>
    Effect.gen(function*() {
      const log = { started: 0, released: [] as Array<number> }
      const exit = yield* concurrently([held(log, 1, Effect.never), Effect.die("boom"), held(log, 3, Effect.never)]).pipe(Effect.exit)
      expect(Exit.isFailure(exit) && Result.getOrUndefined(Cause.findDefect(exit.cause))).toBe("boom")
      expect([...log.released].sort()).toEqual([1, 3])
    }))

  it.effect("children that complete at once are not awaited, and keep their order", () =>
    Effect.gen(function*() {
      expect(yield* concurrently([Effect.succeed(2), Effect.sync(() => 1), Effect.succeed(3)])).toEqual([2, 1, 3])
    }))
})
