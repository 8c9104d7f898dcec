/**
 * The three tool-calling managers on one batch: a fast lookup, a slow search, and a tool
 * that hangs past its timeout. Run: `pnpm tsx examples/managers.ts`.
 */
import { Tool, ToolCallingManager, Toolkit } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, Schema } from "effect"

const lookup = Tool.make("lookup", {
  description: "Looks a word up",
  parameters: Schema.Struct({ word: Schema.String }),
  success: Schema.String,
  handler: ({ word }) => Effect.sleep("50 millis").pipe(Effect.as(`${word}: a thing`))
})

const search = Tool.make("search", {
  description: "Searches the docs",
  parameters: Schema.Struct({ query: Schema.String }),
  success: Schema.Array(Schema.String),
  handler: ({ query }) => Effect.sleep("200 millis").pipe(Effect.as([`${query} guide`, `${query} reference`]))
})

const hang = Tool.make("hang", {
  description: "Never answers",
  parameters: Schema.Struct({}),
  success: Schema.String,
  timeout: "300 millis",
  handler: () => Effect.never
})

const calls = [
  { id: "call_1", name: "lookup", args: { word: "effect" } },
  { id: "call_2", name: "search", args: { query: "timeouts" } },
  { id: "call_3", name: "hang", args: {} },
  { id: "call_4", name: "lookup", args: { word: "fiber" } }
]

const runWith = (label: string, layer: Layer.Layer<never, ToolCallingManager.InvalidManagerOptions>) =>
  Effect.gen(function*() {
    const toolkit = Toolkit.make(lookup, search, hang)
    const start = performance.now()
    const results = yield* ToolCallingManager.executeBatch(toolkit, calls)
    console.log(`\n${label} — ${(performance.now() - start).toFixed(0)} ms`)
    for (const result of results) {
      const shown = result._tag === "Failed"
        ? `${result.error._tag} (${result.error.reason}): ${result.error.message}`
        : result._tag === "Succeeded" ? JSON.stringify(result.value) : result._tag
      console.log(`  ${result.callId} ${result.toolName.padEnd(6)} ${shown}`)
    }
  }).pipe(Effect.provide(layer))

NodeRuntime.runMain(Effect.gen(function*() {
  yield* runWith("sequential", ToolCallingManager.sequential())
  yield* runWith("unbounded", ToolCallingManager.unbounded())
  yield* runWith("bounded, 2 permits", ToolCallingManager.bounded({ permits: 2 }))
}))
