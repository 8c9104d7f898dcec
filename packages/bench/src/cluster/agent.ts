/**
 * The cluster bench's agent: a 3-step run with one approval — `lookup`, then `transfer` (needs
 * approval: the run pauses), then the answer. Tools do nothing but count their executions per
 * call id (in the runner process), so that the bench measures the runtime and the engine.
 */
import { Agent, type ChatModel, type Message, ScriptedChatModel, Tool } from "@agentfx/core"
import type { Layer } from "effect"
import { Effect, Schema } from "effect"

/** Executions per call id, in this process. */
export const executions = new Map<string, number>()

const counted = (name: string, needsApproval: boolean) =>
  Tool.make(name, {
    description: `Tool ${name}`,
    parameters: Schema.Struct({}),
    success: Schema.String,
    needsApproval,
    handler: (_, call) => Effect.sync(() => (executions.set(call.callId, (executions.get(call.callId) ?? 0) + 1), `${name} done`))
  })

export const benchAgent = Agent.make({ name: "bench", tools: [counted("lookup", false), counted("transfer", true)] })

/** The model: `lookup-<n>`, then `transfer-<n>` (n: the user's input), then "paid". */
export const benchModel: Layer.Layer<ChatModel.ChatModel | ScriptedChatModel.ScriptedChatModel> = ScriptedChatModel.layer((request) => {
  const last = request.messages.at(-1)
  const n = request.messages.find((m): m is Message.UserMessage => m._tag === "User")?.text ?? ""
  if (last?._tag === "User") return ScriptedChatModel.toolCalls({ id: `lookup-${n}`, name: "lookup", args: {} })
  if (last?._tag === "ToolResult" && last.toolName === "lookup") return ScriptedChatModel.toolCalls({ id: `transfer-${n}`, name: "transfer", args: {} })
  return ScriptedChatModel.text("paid")
}, { recordRequests: false })
