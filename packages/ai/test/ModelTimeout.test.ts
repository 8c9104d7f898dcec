import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Schedule, Stream } from "effect"
import { TestClock } from "effect/testing"
import { ModelTimeout } from "../src/index.js"

describe("ModelTimeout", () => {
  it("defaults: 2 minutes idle, 10 minutes per request", () => {
    expect([Duration.toMillis(ModelTimeout.defaultIdleTimeout), Duration.toMillis(ModelTimeout.defaultRequestTimeout)]).toEqual([120_000, 600_000])
  })

  it.effect("effect: fails with unavailable naming the provider once requestTimeout has passed, not before", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Effect.flip(ModelTimeout.effect(Effect.never, { requestTimeout: "45 seconds" }, "my model")))
      yield* TestClock.adjust("44999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(fiber)
      expect([error.reason, error.isTransient, error.message]).toEqual(["unavailable", true, "my model did not finish within 45s (requestTimeout)."])
    }))

  it.effect("stream: idleTimeout between elements; requestTimeout on the whole stream even while elements keep coming", () =>
    Effect.gen(function*() {
      const ticking = Stream.fromSchedule(Schedule.spaced("10 seconds"))
      const idle = yield* Effect.forkChild(Stream.runCollect(ModelTimeout.stream(Stream.concat(Stream.make(1), Stream.never), { idleTimeout: "20 seconds" }, "m")).pipe(Effect.flip))
      const whole = yield* Effect.forkChild(Stream.runCount(ModelTimeout.stream(ticking, { idleTimeout: "20 seconds", requestTimeout: "1 minute" }, "m")).pipe(Effect.flip))
      // a second at a time: Effect 4 runs a forked fiber a scheduler turn later, and an idle
      // deadline armed after one long adjust would be counted from its end
      for (let second = 0; second < 60; second++) yield* TestClock.adjust("1 second")
      expect((yield* Fiber.join(idle)).message).toBe("m sent nothing for 20s (idleTimeout).")
      expect((yield* Fiber.join(whole)).message).toBe("m did not finish within 1m (requestTimeout).")
    }))

  it.effect("a value that is not a positive duration fails at once with invalid-request; Duration.infinity disables", () =>
    Effect.gen(function*() {
      const bad = yield* Effect.flip(ModelTimeout.effect(Effect.succeed(1), { requestTimeout: 0 }, "m"))
      expect([bad.reason, bad.message]).toEqual(["invalid-request", "m: requestTimeout must be a positive duration (Duration.infinity disables it), got 0."])
      const badStream = yield* Effect.flip(Stream.runCollect(ModelTimeout.stream(Stream.make(1), { idleTimeout: Number.NaN }, "m")))
      expect(badStream.message).toBe("m: idleTimeout must be a positive duration (Duration.infinity disables it), got NaN.")
      const off = yield* Effect.forkChild(ModelTimeout.effect(Effect.as(Effect.sleep("3 hours"), "done"), { requestTimeout: Duration.infinity }, "m"))
      yield* TestClock.adjust("3 hours")
      expect(yield* Fiber.join(off)).toBe("done")
    }))
})

