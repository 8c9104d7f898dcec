/**
 * The embedded cluster: one runner on a SQLite file (`effect/cluster`'s `SingleRunner`),
 * with the run store and chat memory on the same file, and clients — other processes of the
 * same machine, a CLI — that send it messages through the file. One runner per file, whatever
 * path names it (a symbolic or hard link, a relative path): a second is refused (`RunnerLocked`).
 *
 * @since 0.1.0
 */
import { RunStore } from "@agentfx/core"
import * as SqlStore from "@agentfx/sql/SqlStore"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { SingleRunner } from "effect/cluster"
import type { Sharding } from "effect/cluster/Sharding"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { Layer } from "effect"
import type { ConfigError } from "effect/Config"
import type { RunnerLocked } from "./ClusterError.js"
import * as LockFile from "./internal/lockFile.js"
import * as Locations from "./internal/locations.js"
import { type Timings, timed } from "./internal/settings.js"
import type { RunLocation } from "./RunLocation.js"

/**
 * Options of {@link layerClient}: the file and its store's options.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions extends SqliteStore.ClientOptions, SqlStore.Options {}

/**
 * Options of {@link layer}: the client's, and the runner's timings (how often it polls the
 * file for messages, how long its shutdown waits).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends ClientOptions, Timings {}

/**
 * What a cluster member provides: sharding (to send messages; on a runner, to serve
 * entities) and the run locations, with the run store and chat memory on the cluster's
 * database (`RunStore.RunStore` and `ChatMemory.ChatMemory` are references: provided, they
 * have no place in a Layer's type).
 *
 * @since 0.1.0
 * @category models
 */
export type Services = Sharding | RunLocation

const store = (options: ClientOptions) =>
  Layer.merge(SqlStore.layer(options), Locations.layer()).pipe(Layer.provideMerge(SqliteStore.layerClient(options)))

/**
 * The embedded runner on `filename`: serves the entities registered with
 * `AgentCluster.runner`; runs left running by a crash of the previous runner on this file are
 * continued when it starts. Refused with `RunnerLocked` while another process (or another
 * Layer of this one) runs the file, through whatever path (decision 082). A file that does not
 * exist yet is created.
 *
 * @example
 * ```ts
 * import * as ClusterSqlite from "@agentfx/cluster/ClusterSqlite"
 *
 * const Cluster = ClusterSqlite.layer({ filename: "agentfx.db" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Services, RunStore.StoreError | RunnerLocked | ConfigError> =>
  SingleRunner.layer({ runnerStorage: "sql", shardingConfig: timed(options, "500 millis") }).pipe(
    Layer.provide(NodeCrypto.layerDigest),
    Layer.provideMerge(store(options)),
    Layer.provide(Layer.effectDiscard(LockFile.acquire(options.filename)))
  )

/**
 * A client of the embedded runner of `filename`, from another process: starts, decisions and
 * cancels are stored in the file, where the runner finds them at its next poll (its
 * `pollInterval`); replies are read back from it. It serves no entity.
 *
 * @example
 * ```ts
 * import * as ClusterSqlite from "@agentfx/cluster/ClusterSqlite"
 *
 * const Client = ClusterSqlite.layerClient({ filename: "agentfx.db" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (options: ClientOptions): Layer.Layer<Services, RunStore.StoreError | ConfigError> =>
  NodeClusterSocket.layer({ clientOnly: true, storage: "sql" }).pipe(
    Layer.provideMerge(store(options))
  )
