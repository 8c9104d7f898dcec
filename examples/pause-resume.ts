/**
 * Pause and resume across processes. Run: `pnpm tsx examples/pause-resume.ts`.
 *
 * 1. This process runs an agent whose model asks to look an invoice up (a plain tool) and
 *    to pay it (a tool that `needsApproval`). The default gate pauses the run before anything runs.
 * 2. The checkpoint (plain JSON) is written to a file, and a second process is started:
 *    it builds the agent anew, tries a decision that is refused (nothing is consumed), then
 *    approves the payment with an edited amount. The run completes there.
 */
import { Agent, Decision, Message, ScriptedChatModel, Tool } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Redacted, Schema } from "effect"
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const lookupInvoice = Tool.make("lookup_invoice", {
  description: "Finds an invoice by number",
  parameters: Schema.Struct({ number: Schema.String }),
  success: Schema.Struct({ number: Schema.String, amount: Schema.Number, payee: Schema.String }),
  handler: ({ number }) => Effect.succeed({ number, amount: 1200, payee: "ACME" })
})

const payInvoice = Tool.make("pay_invoice", {
  description: "Pays an invoice",
  parameters: Schema.Struct({ number: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true,
  timeout: "10 seconds",
  handler: ({ amount, number }) =>
    Effect.sync(() => console.log(`  [pay_invoice] paying ${amount} for invoice ${number}`)).pipe(
      Effect.as(`paid ${amount} for ${number}`)
    )
})

/** The model: asks for both tools, then sums up the results it was given. */
const model = ScriptedChatModel.layer((request) => {
  const last = request.messages.at(-1)
  if (last?._tag === "User") {
    return ScriptedChatModel.toolCalls(
      { id: "call_lookup", name: "lookup_invoice", args: { number: "INV-7" } },
      { id: "call_pay", name: "pay_invoice", args: { number: "INV-7", amount: 1200 } }
    )
  }
  const results = request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult")
  return ScriptedChatModel.text(`Done: ${results.map((r) => `${r.toolName} → ${JSON.stringify(r.content)}`).join("; ")}`)
})

const agent = Agent.make({
  name: "accounts-payable",
  tools: [lookupInvoice, payInvoice],
  checkpointSecret: Redacted.make("example-secret-of-at-least-32-bytes"),
  system: "You pay invoices."
})

const firstProcess = Effect.gen(function*() {
  const exit = yield* Agent.run(agent, { input: "Pay invoice INV-7", conversationId: "ap-1" })
  if (exit._tag !== "Paused") return yield* Effect.die(new Error("expected the run to pause"))
  console.log(`[process ${process.pid}] paused for ${exit.kind}; pending: ${exit.pending.map((p) => `${p.call.name} ${JSON.stringify(p.call.args)}`).join(", ")}`)
  const file = join(tmpdir(), `agentfx-checkpoint-${process.pid}.json`)
  writeFileSync(file, JSON.stringify(exit.checkpoint))
  console.log(`[process ${process.pid}] checkpoint written to a file (${readFileSync(file).length} bytes); resuming in a new process`)
  const self = fileURLToPath(import.meta.url)
  process.stdout.write(execFileSync(process.execPath, [...process.execArgv, self, "--resume", file], { encoding: "utf8" }))
})

const secondProcess = (file: string) =>
  Effect.gen(function*() {
    const checkpoint = JSON.parse(readFileSync(file, "utf8"))
    const resumed = agent
    const refused = yield* Agent.resume(resumed, checkpoint, Decision.byCall({ call_lookup: Decision.approve() })).pipe(Effect.flip)
    console.log(`[process ${process.pid}] refused: ${refused.message}`)
    const exit = yield* Agent.resume(resumed, checkpoint, Decision.byCall({
      call_pay: Decision.approve({ args: { number: "INV-7", amount: 1000 } })
    }))
    if (exit._tag !== "Completed") return yield* Effect.die(new Error("expected the run to complete"))
    console.log(`[process ${process.pid}] completed: ${exit.text}`)
    console.log(`[process ${process.pid}] tool calls: ${exit.toolCalls.map((o) => `${o.toolName}=${o._tag}`).join(", ")}`)
  })

const resumeAt = process.argv.indexOf("--resume")
NodeRuntime.runMain(
  (resumeAt === -1 ? firstProcess : secondProcess(process.argv[resumeAt + 1]!)).pipe(Effect.provide(model))
)
