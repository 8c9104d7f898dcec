/** What a runner's failover settings become in the engine's sharding settings. */
import { describe, expect, it } from "@effect/vitest"
import { Duration } from "effect"
import { failoverConfig } from "../src/internal/settings.js"

const millis = (d: Duration.DurationInput | undefined) => Duration.toMillis(Duration.decode(d!))

describe("failover settings", () => {
  it("lock expiration and refresh go to the engine as given; the assignment refresh defaults to half the lock refresh", () => {
    const config = failoverConfig({ lockExpiration: "6 seconds", lockRefresh: "2 seconds" })
    expect(millis(config.shardLockExpiration)).toBe(6_000)
    expect(millis(config.shardLockRefreshInterval)).toBe(2_000)
    expect(millis(config.refreshAssignmentsInterval)).toBe(1_000)
  })

  it("the default assignment refresh is at most the engine's 3 s", () => {
    expect(millis(failoverConfig({ lockExpiration: "35 seconds", lockRefresh: "10 seconds" }).refreshAssignmentsInterval)).toBe(3_000)
  })

  it("an assignment refresh given is used", () => {
    expect(millis(failoverConfig({ lockExpiration: "6 seconds", lockRefresh: "2 seconds", assignmentRefresh: "500 millis" }).refreshAssignmentsInterval)).toBe(500)
  })
})
