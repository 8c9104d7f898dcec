import { describe, expect, it } from "vitest"
import { expectInOrder, run } from "./run.js"

describe("examples/fallback.ts", () => {
  it("twice on the overloaded primary, 200 ms apart, then the backup answers and is named; a stream that failed after its first words is not restarted", async () => {
    const { lines, raw } = await run("fallback.ts")
    expectInOrder(lines, [
      "user: How was our uptime this month?",
      "  [N ms] big-model: HTTP 503: overloaded",
      "  [N ms] big-model: HTTP 503: overloaded",
      "  [N ms] small-model: answering",
      "answered by small-model (backup-cloud): Uptime was 99.95% this month; one incident, on the 12th.",
      "user (again; big-model now fails after its first words): How was our uptime this month?",
      `  text shown: "Uptime was "`,
      "failed: ModelError: HTTP 503: overloaded"
    ])
    expect(lines.filter((line) => line.endsWith("small-model: answering"))).toHaveLength(1)
    // the second attempt waited for the step's schedule: 200 ms (real time; the bound is a floor)
    const [first, second] = [...raw.matchAll(/\[(\d+) ms\] big-model/g)].map((match) => Number(match[1]))
    expect(second! - first!).toBeGreaterThanOrEqual(199)
  }, 60_000)
})
