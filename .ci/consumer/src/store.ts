/**
 * `@agentfx/sql` under plain `node`, with only the SQLite driver installed: a run pauses for
 * approval in one use of the store, and is resumed by its run id in another (two builds of the
 * Layer on one file, as two processes would); the store's record and `SqlStore.migrate` (from
 * the package's root) are read back. Prints what `run.sh` expects.
 */
import { Agent, Decision, RunStore, ScriptedChatModel } from "@agentfx/core"
import { SqlStore } from "@agentfx/sql"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { payments, script, StoreLive } from "./payments.js"

const program = Effect.gen(function*() {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "agentfx-consumer-store-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  const filename = join(dir, "agentfx.db")
  const paused = yield* Agent.run(payments, { input: "Pay ada 500." }).pipe(Effect.provide(StoreLive(filename)))
  if (paused._tag !== "Paused") return yield* Effect.die(new Error(`expected a pause, got ${paused._tag}`))
  yield* Console.log(`paused for ${paused.kind}: ${paused.pending.map((p) => `${p.call.name} ${JSON.stringify(p.call.args)}`).join(", ")}`)
  const runId = paused.runId
  const done = yield* Effect.gen(function*() {
    const exit = yield* Agent.resume(payments, runId, Decision.approveAll())
    const record = yield* Effect.flatMap(RunStore.RunStore, (store) => store.get(runId))
    return { exit, status: Option.map(record, (r) => r.status) }
  }).pipe(Effect.provide(StoreLive(filename)))
  yield* Console.log(`resumed by run id: ${done.exit._tag === "Completed" ? `completed: ${done.exit.text}` : done.exit._tag}`)
  yield* Console.log(`the store's record: ${Option.getOrElse(done.status, () => "missing")}`)
  const pending = yield* SqlStore.migrate.pipe(Effect.provide(SqliteStore.layerClient({ filename })))
  yield* Console.log(`migrations still to run: ${pending.length}`)
})

program.pipe(Effect.scoped, Effect.provide(ScriptedChatModel.layer(script)), NodeRuntime.runMain)
