/**
 * The errors of building a cluster member.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * Another runner holds this SQLite file (one runner per file: two would both drive every
 * run). `pid` is the process that holds it, as its lock file says. Stop that process, or
 * open the file as a client (`ClusterSqlite.layerClient`) to send it messages. A lock file
 * left by a process that is gone is taken over.
 *
 * @example
 * ```ts
 * import { ClusterError } from "@agentfx/cluster"
 *
 * new ClusterError.RunnerLocked({ filename: "agentfx.db", lockFile: "agentfx.db.runner.lock", pid: 4242 }).message
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunnerLocked extends Schema.TaggedError<RunnerLocked>("@agentfx/cluster/RunnerLocked")("RunnerLocked", {
  filename: Schema.String,
  lockFile: Schema.String,
  pid: Schema.Int
}) {
  override get message(): string {
    return `SQLite database ${this.filename} already has a runner: process ${this.pid} holds ${this.lockFile}. One runner per file; open it with ClusterSqlite.layerClient to send it messages`
  }
}
