/** What the cluster's members share of their sharding settings. */
import type { ShardingConfig } from "@effect/cluster"
import type { Duration } from "effect"

/** How often a runner reads the message table for messages it was not told about (a cold client's, a redelivery's). */
export interface Polling {
  /**
   * How often a runner reads the cluster's message table for messages no one notified it of
   * (a client that does not yet know the shard's runner only stores its message). Default
   * 500 milliseconds on SQLite, 1 second on PostgreSQL (the engine's own default is 10 s).
   */
  readonly pollInterval?: Duration.DurationInput
}

/** The sharding settings of `polling`, with `fallback` as the poll interval. */
export const polled = (polling: Polling, fallback: Duration.DurationInput): Partial<ShardingConfig.ShardingConfig["Type"]> => ({
  entityMessagePollInterval: polling.pollInterval ?? fallback
})
