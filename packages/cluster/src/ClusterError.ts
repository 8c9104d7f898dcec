/**
 * The errors of building a cluster member.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * Another runner holds this SQLite file (one runner per file: two would both drive every
 * run): its lock (`lockFile`, held with SQLite's exclusive lock, which ends with its process
 * however it ends). `pid` is the process that noted itself as the holder (0 when it could not
 * be read). Stop that process, or open the file as a client (`ClusterSqlite.layerClient`) to
 * send it messages.
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
    const holder = this.pid > 0 ? `process ${this.pid}` : "another process"
    return `SQLite database ${this.filename} already has a runner: ${holder} holds ${this.lockFile}. One runner per file; open it with ClusterSqlite.layerClient to send it messages`
  }
}

/**
 * A watch of a run that is not a run of the conversation the watcher named (a run of another
 * conversation, or an ephemeral run): refused before anything is sent.
 *
 * @example
 * ```ts
 * import { ClusterError } from "@agentfx/cluster"
 *
 * new ClusterError.ConversationMismatch({ runId: "run-1", conversationId: "c-2" }).message
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class ConversationMismatch extends Schema.TaggedError<ConversationMismatch>("@agentfx/cluster/ConversationMismatch")("ConversationMismatch", {
  runId: Schema.String,
  conversationId: Schema.String
}) {
  override get message(): string {
    return `Run ${this.runId} is not a run of conversation ${this.conversationId}`
  }
}
