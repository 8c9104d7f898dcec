import { Agent, ScriptedChatModel, Tool } from "@agentfx/core"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
const tool = Tool.make("double", { description: "d", parameters: Schema.Struct({ n: Schema.Number }), success: Schema.Number, handler: ({ n }) => Effect.succeed(n * 2) })
const agent = Agent.make({ tools: [tool] })
const model = ScriptedChatModel.layer((req) => req.messages.at(-1)?._tag === "ToolResult" ? { text: "done" } : { toolCalls: [{ name: "double", args: { n: 1 } }] }, { recordRequests: false })
const rt = ManagedRuntime.make(model)
const one = Agent.run(agent, { input: "go" })
const N = Number(process.argv[2] ?? 20000)
for (let r = 0; r < 3; r++) {
  const t = performance.now()
  for (let i = 0; i < N; i++) await rt.runPromise(one)
  console.log(((performance.now() - t) * 1000 / N).toFixed(2), "µs/run (sequential)")
}
const t2 = performance.now()
await Promise.all(Array.from({ length: N }, () => rt.runPromise(one)))
console.log(((performance.now() - t2) * 1000 / N).toFixed(2), "µs/run (all at once)")
