/** The entity's turns: starts and decisions one at a time, in the order they arrived. */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeRunnerTurns, makeTurns } from "../src/internal/handler.js"

describe("turns", () => {
  it.effect("turns run one at a time in arrival order; one interrupted while waiting still keeps the next behind the running one", () =>
    Effect.gen(function*() {
      const turns = makeTurns()
      const log: Array<string> = []
      const release = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(turns(Effect.andThen(Effect.sync(() => log.push("1 start")), Deferred.await(release)).pipe(Effect.tap(Effect.sync(() => log.push("1 end"))))))
      yield* Effect.yieldNow
      const second = yield* Effect.forkChild(turns(Effect.sync(() => log.push("2"))))
      const third = yield* Effect.forkChild(turns(Effect.sync(() => log.push("3"))))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(second)
      yield* Effect.yieldNow
      expect(log).toEqual(["1 start"])
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(third)
      expect(log).toEqual(["1 start", "1 end", "3"])
      yield* turns(Effect.sync(() => log.push("4")))
      expect(log).toEqual(["1 start", "1 end", "3", "4"])
    }))

  it.effect("a runner's turns are shared by an entity's instances: a new instance's turn waits for the old one's run; another entity's does not; the chain goes on after an interrupted turn", () =>
    Effect.gen(function*() {
      const turnsOf = makeRunnerTurns()
      const log: Array<string> = []
      const release = yield* Deferred.make<void>()
      // the instance being passivated still drives a run of conversation c-1
      const old = yield* Effect.forkChild(turnsOf("conversation:c-1")(Effect.andThen(Effect.sync(() => log.push("old start")), Deferred.await(release)).pipe(Effect.tap(Effect.sync(() => log.push("old end"))))))
      yield* Effect.yieldNow
      // the instance the engine built meanwhile, for the conversation's next message, and another conversation
      const next = yield* Effect.forkChild(turnsOf("conversation:c-1")(Effect.sync(() => log.push("new"))))
      const other = yield* Effect.forkChild(turnsOf("conversation:c-2")(Effect.sync(() => log.push("other"))))
      yield* Fiber.join(other)
      yield* Effect.yieldNow
      expect(log).toEqual(["old start", "other"])
      yield* Fiber.interrupt(old)
      yield* Fiber.join(next)
      expect(log).toEqual(["old start", "other", "new"])
      yield* turnsOf("conversation:c-1")(Effect.sync(() => log.push("later")))
      expect(log).toEqual(["old start", "other", "new", "later"])
    }))
})
