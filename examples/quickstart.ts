import { OpenAiChatModel } from "@agentfx/ai"
import { Agent, Decision, Tool, ToolCallingManager } from "@agentfx/core"
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
    console.log("paused for", exit.reason, exit.pending.map((p) => p.call.name))
    const decision = exit.reason === "approval" ? Decision.approveAll() : Decision.retry()
    exit = yield* Agent.resume(agent, exit.runId, decision) // exactly one resume of a pause proceeds
  }
  console.log(exit.text)
})

const AppLive = Layer.mergeAll(OpenAiChatModel.layerConfig(), ToolCallingManager.bounded({ permits: 4 }))
Effect.runPromise(program.pipe(Effect.provide(AppLive)))
