import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { DecisionLog } from "../src/index.js"

const entry = (i: number, runId = `run-${i}`): DecisionLog.Entry => ({
  runId,
  agent: "bank",
  decidedBy: `person-${i}`,
  decidedAt: i,
  decision: { _tag: "ApproveAll" }
})

describe("DecisionLog.makeMemory", () => {
  it.effect("latest: the most recent decision of a run; entries: oldest first, the latest 10,000 kept", () =>
    Effect.gen(function*() {
      const log = DecisionLog.makeMemory()
      yield* log.record(entry(0, "run-a"))
      yield* log.record(entry(1, "run-b"))
      yield* log.record(entry(2, "run-a"))
      expect(yield* log.latest("run-a")).toEqual(Option.some(entry(2, "run-a")))
      expect(yield* log.latest("run-c")).toEqual(Option.none())
      for (let i = 3; i < DecisionLog.capacity + 5; i++) yield* log.record(entry(i))
      const entries = yield* log.entries
      expect(entries).toHaveLength(DecisionLog.capacity)
      expect(entries[0]).toEqual(entry(5))
      expect(entries.at(-1)).toEqual(entry(DecisionLog.capacity + 4))
      expect(yield* log.latest("run-a")).toEqual(Option.none())
    }))
})
