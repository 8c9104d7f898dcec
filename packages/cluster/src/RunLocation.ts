/**
 * Where a run is driven: the runner that last took on its entity (its conversation, or the run
 * when it is ephemeral). A runner notes it when it takes the entity on — once per activation,
 * not per step — in a table beside the run store (`agentfx_cluster_locations`); any member
 * reads it (the inbox shows it). A location is what the cluster last said, not a health check:
 * a runner that died stays named until the entity's next owner takes it on (at its next
 * message, or at once when a message was in flight).
 *
 * @since 0.1.0
 */
import type { RunStore } from "@agentfx/core"
import { Context, Effect, Option } from "effect"

/**
 * Where an entity's runs were last driven.
 *
 * @example
 * ```ts
 * import type { RunLocation } from "@agentfx/cluster"
 *
 * const where: RunLocation.Location = { runner: "10.0.0.5:34431", since: 1764633600000 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Location {
  /** The runner's address, `host:port`. */
  readonly runner: string
  /** When it took the entity on, epoch milliseconds (the runner's clock: shown, never compared). */
  readonly since: number
}

/**
 * The locations of a cluster's entities, provided by `ClusterPg` and `ClusterSqlite`'s Layers
 * (runners and clients).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { RunLocation } from "@agentfx/cluster"
 *
 * const where = Effect.flatMap(RunLocation.RunLocation, (locations) => locations.find("support", "conversation:c-1"))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class RunLocation extends Context.Service<RunLocation, {
  /** Notes that `runner` took on the entity `entityId` of `agent`. */
  readonly enter: (agent: string, entityId: string, runner: string) => Effect.Effect<void, RunStore.StoreError>
  /** Where the entity `entityId` of `agent` was last taken on, if anywhere. */
  readonly find: (agent: string, entityId: string) => Effect.Effect<Option.Option<Location>, RunStore.StoreError>
}>()("@agentfx/cluster/RunLocation") {}

/**
 * The entity a run belongs to: `conversation:<id>`, or `run:<id>` for an ephemeral run.
 *
 * @example
 * ```ts
 * import { RunLocation } from "@agentfx/cluster"
 * import type { RunStore } from "@agentfx/core"
 *
 * declare const record: RunStore.RunRecord
 * const entityId = RunLocation.entityIdOf(record)
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const entityIdOf = (run: { readonly runId: string; readonly conversationId?: string | undefined; readonly ephemeral?: boolean | undefined }): string =>
  run.ephemeral === true || run.conversationId === undefined ? `run:${run.runId}` : `conversation:${run.conversationId}`

/**
 * Where a run is driven: its entity's location, `None` when no runner has taken it on.
 *
 * @example
 * ```ts
 * import { Effect, Option } from "effect"
 * import { RunLocation } from "@agentfx/cluster"
 * import type { RunStore } from "@agentfx/core"
 *
 * declare const record: RunStore.RunRecord
 * const program = RunLocation.of(record).pipe(
 *   Effect.map(Option.match({ onNone: () => "nowhere yet", onSome: ({ runner }) => runner }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const of = (record: RunStore.RunRecord): Effect.Effect<Option.Option<Location>, RunStore.StoreError, RunLocation> =>
  Effect.flatMap(RunLocation, (locations) => locations.find(record.agent, entityIdOf(record)))
