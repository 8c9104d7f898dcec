/**
 * The approval inbox, alone: `pnpm inbox` starts it on 127.0.0.1 with a payments agent and one
 * paused run — a transfer waiting for approval — then prints the page's address. Open it,
 * edit the amount if you like, approve, and watch the run complete in the live events.
 *
 * Environment: `INBOX_PORT` (default 4180; 0 picks a free port), `INBOX_HOST` (default
 * 127.0.0.1), `INBOX_TOKEN` (admits other machines that present it: open the printed
 * `?token=` link once). The model is scripted unless the environment names one (see model.ts).
 */
import { Agent, ChatMemory, type Message, RunStore, ScriptedChatModel, Tool } from "@agentfx/core"
import { Authorization, Inbox } from "@agentfx/inbox"
import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer, Redacted, Schema } from "effect"
import { modelFromEnv } from "./model.js"

const transfer = Tool.make("transfer", {
  description: "Sends money from the company account to a person (euros)",
  parameters: Schema.Struct({
    to: Schema.String.pipe(Schema.minLength(1)),
    amount: Schema.Number.pipe(Schema.positive(), Schema.lessThanOrEqualTo(10_000)),
    memo: Schema.optional(Schema.String.pipe(Schema.maxLength(140)))
  }),
  success: Schema.String,
  needsApproval: true,
  handler: ({ amount, to }) => Effect.succeed(`sent €${amount} to ${to}`)
})

const balance = Tool.make("balance", {
  description: "The company account's balance (euros)",
  parameters: Schema.Struct({}),
  success: Schema.Number,
  handler: () => Effect.succeed(12_400)
})

export const payments = Agent.make({
  name: "payments",
  tools: [transfer, balance],
  system: "You pay people from the company account. Use the transfer tool."
})

/** Offline: the model asks for one transfer, then reports what came of it. */
const script: ScriptedChatModel.Script = (request) => {
  if (request.messages.at(-1)?._tag === "User") {
    return ScriptedChatModel.toolCalls({ id: "call_1", name: "transfer", args: { to: "Ada Lovelace", amount: 250, memo: "Invoice 7" } })
  }
  const results = request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult")
  return ScriptedChatModel.text(results.map((r) => (r.isError ? `Not done: ${JSON.stringify(r.content)}` : `Done: ${JSON.stringify(r.content)}`)).join(" "))
}

const env = (name: string) => {
  const value = process.env[name]?.trim()
  return value === undefined || value === "" ? undefined : value
}
const token = env("INBOX_TOKEN")

const program = Effect.gen(function*() {
  const exit = yield* Agent.run(payments, { input: "Pay Ada Lovelace 250 euros for invoice 7", conversationId: "demo-1" })
  yield* Console.log(exit._tag === "Paused" ? `a demo run is waiting for approval: ${exit.runId}` : `the demo run did not pause: ${exit.text}`)
  const server = yield* HttpServer.HttpServer
  const port = server.address._tag === "TcpAddress" ? server.address.port : 0
  yield* Console.log(`inbox: http://${env("INBOX_HOST") ?? "127.0.0.1"}:${port}/inbox${token === undefined ? "" : `?token=${encodeURIComponent(token)}`}`)
  return yield* Effect.never
})

// the run store and chat memory the demo run and the inbox share (in memory: gone when the process ends)
const Stores = Layer.mergeAll(RunStore.layerMemory(), ChatMemory.layerMemory)

program.pipe(
  Effect.provide(Inbox.serve({
    agents: [payments],
    port: Number(env("INBOX_PORT") ?? 4180),
    host: env("INBOX_HOST") ?? "127.0.0.1",
    authorize: Authorization.loopbackOrToken(token === undefined ? {} : { token: Redacted.make(token) })
  })),
  Effect.provide(modelFromEnv(script)),
  Effect.provide(Stores),
  NodeRuntime.runMain
)
