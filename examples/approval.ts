/**
 * Approval in the terminal: the model wants to run three sensitive tools; the run pauses and
 * you decide for each call — approve it, edit its arguments, reject it with a reason, or
 * reply in its place — then the run resumes from its checkpoint.
 * Run: `pnpm tsx examples/approval.ts` (answers can also be piped in, one per line).
 */
import { Agent, Decision, ScriptedChatModel, Tool } from "@agentfx/core"
import type { AgentExit, Message } from "@agentfx/core"
import { Console, Effect, Schema } from "effect"
import * as Readline from "node:readline"
import { modelFromEnv } from "./model.js"
import { main, showExit, traced, tracedTool } from "./trace.js"

const sendEmail = Tool.make("send_email", {
  description: "Sends an email",
  parameters: Schema.Struct({ to: Schema.String, body: Schema.String }),
  success: Schema.String,
  needsApproval: true,
  handler: ({ body, to }, context) => tracedTool(context, Effect.succeed(`sent to ${to}: "${body}"`))
})

const deleteFile = Tool.make("delete_file", {
  description: "Deletes a file",
  parameters: Schema.Struct({ path: Schema.String }),
  success: Schema.String,
  needsApproval: true,
  handler: ({ path }, context) => tracedTool(context, Effect.succeed(`deleted ${path}`))
})

const chargeCard = Tool.make("charge_card", {
  description: "Charges the customer's card, in euros",
  parameters: Schema.Struct({ amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true,
  handler: ({ amount }, context) => tracedTool(context, Effect.succeed(`charged €${amount}`))
})

const script: ScriptedChatModel.Script = [
  {
    toolCalls: [
      { id: "call_1", name: "send_email", args: { to: "team@example.com", body: "Release is out" } },
      { id: "call_2", name: "delete_file", args: { path: "/var/log/app.log" } },
      { id: "call_3", name: "charge_card", args: { amount: 120 } }
    ]
  },
  (request) => ({
    text: request.messages
      .filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult")
      .map((m) => `${m.toolName}: ${m.isError ? "not done — " : ""}${m.content}`)
      .join("\n")
  })
]

/** Lines from stdin, buffered, so that piped answers are not lost. */
const lines = Readline.createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]()
const ask = (question: string) =>
  Effect.promise(async () => {
    process.stdout.write(question)
    const next = await lines.next()
    const answer = next.done === true ? undefined : next.value.trim()
    if (!process.stdin.isTTY) process.stdout.write(`${answer ?? "(end of input)"}\n`)
    return answer
  })

/** Asks about one pending call until the answer makes sense; end of input rejects. */
const decide = (pending: AgentExit.PendingCall): Effect.Effect<Decision.CallDecision> =>
  Effect.gen(function*() {
    const { call } = pending
    yield* Console.log(`\n${call.name}(${JSON.stringify(call.args)}) [${call.id}]`)
    while (true) {
      const choice = yield* ask("  [a]pprove, [e]dit arguments, [r]eject, re[p]ly instead? ")
      if (choice === undefined) return Decision.reject({ message: "no answer" })
      switch (choice.toLowerCase()) {
        case "a":
          return Decision.approve()
        case "e": {
          const edited = yield* ask("  new arguments (JSON): ")
          try {
            return Decision.approve({ args: JSON.parse(edited ?? "") })
          } catch {
            yield* Console.log("  that is not JSON")
            break
          }
        }
        case "r": {
          const reason = yield* ask("  reason: ")
          return Decision.reject(reason === undefined || reason === "" ? {} : { message: reason })
        }
        case "p": {
          const reply = yield* ask("  reply for the model: ")
          return Decision.reply({ value: reply ?? "" })
        }
        default:
          yield* Console.log("  please answer a, e, r or p")
      }
    }
  })

const program = Effect.gen(function*() {
  const agent = Agent.make({ tools: [sendEmail, deleteFile, chargeCard], system: "You are an operations assistant." })
  const input = "Announce the release to the team, clean up the old log, and charge the customer €120."
  yield* Console.log(`user: ${input}\n`)
  let exit = yield* Agent.run(agent, { input })
  while (exit._tag === "Paused") {
    yield* showExit(exit)
    const decisions: Record<string, Decision.CallDecision> = {}
    for (const pending of exit.pending) decisions[pending.call.id] = yield* decide(pending)
    yield* Console.log("")
    exit = yield* Agent.resume(agent, exit.checkpoint, Decision.byCall(decisions))
  }
  yield* showExit(exit)
}).pipe(
  Effect.provide(traced(modelFromEnv(script))),
  Effect.ensuring(Effect.sync(() => void lines.return?.()))
)

main(program)
