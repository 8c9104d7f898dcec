/**
 * Pause in one process, resume by run id in another: the run's record in a shared store is
 * the authority, so only the id travels. Run: `pnpm tsx examples/resume-elsewhere.ts`.
 *
 * 1. This process opens the SQLite store (a file; nothing to install or run), runs an agent
 *    whose `transfer` tool needs approval: the run pauses and its record is written.
 * 2. A second process opens the same file, lists the paused runs, and approves the transfer
 *    by run id: it runs there, once. Resuming it again, there or here, is refused.
 */
import { Agent, ChatMemory, Decision, RunStore, ScriptedChatModel, Tool } from "@agentfx/core"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Schema } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const say = (line: string) => Effect.sync(() => console.log(`[process ${process.pid}] ${line}`))

const transfer = Tool.make("transfer", {
  description: "Sends money to an account",
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true,
  handler: ({ amount, to }) => Effect.as(say(`  [transfer] sending ${amount} to ${to}`), `sent ${amount} to ${to}`)
})

const agent = Agent.make({ name: "payments", tools: [transfer], system: "You move money when asked." })

/** The model: asks for the transfer, then confirms what the tool said. */
const model = ScriptedChatModel.layer((request) => {
  const last = request.messages.at(-1)
  return last?._tag === "ToolResult"
    ? ScriptedChatModel.text(`Done: ${JSON.stringify(last.content)}`)
    : ScriptedChatModel.toolCalls({ id: "call_1", name: "transfer", args: { to: "NO93 8601 1117 947", amount: 250 } })
})

const firstProcess = (filename: string) =>
  Effect.gen(function*() {
    const exit = yield* Agent.run(agent, { input: "Send 250 to my landlord", conversationId: "rent" })
    if (exit._tag !== "Paused") return yield* Effect.die(new Error("expected the run to pause"))
    yield* say(`paused for ${exit.kind}: ${exit.pending.map((p) => `${p.call.name} ${JSON.stringify(p.call.args)}`).join(", ")}`)
    yield* say(`run ${exit.runId} is recorded in the store; resuming it in a new process (only its id is passed)`)
    const self = fileURLToPath(import.meta.url)
    process.stdout.write(execFileSync(process.execPath, [...process.execArgv, self, "--resume", filename, exit.runId], { encoding: "utf8" }))
    const again = yield* Effect.flip(Agent.resume(agent, exit.runId, Decision.approveAll()))
    yield* say(`resumed here too? ${again._tag}: ${again.message}`)
    const history = yield* Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("rent"))
    yield* say(`conversation "rent" in the store: ${history.map((m) => m._tag).join(", ")}`)
  }).pipe(Effect.provide(SqliteStore.layer({ filename })))

const secondProcess = (filename: string, runId: string) =>
  Effect.gen(function*() {
    const paused = yield* Effect.flatMap(RunStore.RunStore, (store) => store.list({ status: "paused" }))
    yield* say(`paused runs in the store: ${paused.map((r) => `${r.runId} (${r.agent}, conversation ${r.conversationId})`).join(", ")}`)
    const exit = yield* Agent.resume(agent, runId, Decision.approveAll(), { decidedBy: "ada@example.com" })
    if (exit._tag !== "Completed") return yield* Effect.die(new Error("expected the run to complete"))
    yield* say(`completed: ${exit.text}`)
    const again = yield* Effect.flip(Agent.resume(agent, runId, Decision.approveAll()))
    yield* say(`resumed again? ${again._tag}`)
  }).pipe(Effect.provide(SqliteStore.layer({ filename })))

const resumeAt = process.argv.indexOf("--resume")
const program = resumeAt === -1
  ? Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "agentfx-example-"))),
    (dir) => firstProcess(join(dir, "agentfx.db")),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  : secondProcess(process.argv[resumeAt + 1]!, process.argv[resumeAt + 2]!)

NodeRuntime.runMain(program.pipe(Effect.provide(model)))
