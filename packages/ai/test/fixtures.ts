import { Agent, type AgentError, Tool, Toolkit } from "@agentfx/core"
import { Effect, Schema } from "effect"

/** A weather tool with an optional parameter, so the schema sent shows `required` faithfully. */
export const weatherTool = Tool.make("get_weather", {
  description: "Current weather for a city",
  parameters: Schema.Struct({ city: Schema.String, unit: Schema.optional(Schema.Literal("C", "F")) }),
  success: Schema.String,
  handler: ({ city }) => Effect.succeed(`Sunny in ${city}`)
})

/** The JSON Schema every provider must receive for `get_weather` (no `$schema` key). */
export const weatherSchema = {
  type: "object",
  required: ["city"],
  properties: { city: { type: "string" }, unit: { type: "string", enum: ["C", "F"] } },
  additionalProperties: false
}

export const weatherAgent: Effect.Effect<Agent.Agent<{}>, AgentError.InvalidAgent | Toolkit.InvalidToolkit> = Effect.gen(function*() {
  const toolkit = yield* Toolkit.make(weatherTool)
  return yield* Agent.make({ toolkit, system: "You are a weather bot." })
})
