/**
 * The approval inbox, alone: `pnpm inbox` starts it on 127.0.0.1 with a payments agent over the
 * SQLite store, makes sure one run — a transfer — is waiting for approval, then prints the
 * page's address. Open it, edit the amount if you like, approve, and watch the run complete in
 * the live events. The store is a file: runs paused by another process on it (the same agent)
 * show up too, and a paused run outlives a restart.
 *
 * Environment: `INBOX_DB` (the SQLite file; default `agentfx-inbox.db` in the OS temp folder),
 * `INBOX_PORT` (default 4180; 0 picks a free port), `INBOX_HOST` (default 127.0.0.1),
 * `INBOX_TOKEN` (admits other machines that present it: open the printed `?token=` link once).
 * The model is scripted unless the environment names one (see model.ts).
 */
import { Agent, type Message, RunStore, ScriptedChatModel, Tool } from "@agentfx/core"
import { Authorization, Inbox } from "@agentfx/inbox"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Redacted, Schema } from "effect"
import { tmpdir } from "node:os"
import { join } from "node:path"
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
const filename = env("INBOX_DB") ?? join(tmpdir(), "agentfx-inbox.db")

/** A demo run waiting for approval: the one the store already has, else a new one. */
const demoRun = Effect.gen(function*() {
  const store = yield* RunStore.RunStore
  const [waiting] = yield* store.list({ status: "paused", agent: payments.name, limit: 1 })
  if (waiting !== undefined) return yield* Console.log(`a demo run is waiting for approval: ${waiting.runId}`)
  const exit = yield* Agent.run(payments, { input: "Pay Ada Lovelace 250 euros for invoice 7", conversationId: `demo-${Date.now()}` })
  yield* Console.log(exit._tag === "Paused" ? `a demo run is waiting for approval: ${exit.runId}` : `the demo run did not pause: ${exit.text}`)
})

const program = Effect.gen(function*() {
  yield* Console.log(`store: ${filename}`)
  yield* demoRun
  const server = yield* HttpServer.HttpServer
  const port = server.address._tag === "TcpAddress" ? server.address.port : 0
  yield* Console.log(`inbox: http://${env("INBOX_HOST") ?? "127.0.0.1"}:${port}/inbox${token === undefined ? "" : `?token=${encodeURIComponent(token)}`}`)
  return yield* Effect.never
})

program.pipe(
  Effect.provide(Inbox.serve({
    agents: [payments],
    port: Number(env("INBOX_PORT") ?? 4180),
    host: env("INBOX_HOST") ?? "127.0.0.1",
    authorize: Authorization.loopbackOrToken(token === undefined ? {} : { token: Redacted.make(token) })
  })),
  Effect.provide(modelFromEnv(script)),
  // the run store and chat memory the demo run and the inbox share: one SQLite file
  Effect.provide(SqliteStore.layer({ filename })),
  NodeRuntime.runMain
)
