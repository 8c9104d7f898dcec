/** What a runner's failover settings become in the engine's sharding settings; settings that are not durations. */
import { ToolCallingManager } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Duration, Effect, Exit, Layer, Redacted } from "effect"
import { join } from "node:path"
import * as ClusterPg from "../src/ClusterPg.js"
import { AgentCluster } from "../src/index.js"
import { failoverConfig, runnerStartupParameters } from "../src/internal/settings.js"
import { Bank, bankModel, onFile, tempDir } from "./fixtures.js"

const millis = (d: Duration.Input | undefined) => Duration.toMillis(Duration.fromInputUnsafe(d!))

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

describe("a runner's transactions", () => {
  it("end once idle for the lock expiration less the lock refresh: before a frozen runner's shards can move (decision 162)", () => {
    expect(runnerStartupParameters({ shardLockExpiration: "6 seconds", shardLockRefreshInterval: "2 seconds" })).toEqual({ idle_in_transaction_session_timeout: "4000" })
    // the engine's defaults, 35 s / 10 s
    expect(runnerStartupParameters({ shardLockExpiration: "35 seconds", shardLockRefreshInterval: "10 seconds" })).toEqual({ idle_in_transaction_session_timeout: "25000" })
    // the engine refreshes at least three times per expiration
    expect(runnerStartupParameters({ shardLockExpiration: "9 seconds", shardLockRefreshInterval: "10 seconds" })).toEqual({ idle_in_transaction_session_timeout: "6000" })
  })

  it("the connection's own startup parameters are kept, and win when they set it", () => {
    const sharding = { shardLockExpiration: "6 seconds", shardLockRefreshInterval: "2 seconds" } as const
    expect(runnerStartupParameters(sharding, { search_path: "agentfx" })).toEqual({ search_path: "agentfx", idle_in_transaction_session_timeout: "4000" })
    expect(runnerStartupParameters(sharding, { IDLE_IN_TRANSACTION_SESSION_TIMEOUT: "0" })).toEqual({ IDLE_IN_TRANSACTION_SESSION_TIMEOUT: "0" })
  })
})

describe("settings that are not durations above zero", () => {
  it.effect("a runner's failover settings: ClusterPg.layer fails with a StoreError naming each, before it connects anywhere", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(ClusterPg.layer({
        url: Redacted.make("postgres://nobody@127.0.0.1:1/none"),
        runnerAddress: { host: "127.0.0.1", port: 1 },
        failover: { lockExpiration: "soon", lockRefresh: 0, assignmentRefresh: -1 } as never
      })))
      expect(error).toMatchObject({
        _tag: "StoreError",
        message: `ClusterPg.layer: failover.lockExpiration must be a duration above zero, got "soon"; failover.lockRefresh must be a duration above zero, got 0; failover.assignmentRefresh must be a duration above zero, got -1`
      })
    }).pipe(Effect.scoped))

  it.live("a runner's idleTimeout: its Layer stops with a defect naming it", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "cluster.db")
      const runner = onFile(AgentCluster.runner(Bank, { idleTimeout: "whenever" as never }).pipe(Layer.provide([bankModel, ToolCallingManager.unbounded()])), filename)
      const exit = yield* Effect.exit(Layer.build(runner))
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toContain(`AgentCluster.runner: idleTimeout must be a duration above zero, got "whenever"`)
    }).pipe(Effect.scoped), 30_000)
})
