import { OpenAiChatModel } from "@agentfx/ai"
import { Agent, Decision, ScriptedChatModel, Tool, ToolCallingManager } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, Schema } from "effect"

const getWeather = Tool.make("get_weather", {
  description: "Current weather for a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.String,
  timeout: "2 seconds", // interrupts the handler: requests aborted, finalizers run
  handler: ({ city }) => Effect.succeed(`Sunny in ${city}`)
})

const agent = Agent.make({ tools: [getWeather], system: "You are a weather assistant." })

const program = Effect.gen(function*() {
  let exit = yield* Agent.run(agent, { input: "Weather in Oslo?" })
  while (exit._tag === "Paused") { // a call that needs approval, or an environment error: a person decides
    console.log("paused for", exit.kind, exit.pending.map((p) => p.call.name))
    const decision = exit.kind === "approval" ? Decision.approveAll() : Decision.retry()
    exit = yield* Agent.resume(agent, exit.runId, decision) // exactly one resume of a pause proceeds
  }
  console.log(exit.text)
})

// OpenAI when OPENAI_API_KEY is set (OPENAI_MODEL, OPENAI_BASE_URL optional), else a scripted model
const Model = OpenAiChatModel.layerConfig().pipe(Layer.catch(() =>
  ScriptedChatModel.layer([
    ScriptedChatModel.toolCalls({ id: "call_1", name: "get_weather", args: { city: "Oslo" } }),
    ScriptedChatModel.text("Sunny in Oslo. (A scripted answer: set OPENAI_API_KEY for a real model.)")
  ])
))

program.pipe(Effect.provide(Layer.mergeAll(Model, ToolCallingManager.bounded({ permits: 4 }))), NodeRuntime.runMain)
