/**
 * Events, middleware and tracing on one run. Run: `pnpm tsx examples/observability.ts`.
 *
 * - an observer Layer prints every lifecycle event;
 * - a tool middleware logs each call's outcome and duration (it sees timeouts too);
 * - `@effect/opentelemetry` exports the run's spans with the OpenTelemetry console exporter,
 *   with their GenAI attributes (`gen_ai.operation.name`, `gen_ai.request.model`,
 *   `gen_ai.usage.*`, `gen_ai.response.finish_reasons`, `gen_ai.tool.*`).
 */
import { Agent, AgentEvent, Middleware, ScriptedChatModel, Tool } from "@agentfx/core"
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { ConsoleSpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Clock, Effect, Layer, Schema } from "effect"

const getWeather = Tool.make("get_weather", {
  description: "Current weather for a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.String,
  handler: ({ city }) => Effect.sleep("20 millis").pipe(Effect.as(`Sunny in ${city}`))
})

const slowForecast = Tool.make("forecast", {
  description: "Ten-day forecast (slow service)",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.String,
  timeout: "100 millis",
  handler: () => Effect.sleep("5 seconds").pipe(Effect.as("rain, probably"))
})

const logToolCalls = Middleware.make({
  tool: (input, next) =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const result = yield* next(input)
      const outcome = result._tag === "Failed" ? `${result.error._tag}: ${result.error.message}` : result._tag
      console.log(`[middleware] ${input.call.name} → ${outcome} (${(yield* Clock.currentTimeMillis) - start} ms)`)
      return result
    })
})

const printEvents = AgentEvent.layer((event) =>
  Effect.sync(() => {
    switch (event._tag) {
      case "ToolStarted":
        return console.log(`[event] ${event._tag} ${event.toolName} ${JSON.stringify(event.args)}`)
      case "TextDelta":
        return console.log(`[event] ${event._tag} ${JSON.stringify(event.text)}`)
      case "RunCompleted":
        return console.log(`[event] ${event._tag}: ${event.exit.text}`)
      default:
        return console.log(`[event] ${event._tag}`)
    }
  })
)

const tracing = NodeSdk.layer(() => ({
  resource: { serviceName: "agentfx-example" },
  spanProcessor: new SimpleSpanProcessor(new ConsoleSpanExporter())
}))

const model = ScriptedChatModel.layer([
  {
    toolCalls: [
      { id: "call_1", name: "get_weather", args: { city: "Oslo" } },
      { id: "call_2", name: "forecast", args: { city: "Oslo" } }
    ],
    usage: { inputTokens: 182, outputTokens: 41, totalTokens: 223 }
  },
  {
    chunks: ["Sunny in Oslo today; ", "the forecast service timed out."],
    usage: { inputTokens: 260, outputTokens: 12, totalTokens: 272 }
  }
])

const program = Effect.gen(function*() {
  const agent = Agent.make({
    name: "weather",
    tools: [getWeather, slowForecast],
    middleware: [logToolCalls],
    settings: { temperature: 0.2, maxOutputTokens: 500, stop: ["END"] }
  })
  const exit = yield* Agent.run(agent, { input: "Weather in Oslo, and the forecast?" })
  console.log(`[run] ${exit._tag}`)
})

NodeRuntime.runMain(Effect.scoped(
  Effect.gen(function*() {
    const context = yield* Layer.build(Layer.mergeAll(model, printEvents, tracing))
    yield* program.pipe(Effect.provide(context))
    yield* Effect.sleep("50 millis") // let the observer print the last events
  })
))
