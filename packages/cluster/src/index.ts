/**
 * agentfx runs owned by `effect/cluster`. The Layers that bring a database driver are imported
 * from their own entry points, so that only that driver need be installed:
 * `@agentfx/cluster/ClusterPg` (runners and clients on PostgreSQL, `@effect/sql-pg`) and
 * `@agentfx/cluster/ClusterSqlite` (the embedded runner on a SQLite file,
 * `@effect/sql-sqlite-node`); the inbox's driver is `@agentfx/cluster/ClusterInbox`, the chat endpoints'
 * `@agentfx/cluster/ClusterChat`.
 *
 * @since 0.1.0
 */
export * as AgentCluster from "./AgentCluster.js"
export * as ClusterError from "./ClusterError.js"
export * as RunLocation from "./RunLocation.js"
export * as RunOutcome from "./RunOutcome.js"
