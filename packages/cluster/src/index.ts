/**
 * @since 0.1.0
 */
export * as AgentCluster from "./AgentCluster.js"
export * as ClusterError from "./ClusterError.js"
export * as ClusterPg from "./ClusterPg.js"
export * as ClusterSqlite from "./ClusterSqlite.js"
export * as RunOutcome from "./RunOutcome.js"
export * as RunLocation from "./RunLocation.js"
