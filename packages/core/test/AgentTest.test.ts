import { assert, describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Schema } from "effect"
import { Agent, AgentTest, Decision, ScriptedChatModel, Tool } from "../src/index.js"

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
      const error = yield* Effect.flip(AgentTest.settle(Effect.andThen(Effect.sleep("1 second"), Effect.fail("late"))))
      expect(error).toBe("late")
    }))

  it.effect("model: each run starts at step 0 of the script; runUntilPaused fails when a run completes", () =>
    Effect.gen(function*() {
      const agent = Agent.make({})
      const first = yield* AgentTest.runToCompletion(agent, { input: "a" })
      const second = yield* AgentTest.runToCompletion(agent, { input: "b" })
      expect([first.text, second.text]).toEqual(["step 0", "step 0"])
      const refused = yield* Effect.flip(AgentTest.runUntilPaused(agent, { input: "c" }))
      expect(refused).toBeInstanceOf(AgentTest.UnexpectedExit)
      assert(refused._tag === "UnexpectedExit")
      expect([refused.expected, refused.exit._tag, refused.pauses, refused.message]).toEqual([
        "pause",
        "Completed",
        0,
        `Expected the run to pause, but it completed: "step 0"`
      ])
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
      assert(refused._tag === "UnexpectedExit")
      expect([refused.expected, refused.exit._tag, refused.pauses, refused.message]).toEqual([
        "completion",
        "Paused",
        3,
        "Expected the run to complete after at most 2 pauses, but it paused 3 times; the last for approval: ask (a3)"
      ])
    }).pipe(Effect.provide(AgentTest.model((_, index) => ScriptedChatModel.toolCalls({ id: `a${index + 1}`, name: "ask", args: {} })))))
  it.effect("resume runs the approved call in virtual time, by the pause or by run id, and returns the next pause or the answer", () =>
    Effect.gen(function*() {
      const wire = Tool.make("wire", {
        description: "an hour-long transfer, approved first",
        parameters: Schema.Struct({ amount: Schema.Number }),
        success: Schema.String,
        needsApproval: true,
        handler: ({ amount }) => Effect.as(Effect.sleep("1 hour"), `wired ${amount}`)
      })
      const agent = Agent.make({ tools: [wire] })
      const paused = yield* AgentTest.runUntilPaused(agent, { input: "wire 1, then 2" })
      expect(paused.pending.map((p) => p.call.args)).toEqual([{ amount: 1 }])
      const second = yield* AgentTest.resume(agent, paused, Decision.approveAll())
      expect(second._tag === "Paused" ? second.pending.map((p) => p.call.args) : second._tag).toEqual([{ amount: 2 }])
      expect(yield* Clock.currentTimeMillis).toBe(60 * 60 * 1000)
      const done = yield* AgentTest.resume(agent, paused.runId, Decision.approveAll())
      expect(done._tag === "Completed" ? [done.text, yield* Clock.currentTimeMillis] : done._tag).toEqual([
        "wire: wired 1; wire: wired 2",
        2 * 60 * 60 * 1000
      ])
    }).pipe(Effect.provide(AgentTest.model([
      ScriptedChatModel.toolCalls({ name: "wire", args: { amount: 1 } }),
      ScriptedChatModel.toolCalls({ name: "wire", args: { amount: 2 } }),
      (request) => ({
        text: request.messages.flatMap((m) => m._tag === "ToolResult" ? [`${m.toolName}: ${m.content}`] : []).join("; ")
      })
    ]))))

  it.effect("resume keeps a refused resume's typed error", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(AgentTest.resume(Agent.make({}), "no-such-run", Decision.approveAll()))
      expect([error._tag, error.message]).toEqual(["RunNotFound", "No record of run no-such-run in the run store"])
    }).pipe(Effect.provide(AgentTest.model([]))))
})
