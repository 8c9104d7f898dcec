import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema } from "effect"
import { Agent, ChatMemory, Checkpoint, Decision, RunStore, ScriptedChatModel, Slot } from "../src/index.js"
import { emailTool, Executions, weatherTool } from "./agentFixtures.js"

const secret = Redacted.make("s3cret-s3cret-s3cret-s3cret-s3cret")

const setup = Effect.gen(function*() {
  const executions = new Executions()
  const tools = [weatherTool(executions), emailTool(executions)]
  const agent = Agent.make({
    name: "mailer",
    tools,
    checkpointSecret: secret,
    slots: { sent: Slot.sum() }
  })
  const exit = yield* Agent.run(agent, { input: "mail", state: { sent: 2 } })
  if (exit._tag !== "Paused") throw new Error("expected a pause")
  return { agent, executions, tools, checkpoint: JSON.parse(JSON.stringify(exit.checkpoint)) }
})

const layer = Layer.merge(
  ScriptedChatModel.layer([
    ScriptedChatModel.toolCalls({ id: "m1", name: "send_email", args: { to: "a@b.c", body: "hi" } }),
    ScriptedChatModel.text("sent")
  ]),
  ChatMemory.layerMemory
)

describe("Checkpoint", () => {
  it.effect("is plain JSON with the format, version, agent, tools, encoded args and encoded state", () =>
    Effect.gen(function*() {
      const { checkpoint } = yield* setup
      expect(checkpoint).toMatchObject({
        format: "agentfx/checkpoint",
        version: 3,
        revision: 1,
        pausedAt: 0,
        agent: "mailer",
        tools: ["get_weather", "send_email"],
        reason: "approval",
        iteration: 1,
        ephemeral: true,
        pending: ["m1"],
        batch: [{ call: { id: "m1", name: "send_email", args: { to: "a@b.c", body: "hi" } }, verdict: "pause" }],
        state: { sent: 2 }
      })
      expect(typeof checkpoint.signature).toBe("string")
    }).pipe(Effect.provide(layer)))

  it.effect("refuses foreign, unknown-tool, unknown-version, tampered, unsigned and malformed checkpoints; the original still resumes", () =>
    Effect.gen(function*() {
      const { agent, checkpoint, executions, tools } = yield* setup
      const refusal = (target: Agent.Any, input: unknown) =>
        Agent.resume(target, input, Decision.approveAll()).pipe(
          Effect.flip,
          Effect.map((e) => e._tag === "InvalidCheckpoint" ? `${e.reason}: ${e.detail}` : e._tag)
        )
      const other = Agent.make({ name: "other", tools, checkpointSecret: secret, slots: { sent: Slot.sum() } })
      expect(yield* refusal(other, checkpoint)).toBe(`agent: the checkpoint belongs to agent "mailer", not "other"`)
      const fewer = Agent.make({
        name: "mailer",
        tools: [weatherTool(executions)],
        checkpointSecret: secret,
        slots: { sent: Slot.sum() }
      })
      expect(yield* refusal(fewer, checkpoint)).toBe(`tools: this agent has no tool "send_email"`)
      expect(yield* refusal(agent, { ...checkpoint, version: 1 })).toBe(
        "version: format version 1 is not supported (this runtime reads versions 2, 3 and 4)"
      )
      expect(yield* refusal(agent, { ...checkpoint, version: 5 })).toBe(
        "version: format version 5 is not supported (this runtime reads versions 2, 3 and 4)"
      )
      const tampered = structuredClone(checkpoint)
      tampered.batch[0].call.args.to = "attacker@evil.example"
      expect(yield* refusal(agent, tampered)).toBe(
        "signature: the signature does not match: the checkpoint was altered or signed with another secret"
      )
      const { signature: _, ...unsigned } = checkpoint
      expect(yield* refusal(agent, unsigned)).toBe("signature: the checkpoint is not signed, and this agent requires a signature")
      expect(yield* refusal(agent, { hello: "world" })).toBe(
        `malformed: not an agentfx checkpoint (expected format "agentfx/checkpoint")`
      )
      const noSecret = Agent.make({ name: "mailer", tools, slots: { sent: Slot.sum() } })
      expect(yield* refusal(noSecret, { ...checkpoint, iteration: "one" })).toBe("malformed: iteration: Expected number, got \"one\"")
      expect(yield* refusal(noSecret, { ...checkpoint, state: { sent: "two" } })).toBe(
        `state: slot "sent": Expected number, got "two"`
      )
      expect(executions.counts).toEqual({})

      const exit = yield* Agent.resume(agent, checkpoint, Decision.approveAll())
      expect(exit._tag === "Completed" && exit.state).toEqual({ sent: 2 })
      expect(executions.counts).toEqual({ send_email: 1 })
    }).pipe(Effect.provide(layer)))

  it.effect("a run's settings and tool choice are signed and checked like the run's options; a checkpoint without them (an older one) resumes with the agent's", () =>
    Effect.gen(function*() {
      const executions = new Executions()
      const tools = [weatherTool(executions), emailTool(executions)]
      const signed = Agent.make({ name: "mailer", tools, checkpointSecret: secret, settings: { temperature: 1 } })
      const exit = yield* Agent.run(signed, { input: "mail", settings: { temperature: 0.2 } })
      if (exit._tag !== "Paused") throw new Error("expected a pause")
      const checkpoint = JSON.parse(JSON.stringify(exit.checkpoint))
      expect(checkpoint.settings).toEqual({ temperature: 0.2 })
      const refusal = (target: Agent.Any, input: unknown) =>
        Agent.resume(target, input, Decision.approveAll()).pipe(
          Effect.flip,
          Effect.map((e) => e._tag === "InvalidCheckpoint" ? `${e.reason}: ${e.detail}` : e._tag)
        )
      expect(yield* refusal(signed, { ...checkpoint, settings: { temperature: 2 } })).toBe(
        "signature: the signature does not match: the checkpoint was altered or signed with another secret"
      )
      const unsigned = Agent.make({ name: "mailer", tools, settings: { temperature: 1 } })
      const { signature: _, ...copy } = checkpoint
      expect(yield* refusal(unsigned, { ...copy, settings: { temperature: 9, stop: [""] }, toolChoice: { tool: "rm" } })).toBe(
        `malformed: settings.temperature 9 is not between 0 and 2; settings.stop must be non-empty strings; toolChoice {"tool":"rm"} must be "auto", "none", "required" or { tool } naming one of the agent's tools`
      )
      // imported into another process's store, as a checkpoint written before runs kept their settings
      const { settings: __, ...older } = copy
      const resumed = yield* Agent.resume(unsigned, older, Decision.approveAll()).pipe(Effect.provide(RunStore.layerMemory()))
      expect(resumed._tag).toBe("Completed")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests.map((r) => [r.toolChoice, r.settings])).toEqual([["auto", { temperature: 0.2 }], ["auto", { temperature: 1 }]])
    }).pipe(Effect.provide(layer)))

  it.effect("an unsigned copy's state for \"constructor\" is an undeclared slot", () =>
    Effect.gen(function*() {
      const { checkpoint, tools } = yield* setup
      const unsigned = Agent.make({ name: "mailer", tools, slots: { sent: Slot.sum() } })
      const { signature: _, ...copy } = checkpoint
      const refused = yield* Effect.flip(Agent.resume(unsigned, { ...copy, state: { sent: 2, constructor: 1 } }, Decision.approveAll()))
      expect(refused._tag === "InvalidCheckpoint" && `${refused.reason}: ${refused.detail}`).toBe(`state: this agent has no slot "constructor"`)
    }).pipe(Effect.provide(layer)))

  it.effect("a signature survives a store that reorders keys", () =>
    Effect.gen(function*() {
      const { agent, checkpoint } = yield* setup
      const reordered = Object.fromEntries(Object.entries(checkpoint).reverse())
      const exit = yield* Agent.resume(agent, reordered, Decision.approveAll())
      expect(exit._tag).toBe("Completed")
    }).pipe(Effect.provide(layer)))

  it.effect("the schema decodes what the runtime encodes", () =>
    Effect.gen(function*() {
      const { checkpoint } = yield* setup
      const decoded = yield* Schema.decodeUnknownEffect(Checkpoint.Checkpoint)(checkpoint)
      expect(decoded.pending).toEqual(["m1"])
    }).pipe(Effect.provide(layer)))
})
