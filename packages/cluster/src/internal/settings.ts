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

/**
 * How often a runner refreshes its shard locks: `lockRefresh`, but at least three times per
 * `lockExpiration` (the engine's rule, `effect/cluster/internal/shardLock.ts`).
 */
export const lockRefreshOf = (config: Pick<ShardingConfig.ShardingConfig["Service"], "shardLockExpiration" | "shardLockRefreshInterval">): Duration.Duration =>
  Duration.min(
    Duration.fromInputUnsafe(config.shardLockRefreshInterval),
    Duration.divideUnsafe(Duration.fromInputUnsafe(config.shardLockExpiration), 3)
  )

/**
 * How long a runner's cluster connection may sit idle inside a transaction before PostgreSQL
 * ends it (`idle_in_transaction_session_timeout`): `lockExpiration` less the lock refresh.
 * A frozen runner's shard locks go no sooner than `lockExpiration` after its last refresh,
 * which was at most one refresh before it froze; its open transactions go at most this long
 * after their last statement, made before it froze. So they end before another runner can
 * take its shards, whose messages they would otherwise keep locked (decision 162).
 */
export const idleInTransactionTimeout = (config: Pick<ShardingConfig.ShardingConfig["Service"], "shardLockExpiration" | "shardLockRefreshInterval">): Duration.Duration =>
  Duration.subtract(Duration.fromInputUnsafe(config.shardLockExpiration), lockRefreshOf(config))

/**
 * A runner's connection startup parameters: `given`, with `idle_in_transaction_session_timeout`
 * set to {@link idleInTransactionTimeout} of its sharding settings (in ms) unless `given` sets it.
 */
export const runnerStartupParameters = (
  sharding: Pick<ShardingConfig.ShardingConfig["Service"], "shardLockExpiration" | "shardLockRefreshInterval">,
  given?: Readonly<Record<string, string>> | undefined
): Readonly<Record<string, string>> => {
  const set = Object.keys(given ?? {}).some((name) => name.toLowerCase() === "idle_in_transaction_session_timeout")
  return set ? given! : { ...given, idle_in_transaction_session_timeout: String(Math.max(1, Math.floor(Duration.toMillis(idleInTransactionTimeout(sharding))))) }
}
