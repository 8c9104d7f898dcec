/**
 * A library module of the consumer: tools and an agent, exported. Its declaration build
 * (`tsc -p tsconfig.json`) must name every type through "@agentfx/core" (no TS2742).
 */
import { Agent, Tool } from "@agentfx/core"
import { Effect, Schema } from "effect"

export const getWeather = Tool.make("get_weather", {
  description: "Current weather for a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.String,
  timeout: "2 seconds",
  handler: ({ city }) => Effect.succeed(`Sunny in ${city}`)
})

export const sendEmail = Tool.make("send_email", {
  description: "Sends an email",
  parameters: Schema.Struct({ to: Schema.String, body: Schema.String }),
  success: Schema.String,
  needsApproval: true,
  handler: ({ to }) => Effect.succeed(`sent to ${to}`)
})

/** Runs in a worker thread: the pool's entry must load from the installed package. */
export const crunch = Tool.make("crunch", {
  description: "Sums 0..n-1",
  parameters: Schema.Struct({ n: Schema.Number }),
  success: Schema.Number,
  isolation: "worker",
  module: Tool.workerModule(import.meta.url, "./crunch.worker"),
  export: "sum",
  timeout: "10 seconds"
})

export const weatherAgent = Agent.make({ tools: [getWeather, sendEmail, crunch], system: "You are a weather assistant." })
