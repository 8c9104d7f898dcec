/**
 * Cluster members on PostgreSQL: runners (each serves the shards it owns, on its own address)
 * and client-only members (an HTTP handler, the inbox, a CLI), with the run store and chat
 * memory on the same database. A runner lost is replaced by the others once its shard locks
 * expire (`failover`).
 *
 * @since 0.1.0
 */
import { RunStore } from "@agentfx/core"
import * as SqlStore from "@agentfx/sql/SqlStore"
import * as PgStore from "@agentfx/sql/PgStore"
import { RunnerAddress, ShardingConfig } from "effect/cluster"
import type { Sharding } from "effect/cluster/Sharding"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import type { PgClient } from "@effect/sql-pg"
import type { Duration } from "effect"
import { Cause, Effect, Layer, Option } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import * as Locations from "./internal/locations.js"
import { failoverConfig, failoverProblems, runnerStartupParameters, type Timings, timed } from "./internal/settings.js"
import type { RunLocation } from "./RunLocation.js"

/**
 * Options of a client-only member: `@effect/sql-pg`'s `PgPoolConfig` (`url`, or
 * `host`/`port`/`database`/…, `maxConnections`, `ssl`) and the store's own options.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions extends PgClient.PgPoolConfig, SqlStore.Options {}

/**
 * How fast the runners notice a lost runner: a runner's shard locks expire `lockExpiration`
 * after its last refresh (every `lockRefresh`); the others see it gone at their next
 * assignment refresh (every `assignmentRefresh`), then take its shards and continue its runs.
 * The engine's defaults, 35 s / 10 s / 3 s, take over in about 30–37 s; 6 s / 2 s (and the
 * default 1 s assignment refresh) in 4–8 s after the kill. A frozen runner (SIGSTOP, a paused VM,
 * an event loop blocked) is failed over the same way (PostgreSQL 14 or later): PostgreSQL ends
 * its lock session once idle for `lockExpiration`, and a transaction of its connections once idle
 * for `lockExpiration` less the lock refresh (`idle_in_transaction_session_timeout`, set on the
 * runner's connections unless their `startupParameters` set it), so that nothing it held keeps
 * its runs from the others. Shorter is not free: a runner whose event loop or database stalls
 * past `lockExpiration` loses its shards while alive (the run store's fences keep every call
 * started once even then).
 * @since 0.1.0
 * @category models
 */
export interface Failover {
  readonly lockExpiration: Duration.Input
  readonly lockRefresh: Duration.Input
  /**
   * How often a runner reads the cluster's runners and recomputes who owns which shard (one
   * query per member each time). Default: half `lockRefresh`, at most 3 s (the engine's own).
   */
  readonly assignmentRefresh?: Duration.Input
}

/**
 * Options of a runner: its client options, the address the other members reach it at,
 * optionally the address it listens on (default: `runnerAddress`; `0.0.0.0` in a container),
 * its failover settings and its poll interval.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends ClientOptions, Timings {
  readonly runnerAddress: { readonly host: string; readonly port: number }
  readonly listenAddress?: { readonly host: string; readonly port: number }
  readonly failover?: Failover
}

/**
 * What a member provides: sharding (to send messages; on a runner, to serve entities) and the
 * run locations, with the run store and chat memory on the cluster's database
 * (`RunStore.RunStore` and `ChatMemory.ChatMemory` are references: provided, they have no
 * place in a Layer's type).
 *
 * @since 0.1.0
 * @category models
 */
export type Services = Sharding | RunLocation

const storeOptions = ({ leaseTtl, retention }: SqlStore.Options): SqlStore.Options => ({
  ...(leaseTtl === undefined ? {} : { leaseTtl }),
  ...(retention === undefined ? {} : { retention })
})

const clientOf = ({ leaseTtl: _, retention: __, ...client }: ClientOptions): PgClient.PgPoolConfig => client

/** A failure to join the cluster, as a `StoreError`. */
const notJoined = (cause: Cause.Cause<unknown>): Cause.Cause<RunStore.StoreError> =>
  Cause.hasInterruptsOnly(cause)
    ? cause as Cause.Cause<never>
    : Cause.fail(new RunStore.StoreError({ message: `Could not join the cluster: ${Cause.pretty(cause)}` }))

/** A member's cluster Layer over the store's client (`client`), its setup failures as `StoreError`s. */
const member = <E>(cluster: Layer.Layer<Sharding, E, SqlClient>, options: ClientOptions, client: PgClient.PgPoolConfig) =>
  Layer.merge(cluster, Locations.layer()).pipe(
    Layer.catchCause((cause) => Layer.effectContext(Effect.failCause(notJoined(cause)))),
    Layer.provideMerge(SqlStore.layer(storeOptions(options))),
    Layer.provide(PgStore.layerClient(client))
  )

/**
 * A runner's client: its connections end a transaction left idle for `lockExpiration` less the
 * lock refresh of the runner's effective sharding settings (the engine's environment overlaid
 * with agentfx's), unless `startupParameters` sets it (decision 162).
 */
const runnerClient = (options: ClientOptions, sharding: ShardingConfig.ShardingConfig["Service"]): PgClient.PgPoolConfig => {
  const client = clientOf(options)
  return { ...client, startupParameters: runnerStartupParameters(sharding, client.startupParameters) }
}

const address = ({ host, port }: { readonly host: string; readonly port: number }) => Option.some(RunnerAddress.make(host, port))

/**
 * A runner on PostgreSQL: serves the entities registered with `AgentCluster.runner` on the
 * shards it is assigned, listening on `runnerAddress` (each runner its own). Runs of a runner
 * that was lost are continued by the others, with the crash rule, within about
 * `failover.lockExpiration`.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import * as ClusterPg from "@agentfx/cluster/ClusterPg"
 *
 * const Cluster = ClusterPg.layer({
 *   url: Redacted.make("postgres://agentfx@db.internal/agentfx"),
 *   runnerAddress: { host: "10.0.0.5", port: 34431 },
 *   failover: { lockExpiration: "6 seconds", lockRefresh: "2 seconds" }
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Services, RunStore.StoreError> => {
  const problems = options.failover === undefined ? [] : failoverProblems(options.failover)
  if (problems.length > 0) {
    return Layer.effectContext(Effect.fail(new RunStore.StoreError({ message: `ClusterPg.layer: ${problems.join("; ")}` })))
  }
  const shardingConfig: Partial<ShardingConfig.ShardingConfig["Service"]> = {
    ...timed(options, "1 second"),
    runnerAddress: address(options.runnerAddress),
    ...(options.listenAddress === undefined ? {} : { runnerListenAddress: address(options.listenAddress) }),
    ...(options.failover === undefined ? {} : failoverConfig(options.failover))
  }
  // the settings the engine will run with: its environment's (`SHARD_LOCK_EXPIRATION`, …), overlaid with these
  return Layer.unwrap(ShardingConfig.configFromEnv.pipe(
    Effect.catchCause((cause) => Effect.failCause(notJoined(cause))),
    Effect.map((fromEnv) =>
      member(NodeClusterSocket.layer({ storage: "sql", shardingConfig }), options, runnerClient(options, { ...fromEnv, ...shardingConfig }))
    )
  ))
}

/**
 * A client-only member on PostgreSQL: starts, decides, cancels and reads runs; serves no
 * shard. Its messages are stored, then sent to the runner that owns their entity; a client
 * that does not know that runner yet (just started) only stores them, and the runner finds
 * them at its next poll (its `pollInterval`). Give it the runners' `failover` settings when it
 * watches runs (`AgentCluster.watch`, `AgentCluster.stream`): a watch goes to the runner that
 * owns the run's entity as the client sees the runners, and a client sees a lost runner gone
 * `failover.lockExpiration` after its last refresh (the engine's 35 s without it), so its
 * watches follow a run taken over that much sooner. A setting that is not a duration above zero
 * fails the Layer with a `StoreError` naming it.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import * as ClusterPg from "@agentfx/cluster/ClusterPg"
 *
 * const Client = ClusterPg.layerClient({ url: Redacted.make("postgres://agentfx@db.internal/agentfx") })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (options: ClientLayerOptions): Layer.Layer<Services, RunStore.StoreError> => {
  const { failover, ...clientOptions } = options
  const problems = failover === undefined ? [] : failoverProblems(failover)
  if (problems.length > 0) {
    return Layer.effectContext(Effect.fail(new RunStore.StoreError({ message: `ClusterPg.layerClient: ${problems.join("; ")}` })))
  }
  const shardingConfig = failover === undefined ? undefined : failoverConfig(failover)
  return member(
    NodeClusterSocket.layer({ clientOnly: true, storage: "sql", ...(shardingConfig === undefined ? {} : { shardingConfig }) }),
    clientOptions,
    clientOf(clientOptions)
  )
}

/**
 * Options of {@link layerClient}: the database's, and the runners' `failover` settings (what
 * the client needs of them: when a runner counts as lost, how often it reads the runners).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import type * as ClusterPg from "@agentfx/cluster/ClusterPg"
 *
 * const options: ClusterPg.ClientLayerOptions = {
 *   url: Redacted.make("postgres://agentfx@db.internal/agentfx"),
 *   failover: { lockExpiration: "6 seconds", lockRefresh: "2 seconds" }
 * }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface ClientLayerOptions extends ClientOptions {
  readonly failover?: Failover
}
