/**
 * Approval in the terminal: the model wants to run three tools that need approval; the run pauses and
 * you decide for each call — approve it, edit its arguments, reject it with a reason, or
 * reply in its place — then the run resumes from its checkpoint. Edited arguments that the
 * tool refuses are shown, and only those calls are asked again: the other decisions stand.
 * Run in a terminal: `pnpm tsx examples/approval.ts` (Ctrl-C quits, leaving the run paused).
 */
import { Agent, Decision, ScriptedChatModel, Tool } from "@agentfx/core"
import type { AgentExit, Message } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Result, Schema } from "effect"
import { Prompt } from "effect/cli"
import { modelFromEnv } from "./model.js"
import { showExit, traced, tracedTool } from "./trace.js"

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

const isJson = (text: string) => Result.isSuccess(Result.try(() => JSON.parse(text)))

/** Asks about one pending call: approve, edit (JSON, asked again until it parses), reject or reply. */
const decide = ({ call }: AgentExit.PendingCall) =>
  Effect.gen(function*() {
    const choice = yield* Prompt.Select({
      message: `${call.name}(${JSON.stringify(call.args)}) [${call.id}]`,
      choices: [
        { title: "approve", value: "approve" },
        { title: "edit the arguments", value: "edit" },
        { title: "reject", value: "reject" },
        { title: "reply instead", value: "reply" }
      ] as const
    })
    switch (choice) {
      case "approve":
        return Decision.approve()
      case "edit": {
        const edited = yield* Prompt.String({
          message: "new arguments (JSON)",
          default: JSON.stringify(call.args),
          validate: (text) => isJson(text) ? Effect.succeed(text) : Effect.fail("that is not JSON")
        })
        return Decision.approve({ args: JSON.parse(edited) })
      }
      case "reject": {
        const reason = yield* Prompt.String({ message: "reason (optional)" })
        return Decision.reject(reason === "" ? {} : { message: reason })
      }
      case "reply":
        return Decision.reply({ value: yield* Prompt.String({ message: "reply for the model" }) })
    }
  })

/**
 * Decides every pending call, then resumes. Edited arguments the tools refuse consume
 * nothing: the problems are shown and only those calls are asked again.
 */
const decideAndResume = (agent: Agent.Agent, paused: AgentExit.Paused) =>
  Effect.gen(function*() {
    const decisions: Record<string, Decision.CallDecision> = {}
    let toAsk = paused.pending
    while (true) {
      for (const pending of toAsk) decisions[pending.call.id] = yield* decide(pending)
      const resumed = yield* Agent.resume(agent, paused.checkpoint, Decision.byCall(decisions)).pipe(
        Effect.map(Result.succeed),
        Effect.catchTag("InvalidEditedArguments", (refused) => Effect.succeed(Result.fail(refused.problems)))
      )
      if (Result.isSuccess(resumed)) return resumed.success
      for (const problem of resumed.failure) yield* Console.log(`  ${problem.callId}: ${problem.message}`)
      const refused = new Set(resumed.failure.map((problem) => problem.callId))
      toAsk = paused.pending.filter((pending) => refused.has(pending.call.id))
    }
  })

const program = Effect.gen(function*() {
  const agent = Agent.make({ tools: [sendEmail, deleteFile, chargeCard], system: "You are an operations assistant." })
  const input = "Announce the release to the team, clean up the old log, and charge the customer €120."
  yield* Console.log(`user: ${input}\n`)
  let exit = yield* Agent.run(agent, { input })
  while (exit._tag === "Paused") {
    yield* showExit(exit)
    exit = yield* decideAndResume(agent, exit)
  }
  yield* showExit(exit)
}).pipe(
  // Ctrl-C, Ctrl-D or Esc at a prompt: stop, as Ctrl-C does anywhere else
  Effect.catchTag("QuitError", () => Effect.interrupt),
  Effect.provide([traced(modelFromEnv(script)), NodeServices.layer])
)

const main: Effect.Effect<void, unknown> = process.stdin.isTTY
  ? program
  : Effect.fail("approval.ts asks its questions in a terminal: run it in one")

NodeRuntime.runMain(main)
