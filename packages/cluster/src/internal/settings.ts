/** What the cluster's members share of their sharding settings. */
import type { ShardingConfig } from "effect/cluster"
import { Duration, Option } from "effect"

/** A runner's timings: how often it polls the message table, how long its shutdown waits. */
export interface Timings {
  /**
   * How often a runner reads the cluster's message table for messages no one notified it of
   * (a client that does not yet know the shard's runner only stores its message). Default
   * 500 milliseconds on SQLite, 1 second on PostgreSQL (the engine's own default is 10 s).
   */
  readonly pollInterval?: Duration.Input
  /**
   * How long a runner that shuts down (its Layer closed: SIGTERM, a deploy) waits for the runs
   * it is driving to pause or end before it interrupts them. An interrupted run is continued
   * by the entity's next owner, with the crash rule (a call cut off runs again only if its
   * tool is idempotent). Default 15 seconds (the engine's); set it above your longest model
   * call or tool call to lose none in a deploy.
   */
  readonly shutdownTimeout?: Duration.Input
}

/** The sharding settings of a runner's timings, with `fallback` as the poll interval. */
export const timed = (polling: Timings, fallback: Duration.Input): Partial<ShardingConfig.ShardingConfig["Service"]> => ({
  entityMessagePollInterval: polling.pollInterval ?? fallback,
  ...(polling.shutdownTimeout === undefined ? {} : { entityTerminationTimeout: polling.shutdownTimeout })
})

/** The problem with `value` as the setting `name`, which must be a duration above zero; none when it is one. */
export const durationProblem = (name: string, value: unknown): string | undefined => {
  const duration = Duration.fromInput(value as Duration.Input)
  return Option.isSome(duration) && Duration.isGreaterThan(duration.value, Duration.zero)
    ? undefined
    : `${name} must be a duration above zero, got ${typeof value === "string" ? JSON.stringify(value) : String(value)}`
}

/** The problems with a runner's failover settings: each given one must be a duration above zero. */
export const failoverProblems = (failover: object): ReadonlyArray<string> =>
  Object.entries(failover).flatMap(([name, value]) => {
    const problem = value === undefined ? undefined : durationProblem(`failover.${name}`, value)
    return problem === undefined ? [] : [problem]
  })

/** The sharding settings of a runner's failover settings (`ClusterPg.Failover`), checked by {@link failoverProblems}. */
export const failoverConfig = (failover: {
  readonly lockExpiration: Duration.Input
  readonly lockRefresh: Duration.Input
  readonly assignmentRefresh?: Duration.Input | undefined
}): Partial<ShardingConfig.ShardingConfig["Service"]> => ({
  shardLockExpiration: failover.lockExpiration,
  shardLockRefreshInterval: failover.lockRefresh,
  refreshAssignmentsInterval: failover.assignmentRefresh ??
    Duration.min(Duration.seconds(3), Duration.divideUnsafe(Duration.fromInputUnsafe(failover.lockRefresh), 2))
})
