// docs/testing.md shows this file verbatim: it is the guide's example, run in CI.
import { describe, expect, it } from "@effect/vitest"
import { Agent, AgentTest, Decision, ScriptedChatModel, Tool } from "@agentfx/core"
import { Clock, Effect, Schema } from "effect"

const slowSearch = Tool.make("search", {
  description: "Searches the web",
  parameters: Schema.Struct({ query: Schema.String }),
  success: Schema.String,
  timeout: "5 seconds",
  handler: ({ query }) => Effect.as(Effect.sleep("1 minute"), `results for ${query}`) // never in time
})

const transfer = Tool.make("transfer", {
  description: "Sends money",
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: ({ amount }) => Effect.succeed(amount > 100),
  handler: ({ amount, to }) => Effect.succeed(`sent ${amount} to ${to}`)
})

const agent = Agent.make({ tools: [slowSearch, transfer] })

// one script for every run of the test: each run starts at its first step
const ModelLive = AgentTest.model([
  ScriptedChatModel.toolCalls({ name: "search", args: { query: "effect" } }),
  ScriptedChatModel.toolCalls({ name: "transfer", args: { to: "ada", amount: 500 } }),
  ScriptedChatModel.text("done")
])

describe("my agent", () => {
  it.effect("the search times out at its declared 5 virtual seconds; the model is told", () =>
    Effect.gen(function*() {
      const paused = yield* AgentTest.runUntilPaused(agent, { input: "search, then pay ada" })
      // the virtual clock stands where the timeout fired: 5 s, not the search's 1 minute
      expect(yield* Clock.currentTimeMillis).toBe(5_000)
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests[1]!.messages.at(-1)).toMatchObject({
        _tag: "ToolResult",
        isError: true,
        content: `transient error: Tool "search" timed out after 5s`
      })
      expect(paused.pending.map((p) => p.call.args)).toEqual([{ to: "ada", amount: 500 }])
    }).pipe(Effect.provide(ModelLive)))

  it.effect("a large transfer pauses for approval; approved, the run completes", () =>
    Effect.gen(function*() {
      const paused = yield* AgentTest.runUntilPaused(agent, { input: "search, then pay ada" })
      expect([paused.kind, paused.pending.map((p) => p.call.name)]).toEqual(["approval", ["transfer"]])
      const done = yield* AgentTest.resume(agent, paused, Decision.approveAll())
      expect(done).toMatchObject({ _tag: "Completed", text: "done" })
      expect(done._tag === "Completed" && done.toolCalls.map((call) => call._tag)).toEqual(["Failed", "Succeeded"])
    }).pipe(Effect.provide(ModelLive)))

  it.effect("runToCompletion approves every pause by itself", () =>
    Effect.gen(function*() {
      const done = yield* AgentTest.runToCompletion(agent, { input: "search, then pay ada" })
      expect(done.text).toBe("done")
    }).pipe(Effect.provide(ModelLive)))
})

