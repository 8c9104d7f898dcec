/**
 * A library module of the consumer on `@agentfx/sql` with only the SQLite driver installed: a
 * payments agent whose transfers need approval, and its store Layer. Type-checked with
 * `types: []` and without `skipLibCheck` (tsconfig.no-types.json), so `@agentfx/sql`'s
 * declarations must not need `@effect/sql-pg`.
 */
import { Agent, type Message, ScriptedChatModel, Tool } from "@agentfx/core"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { Effect, Schema } from "effect"

export const transfer = Tool.make("transfer", {
  description: "Sends money (euros)",
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true,
  handler: ({ amount, to }) => Effect.succeed(`sent ${amount} to ${to}`)
})

export const payments = Agent.make({ name: "payments", tools: [transfer] })

/** The model asks for one transfer, then reports the tools' results. */
export const script: ScriptedChatModel.Script = (request) =>
  request.messages.at(-1)?._tag === "User"
    ? ScriptedChatModel.toolCalls({ id: "call_1", name: "transfer", args: { to: "ada", amount: 500 } })
    : ScriptedChatModel.text(
      request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult").map((m) => `${m.toolName}: ${m.content}`).join("; ")
    )

/** The run store and chat memory in a SQLite file. */
export const StoreLive = (filename: string) => SqliteStore.layer({ filename })
