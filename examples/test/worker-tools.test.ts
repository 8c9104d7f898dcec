import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { measureAll } from "../worker-tools.js"

describe("examples", () => {
  it("worker-tools.ts: the bench's measuring functions run on its modules and give sane figures", async () => {
    // a smoke test: real figures come from `pnpm bench` (scenario W) or the script on a quiet machine
    const figures = await Effect.runPromise(measureAll({ runs: 1, calls: 50 }))
    expect(figures.killed).toBe(true)
    expect(figures.overshoot.runs).toBe(2) // one kill per module
    expect(figures.overshoot.min).toBeGreaterThanOrEqual(0)
    expect(figures.overshoot.max).toBeLessThan(1000)
    expect([figures.spawnJs.runs, figures.spawnTs.runs]).toEqual([1, 1])
    expect(figures.roundTrip.tool).toBeGreaterThan(0)
    expect(figures.crunched).toBe(`{"_tag":"Succeeded","callId":"c","toolName":"crunch","value":{"sum":2999997}}`)
  }, 30_000)
})
