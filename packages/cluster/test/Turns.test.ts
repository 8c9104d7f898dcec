/** The entity's turns: starts and decisions one at a time, in the order they arrived. */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeTurns } from "../src/internal/handler.js"

describe("turns", () => {
  it.effect("turns run one at a time in arrival order; one interrupted while waiting still keeps the next behind the running one", () =>
    Effect.gen(function*() {
      const turns = makeTurns()
      const log: Array<string> = []
      const release = yield* Deferred.make<void>()
      const first = yield* Effect.fork(turns(Effect.zipRight(Effect.sync(() => log.push("1 start")), Deferred.await(release)).pipe(Effect.tap(() => log.push("1 end")))))
      yield* Effect.yieldNow()
      const second = yield* Effect.fork(turns(Effect.sync(() => log.push("2"))))
      const third = yield* Effect.fork(turns(Effect.sync(() => log.push("3"))))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(second)
      yield* Effect.yieldNow()
      expect(log).toEqual(["1 start"])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(third)
      expect(log).toEqual(["1 start", "1 end", "3"])
      yield* turns(Effect.sync(() => log.push("4")))
      expect(log).toEqual(["1 start", "1 end", "3", "4"])
    }))
})
