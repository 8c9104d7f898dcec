import { AgentTest, Decision, ScriptedChatModel, WorkerPool } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { weatherAgent } from "../src/index.js"

// AgentTest from the packed @agentfx/core: a script per run, runs settled in virtual time
const ModelLive = AgentTest.model([
  ScriptedChatModel.toolCalls({ id: "call_1", name: "send_email", args: { to: "ada@example.com", body: "Hi" } }),
  ScriptedChatModel.text("Done.")
])

describe("weatherAgent, tested by its user", () => {
  it.effect("pauses before send_email, and completes once approved", () =>
    Effect.gen(function*() {
      const paused = yield* AgentTest.runUntilPaused(weatherAgent, { input: "Email Ada." })
      expect(paused.pending.map((p) => p.call.name)).toEqual(["send_email"])
      const done = yield* AgentTest.resume(weatherAgent, paused, Decision.approveAll())
      expect(done._tag === "Completed" ? [done.text, done.toolCalls.map((c) => c._tag)] : done._tag).toEqual(["Done.", ["Succeeded"]])
    }).pipe(Effect.provide(Layer.merge(ModelLive, WorkerPool.layer({ size: 1 })))))

  it.effect("settle moves the virtual clock to a sleep that is due", () =>
    Effect.gen(function*() {
      yield* AgentTest.settle(Effect.sleep("2 hours"))
      expect(yield* Clock.currentTimeMillis).toBe(2 * 60 * 60 * 1000)
    }))
})
