/**
 * Structured output: the agent's final answer is a typed value. `Agent.make({ output })`
 * takes a Schema; the adapters ask the provider for its JSON Schema natively (OpenAI:
 * `json_schema`; Anthropic: an answer tool), the run looks a tool up on the way, and the
 * answer is decoded into `Completed.value`. An answer that does not decode is fed back to
 * the model with the problem (up to `outputRetries` times). Run: `pnpm tsx examples/structured-output.ts`.
 */
import { Agent, ScriptedChatModel, Tool } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Schema } from "effect"
import { modelFromEnv } from "./model.js"
import { showExit, traced } from "./trace.js"

/** What the agent answers: a value of this Schema, not a paragraph. */
const Outfit = Schema.Struct({
  city: Schema.String,
  celsius: Schema.Number,
  sky: Schema.Literals(["sunny", "cloudy", "rain", "snow"]),
  wear: Schema.Array(Schema.String)
})

const getWeather = Tool.make("get_weather", {
  description: "Current weather for a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Number, sky: Schema.String }),
  handler: ({ city }) => Effect.succeed({ city, celsius: 4, sky: "rain" })
})

/** Offline: the model looks the weather up, answers with a string where a number belongs, then corrects itself. */
const script: ScriptedChatModel.Script = [
  ScriptedChatModel.toolCalls({ id: "call_1", name: "get_weather", args: { city: "Oslo" } }),
  ScriptedChatModel.text(`{"city":"Oslo","celsius":"4","sky":"rain","wear":["raincoat"]}`),
  ScriptedChatModel.text(`{"city":"Oslo","celsius":4,"sky":"rain","wear":["raincoat","wool sweater","boots"]}`)
]

const agent = Agent.make({
  tools: [getWeather],
  system: "You dress people for the weather. Look the weather up first, then answer.",
  output: Outfit,
  outputRetries: 2,
  settings: { temperature: 0 }
})

const program = Effect.gen(function*() {
  const input = "What should I wear in Oslo today?"
  yield* Console.log(`user: ${input}`)
  yield* Console.log(`asked for: ${agent.output!.format.name} ${JSON.stringify(agent.output!.format.schema)}\n`)
  const exit = yield* Agent.run(agent, { input })
  if (exit._tag !== "Completed") return yield* showExit(exit)
  for (const message of exit.messages) {
    if (message._tag === "User" && message.text.startsWith("Your answer does not match")) {
      yield* Console.log(`fed back to the model: ${message.text}`)
    }
  }
  yield* showExit(exit)
  const outfit = exit.value // typed: { city: string; celsius: number; sky: "sunny" | …; wear: string[] }
  yield* Console.log(`\nvalue, decoded with Outfit:`)
  yield* Console.log(`  city: ${outfit.city}`)
  yield* Console.log(`  celsius: ${outfit.celsius} (a ${typeof outfit.celsius})`)
  yield* Console.log(`  sky: ${outfit.sky}`)
  yield* Console.log(`  wear: ${outfit.wear.join(", ")}`)
}).pipe(Effect.provide(traced(modelFromEnv(script))))

NodeRuntime.runMain(program)
