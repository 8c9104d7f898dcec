import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Schema } from "effect"
import { Agent, AgentTest, ScriptedChatModel, Tool } from "../src/index.js"

describe("AgentTest", () => {
  it.effect("settle moves virtual time to each sleep that is due, and waits for real work in between", () =>
    Effect.gen(function*() {
      const program = Effect.gen(function*() {
        yield* Effect.sleep("1 hour")
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5))) // real I/O: a real wait
        yield* Effect.sleep("30 minutes")
        return yield* Clock.currentTimeMillis
      })
      expect(yield* AgentTest.settle(program)).toBe(90 * 60 * 1000)
    }))

  it.effect("settle keeps the failure of what it runs", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(AgentTest.settle(Effect.zipRight(Effect.sleep("1 second"), Effect.fail("late"))))
      expect(error).toBe("late")
    }))

  it.effect("model: each run starts at step 0 of the script; runUntilPaused fails when a run completes", () =>
    Effect.gen(function*() {
      const agent = Agent.make({})
      const first = yield* AgentTest.runToCompletion(agent, { input: "a" })
      const second = yield* AgentTest.runToCompletion(agent, { input: "b" })
      expect([first.text, second.text]).toEqual(["step 0", "step 0"])
      const refused = yield* Effect.flip(AgentTest.runUntilPaused(agent, { input: "c" }))
      expect(refused.message).toBe(`Expected the run to pause, but it completed: "step 0"`)
    }).pipe(Effect.provide(AgentTest.model((_, index) => ScriptedChatModel.text(`step ${index}`)))))

  it.effect("runToCompletion approves every pause and gives up after maxPauses", () =>
    Effect.gen(function*() {
      const ask = Tool.make("ask", {
        description: "needs a person, every time",
        parameters: Schema.Struct({}),
        success: Schema.String,
        needsApproval: true,
        handler: () => Effect.succeed("asked")
      })
      const agent = Agent.make({ tools: [ask] })
      const refused = yield* Effect.flip(AgentTest.runToCompletion(agent, { input: "go" }, { maxPauses: 2 }))
      expect(refused.message).toBe("The run paused 2 times without completing")
    }).pipe(Effect.provide(AgentTest.model(() => ScriptedChatModel.toolCalls({ name: "ask", args: {} })))))
})
