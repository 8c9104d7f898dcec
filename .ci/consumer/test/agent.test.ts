import { Agent, Decision, ScriptedChatModel, WorkerPool } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { weatherAgent } from "../src/index.js"

const script = [
  ScriptedChatModel.toolCalls({ id: "call_1", name: "send_email", args: { to: "ada@example.com", body: "Hi" } }),
  ScriptedChatModel.text("Done.")
]

describe("weatherAgent, tested by its user", () => {
  it.effect("pauses before send_email, and completes once approved", () =>
    Effect.gen(function*() {
      const paused = yield* Agent.run(weatherAgent, { input: "Email Ada." })
      expect(paused._tag).toBe("Paused")
      if (paused._tag !== "Paused") return
      expect(paused.pending.map((p) => p.call.name)).toEqual(["send_email"])
      const done = yield* Agent.resume(weatherAgent, paused.checkpoint, Decision.approveAll())
      expect(done._tag === "Completed" ? [done.text, done.toolCalls.map((c) => c._tag)] : done._tag).toEqual(["Done.", ["Succeeded"]])
    }).pipe(Effect.provide(Layer.merge(ScriptedChatModel.layer(script), WorkerPool.layer({ size: 1 })))))
})
