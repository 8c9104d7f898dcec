/**
 * The approval inbox, alone: `pnpm inbox` starts it on 127.0.0.1 with a payments agent over the
 * SQLite store — the inbox logs the page's address as it starts — then makes sure one run, a
 * transfer, is waiting for approval. Open the page, edit the amount if you like, approve, and
 * watch the run complete in the live events. The store is a file: runs paused by another
 * process on it (the same agent) show up too, and a paused run outlives a restart. A port that
 * is taken (another inbox?) is said in a line naming `INBOX_PORT`.
 *
 * Environment: `INBOX_DB` (the SQLite file; default `agentfx-inbox.db` in the OS temp folder),
 * `INBOX_PORT` (default 4180; 0 picks a free port), `INBOX_HOST` (default 127.0.0.1),
 * `INBOX_TOKEN` (admits other machines that present it: open the printed `?token=` link once).
 * The model is scripted unless the environment names one (see model.ts).
 */
import { Agent, type Message, RunStore, ScriptedChatModel, Tool } from "@agentfx/core"
import { Authorization, Inbox } from "@agentfx/inbox"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { HttpServer } from "effect/http"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Redacted, Schema } from "effect"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { modelFromEnv } from "./model.js"

const transfer = Tool.make("transfer", {
  description: "Sends money from the company account to a person (euros)",
  parameters: Schema.Struct({
    to: Schema.String.check(Schema.isMinLength(1)),
    amount: Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(10_000)),
    memo: Schema.optional(Schema.String.check(Schema.isMaxLength(140)))
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
const port = Number(env("INBOX_PORT") ?? 4180)

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
  if (token !== undefined) {
    const server = yield* HttpServer.HttpServer
    const listening = server.address._tag === "UnixPathAddress" ? port : server.address.port
    yield* Console.log(`with the token, open once: http://${env("INBOX_HOST") ?? "127.0.0.1"}:${listening}/inbox?token=${encodeURIComponent(token)}`)
  }
  yield* demoRun
  return yield* Effect.never
})

program.pipe(
  Effect.provide(Inbox.serve({ // logs "Inbox at http://…/inbox" once it listens
    agents: [payments],
    port,
    host: env("INBOX_HOST") ?? "127.0.0.1",
    authorize: Authorization.loopbackOrToken(token === undefined ? {} : { token: Redacted.make(token) })
  })),
  Effect.catchTag("PortInUse", (error) =>
    Console.error(
      `Port ${error.port} of ${error.host} is in use (another inbox?): set INBOX_PORT to another port, e.g. INBOX_PORT=${error.port + 1} pnpm inbox (INBOX_PORT=0 picks a free one)`
    ).pipe(Effect.andThen(Effect.sync(() => void (process.exitCode = 1))))),
  Effect.provide(modelFromEnv(script)),
  // the run store and chat memory the demo run and the inbox share: one SQLite file
  Effect.provide(SqliteStore.layer({ filename })),
  NodeRuntime.runMain // its logger prints "Inbox at …" as a plain line
)
