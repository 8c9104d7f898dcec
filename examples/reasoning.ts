/**
 * Reasoning kept across turns: the model's reasoning that its provider requires back —
 * Anthropic's thinking blocks with their signatures, OpenAI's encrypted reasoning items — is
 * kept in the assistant message, in the checkpoint of a paused run, and sent back with the tool
 * results to the provider that made it (never to another one). Offline, the scripted model
 * returns a thinking block, pauses for approval, and finds its reasoning again in the request
 * after the resume — from the checkpoint's JSON, as another process would. Run:
 * `pnpm tsx examples/reasoning.ts` (with `ANTHROPIC_API_KEY`, Claude thinks for real:
 * `thinking: { budgetTokens: 1024 }`; with `OPENAI_API_KEY` and `OPENAI_MODEL=o4-mini`, OpenAI
 * sends its reasoning encrypted).
 */
import { Agent, Decision, type Message, type Part, ScriptedChatModel, Tool } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Schema } from "effect"
import { modelFromEnv } from "./model.js"
import { showExit, traced } from "./trace.js"

const refund = Tool.make("refund", {
  description: "Refunds an order",
  parameters: Schema.Struct({ order: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true,
  handler: ({ amount, order }) => Effect.succeed(`refunded ${amount} for ${order}`)
})

/** A thinking block as Anthropic returns it: its text, and the signature Anthropic checks when it comes back. */
const thinking: Part.ReasoningPart = {
  _tag: "Reasoning",
  provider: "anthropic:https://api.anthropic.com",
  text: "The order arrived broken: a full refund of 40 is fair.",
  data: { type: "thinking", thinking: "The order arrived broken: a full refund of 40 is fair.", signature: "EuYBCkQYAiJAgCs1le6" }
}

/** The reasoning of the request's assistant messages: what the model gets back. */
const reasoningIn = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((message) => (message._tag === "Assistant" ? message.reasoning ?? [] : []))

/** Offline: think and ask for the refund; after the resume, find the thinking again. */
const script: ScriptedChatModel.Script = [
  { toolCalls: [{ id: "call_1", name: "refund", args: { order: "A-17", amount: 40 } }], reasoning: [thinking] },
  (request) => {
    const back = reasoningIn(request.messages)
    return ScriptedChatModel.text(
      `Refunded. (My reasoning came back with the tool result: ${back.length} block, signed ${(back[0]?.data as { signature?: string }).signature}.)`
    )
  }
]

const agent = Agent.make({ tools: [refund], system: "You handle refunds. Think before you refund." })

const program = Effect.gen(function*() {
  const input = "Order A-17 arrived broken. Please refund it."
  yield* Console.log(`user: ${input}\n`)
  const paused = yield* Agent.run(agent, { input })
  yield* showExit(paused)
  if (paused._tag !== "Paused") return
  const json = JSON.stringify(paused.checkpoint)
  const kept = reasoningIn(JSON.parse(json).messages)
  yield* Console.log(`  the checkpoint (format ${paused.checkpoint.version}) keeps ${kept.length} reasoning block(s) of ${kept.map((r) => r.provider).join(", ")}`)
  yield* Console.log("\nA person approves; the run resumes from the checkpoint's JSON:\n")
  yield* showExit(yield* Agent.resume(agent, JSON.parse(json), Decision.approveAll()))
}).pipe(Effect.provide(traced(modelFromEnv(script, { thinking: { budgetTokens: 1024 } }))))

NodeRuntime.runMain(program)
