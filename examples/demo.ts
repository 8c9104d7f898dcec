/**
 * The main demo: a weather agent, shown step by step. Two lookups run concurrently, a slow
 * forecast is stopped by its timeout, and sending the email pauses the run for approval;
 * the checkpoint (plain JSON) is resumed. Run: `pnpm demo` — offline on a scripted model,
 * or on a real one (see examples/model.ts).
 */
import { Agent, Decision, ScriptedChatModel, Tool, ToolCallingManager, ToolError } from "@agentfx/core"
import type { Message } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Schema } from "effect"
import { modelFromEnv } from "./model.js"
import { showExit, traced, tracedTool } from "./trace.js"

const weather: Record<string, { readonly sky: string; readonly celsius: number }> = {
  Oslo: { sky: "sunny", celsius: 21 },
  Rome: { sky: "cloudy", celsius: 27 },
  Lima: { sky: "foggy", celsius: 16 }
}

const getWeather = Tool.make("get_weather", {
  description: "Current weather for a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ city: Schema.String, sky: Schema.String, celsius: Schema.Number }),
  timeout: "2 seconds",
  handler: ({ city }, context) =>
    tracedTool(
      context,
      Effect.sleep("80 millis").pipe(Effect.andThen(
        weather[city] === undefined
          ? Effect.fail(ToolError.semantic(`unknown city "${city}"; known: ${Object.keys(weather).join(", ")}`))
          : Effect.succeed({ city, ...weather[city] })
      ))
    )
})

const getForecast = Tool.make("get_forecast", {
  description: "Three-day forecast for a city (a slow service)",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.String,
  timeout: "500 millis", // the service takes 2 s: the handler is interrupted and the model told
  handler: ({ city }, context) => tracedTool(context, Effect.sleep("2 seconds").pipe(Effect.as(`${city}: sun, sun, rain`)))
})

const sendEmail = Tool.make("send_email", {
  description: "Sends an email",
  parameters: Schema.Struct({ to: Schema.String, body: Schema.String }),
  success: Schema.String,
  needsApproval: true, // the default gate pauses the run for a person's approval
  handler: ({ to }, context) => tracedTool(context, Effect.sleep("30 millis").pipe(Effect.as(`sent to ${to}`)))
})

const results = (messages: ReadonlyArray<Message.Message>) =>
  messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult")

/** What the offline model answers; the last two steps read the tool results they were sent. */
const script: ScriptedChatModel.Script = [
  {
    toolCalls: [
      { id: "call_w1", name: "get_weather", args: { city: "Oslo" } },
      { id: "call_w2", name: "get_weather", args: { city: "Rome" } },
      { id: "call_f1", name: "get_forecast", args: { city: "Oslo" } }
    ],
    usage: { inputTokens: 180, outputTokens: 60, totalTokens: 240 }
  },
  (request) => {
    const lines = results(request.messages).filter((r) => !r.isError).map((r) => {
      const w = r.content as { city: string; sky: string; celsius: number }
      return `${w.city}: ${w.sky}, ${w.celsius}°C`
    })
    return {
      text: "The forecast service timed out; I will send what I have.",
      toolCalls: [{ id: "call_e1", name: "send_email", args: { to: "ada@example.com", body: lines.join("; ") } }],
      usage: { inputTokens: 320, outputTokens: 45, totalTokens: 365 }
    }
  },
  (request) => ({
    text: `Done: ${results(request.messages).at(-1)?.content}. Oslo is sunny (21°C), Rome cloudy (27°C); the forecast did not come in time.`,
    usage: { inputTokens: 400, outputTokens: 30, totalTokens: 430 }
  })
]

const program = Effect.gen(function*() {
  const agent = Agent.make({
    tools: [getWeather, getForecast, sendEmail],
    system: "You are a weather assistant. Use the tools; email summaries when asked.",
    maxIterations: 6
  })
  const input = "What's the weather in Oslo and Rome, and Oslo's forecast? Email a summary to ada@example.com."
  yield* Console.log(`user: ${input}\n`)
  let exit = yield* Agent.run(agent, { input, conversationId: "demo" })
  while (exit._tag === "Paused") {
    yield* showExit(exit)
    yield* Console.log("  the demo approves (examples/approval.ts asks you in the terminal)\n")
    const stored = JSON.stringify(exit.checkpoint) // e.g. into a database
    exit = yield* Agent.resume(agent, JSON.parse(stored), Decision.approveAll())
  }
  yield* showExit(exit)
}).pipe(
  Effect.provide(traced(modelFromEnv(script))),
  Effect.provide(ToolCallingManager.unbounded()) // the calls of a batch run concurrently
)

NodeRuntime.runMain(program)
