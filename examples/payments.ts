/**
 * The payments agent the endpoint examples serve (chat.ts, agui.ts): one tool, `transfer`, which
 * asks a person before it sends more than €100.
 */
import { Agent, Tool } from "@agentfx/core"
import { Effect, Schema } from "effect"

const transfer = Tool.make("transfer", {
  description: "Sends money to a person (euros)",
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: ({ amount }) => Effect.succeed(amount > 100),
  handler: ({ amount, to }) => Effect.succeed(`sent €${amount} to ${to}`)
})

export const payments = Agent.make({ name: "payments", tools: [transfer], system: "You move money for the user." })
