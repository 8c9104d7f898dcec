/** The agent of the concurrent resumes (`Processes.test.ts` pauses it, children resume it). */
import { Agent, type ChatModel, ScriptedChatModel, Tool } from "@agentfx/core"
import * as SqlClient from "effect/sql/SqlClient"
import type { Layer } from "effect"
import { Effect, Schema } from "effect"

/** `transfer` needs approval and records its execution (tool name and process) in `executions`. */
export const transferAgent: Agent.Agent<{}, SqlClient.SqlClient> = Agent.make({
  name: "bank",
  tools: [Tool.make("transfer", {
    description: "Sends money",
    parameters: Schema.Struct({ amount: Schema.Number }),
    success: Schema.String,
    needsApproval: true,
    handler: ({ amount }) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO executions (tool, pid) VALUES (${"transfer"}, ${process.pid})`).pipe(
        Effect.as(`sent ${amount}`),
        Effect.orDie
      )
  })]
})

export const transferModel: Layer.Layer<ChatModel.ChatModel | ScriptedChatModel.ScriptedChatModel> = ScriptedChatModel.layer((request) =>
  request.messages.at(-1)?._tag === "User"
    ? ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { amount: 100 } })
    : ScriptedChatModel.text("done")
)

