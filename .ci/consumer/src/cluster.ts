/**
 * `@agentfx/cluster` under plain `node`, installed with the README's line: the embedded
 * cluster (one runner on a SQLite file) owns a run that pauses for approval; it is decided
 * through its entity and completes; the store's record names the decider; a second runner on
 * the same file is refused. Prints what `run.sh` expects.
 */
import { AgentCluster } from "@agentfx/cluster"
import * as ClusterSqlite from "@agentfx/cluster/ClusterSqlite"
import { Decision, ScriptedChatModel } from "@agentfx/core"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { payments, script } from "./payments.js"

const Payments = AgentCluster.make(payments)

const program = Effect.gen(function*() {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "agentfx-consumer-cluster-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  const filename = join(dir, "cluster.db")
  const runner = AgentCluster.runner(Payments).pipe(
    Layer.provide(ScriptedChatModel.layer(script)),
    Layer.provideMerge(ClusterSqlite.layer({ filename }))
  )
  yield* Effect.gen(function*() {
    const paused = yield* AgentCluster.run(Payments, { input: "Pay ada 500.", conversationId: "c-1" })
    if (paused._tag !== "Paused") return yield* Effect.die(new Error(`expected a pause, got ${paused._tag}`))
    yield* Console.log(`paused for ${paused.kind}: ${paused.pending.map((p) => p.toolName).join(", ")}`)
    const second = yield* Effect.scoped(Layer.build(ClusterSqlite.layer({ filename }))).pipe(Effect.flip, Effect.map((e) => e._tag))
    yield* Console.log(`a second runner on the file: ${second}`)
    const done = yield* AgentCluster.decide(Payments, paused.runId, Decision.approveAll(), { decidedBy: "ada", revision: paused.revision })
    yield* Console.log(`decided: ${done._tag === "Completed" ? `completed: ${done.text}` : done._tag}`)
    const record = yield* AgentCluster.get(paused.runId)
    yield* Console.log(`the store's record: ${Option.getOrElse(Option.map(record, (r) => `${r.status}, decided by ${r.decidedBy}`), () => "missing")}`)
  }).pipe(Effect.provide(runner))
})

program.pipe(Effect.scoped, NodeRuntime.runMain)
