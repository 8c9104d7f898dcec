/**
 * A bounded manager: the model asks for five slow searches at once; `ToolCallingManager.bounded`
 * runs at most two at a time (a bulkhead shared by every run using the Layer), and each
 * search's timeout counts from when it got a permit, not from when it queued.
 * Run: `pnpm tsx examples/bounded.ts`.
 */
import { Agent, ScriptedChatModel, Tool, ToolCallingManager } from "@agentfx/core"
import type { Message } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Schema } from "effect"
import { modelFromEnv } from "./model.js"
import { log, showExit, traced } from "./trace.js"

let running = 0
let mostAtOnce = 0

const search = Tool.make("search_docs", {
  description: "Searches the documentation (slow: about 300 ms)",
  parameters: Schema.Struct({ query: Schema.String }),
  success: Schema.Array(Schema.String),
  timeout: "1 second", // per attempt, once a permit is held: queueing behind others does not count
  handler: ({ query }, { callId }) =>
    Effect.acquireUseRelease(
      Effect.andThen(
        Effect.sync(() => {
          running += 1
          mostAtOnce = Math.max(mostAtOnce, running)
        }),
        Effect.suspend(() => log(`  search [${callId}] "${query}" started (${running} running)`))
      ),
      () => Effect.sleep("300 millis").pipe(Effect.as([`${query}: guide`, `${query}: reference`])),
      () => Effect.sync(() => void (running -= 1)).pipe(Effect.andThen(log(`  search [${callId}] "${query}" done`)))
    )
})

const topics = ["timeouts", "retries", "approval", "checkpoints", "memory"]

const script: ScriptedChatModel.Script = [
  { toolCalls: topics.map((query, i) => ({ id: `call_${i + 1}`, name: "search_docs", args: { query } })) },
  (request) => ({
    text: `Found ${
      request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult" && !m.isError).length
    } of ${topics.length} topics: ${topics.join(", ")}.`
  })
]

const program = Effect.gen(function*() {
  const agent = Agent.make({ tools: [search] })
  const input = `Search the docs for: ${topics.join(", ")} — all at once.`
  yield* Console.log(`user: ${input}\n`)
  const began = performance.now()
  const exit = yield* Agent.run(agent, { input })
  yield* showExit(exit)
  yield* Console.log(`\nat most ${mostAtOnce} searches ran at once; the turn took ${Math.round(performance.now() - began)} ms`)
}).pipe(
  Effect.provide(traced(modelFromEnv(script))),
  Effect.provide(ToolCallingManager.bounded({ permits: 2 }))
)

NodeRuntime.runMain(program)
