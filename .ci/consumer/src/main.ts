/**
 * Runs the agent under plain `node` on the built-in scripted model: a tool in process, a tool
 * in a worker thread, a pause for approval, the resume. Prints what `run.sh` expects.
 */
import { Agent, Decision, ScriptedChatModel, WorkerPool } from "@agentfx/core"
import type { Message } from "@agentfx/core"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { weatherAgent } from "./index.js"

const script: ScriptedChatModel.Script = [
  ScriptedChatModel.toolCalls(
    { id: "call_1", name: "get_weather", args: { city: "Oslo" } },
    { id: "call_2", name: "crunch", args: { n: 10 } }
  ),
  ScriptedChatModel.toolCalls({ id: "call_3", name: "send_email", args: { to: "ada@example.com", body: "Sunny" } }),
  (request) => ({
    text: request.messages
      .filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult")
      .map((m) => `${m.toolName}: ${m.content}`)
      .join("; ")
  })
]

const program = Effect.gen(function*() {
  let exit = yield* Agent.run(weatherAgent, { input: "Weather in Oslo? Crunch 10, then email Ada." })
  while (exit._tag === "Paused") {
    yield* Console.log(`paused for ${exit.kind}: ${exit.pending.map((p) => p.call.name).join(", ")}`)
    exit = yield* Agent.resume(weatherAgent, exit.checkpoint, Decision.approveAll())
  }
  yield* Console.log(`completed: ${exit.text}`)
})

program.pipe(
  Effect.provide(Layer.mergeAll(ScriptedChatModel.layer(script), WorkerPool.layer({ size: 1 }))),
  NodeRuntime.runMain
)
