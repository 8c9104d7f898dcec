/**
 * Edited arguments (`Decision.approve({ args })`) are asked of the agent's gate on every path —
 * by run id (a trusted record) and from an unsigned copy — once they decode (decision 117).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Agent, Decision, Gate, RunStore, ScriptedChatModel } from "../src/index.js"
import { type Transfer, transferTool } from "./agentFixtures.js"

/** A bank whose gate rejects transfers above 10,000, answers transfers to "bot" itself, and asks a person about the others. */
const bank = () => {
  const ran: Array<Transfer> = []
  // the gate decides alone: the tool's own approval rule is not asked
  const transfer = transferTool(ran, { needsApproval: false })
  const agent = Agent.make({
    name: "edited-bank",
    tools: [transfer],
    gate: ({ args }: Gate.InputOf<typeof transfer>) =>
      args.amount > 10_000
        ? Gate.reject({ message: "transfers above 10,000 are refused" })
        : args.to === "bot"
        ? Gate.reply({ value: "bots are paid elsewhere" })
        : Gate.pause()
  })
  return { agent, ran }
}

const model = ScriptedChatModel.layer((request) =>
  request.messages.at(-1)?._tag === "User"
    ? ScriptedChatModel.toolCalls({ id: "call_1", name: "transfer", args: { to: "ada", amount: 250 } })
    : ScriptedChatModel.text("done")
)

const pausedRun = (agent: Agent.Any) =>
  Effect.flatMap(Agent.run(agent, { input: "pay ada" }), (exit) =>
    exit._tag === "Paused" ? Effect.succeed(exit) : Effect.die(new Error(`expected a pause, got ${exit._tag}`)))

const copyOf = (checkpoint: unknown): unknown => JSON.parse(JSON.stringify(checkpoint))

const toMallory = Decision.byCall({ call_1: Decision.approve({ args: { to: "Mallory", amount: 1_000_000 } }) })

const refusedMessage =
  `Invalid edited arguments: call_1 (transfer): the agent's gate says Reject to the edited arguments: "transfers above 10,000 are refused"`

describe("edited arguments asked of the gate", () => {
  it.effect("by run id: an edit the gate rejects is InvalidEditedArguments naming its message; nothing ran, and the pause resumes with approveAll once", () =>
    Effect.gen(function*() {
      const { agent, ran } = bank()
      const paused = yield* pausedRun(agent)
      const runId = paused.checkpoint.runId
      const refused = yield* Effect.flip(Agent.resume(agent, runId, toMallory))
      expect([refused._tag, refused.message]).toEqual(["InvalidEditedArguments", refusedMessage])
      expect(ran).toEqual([])
      const done = yield* Agent.resume(agent, runId, Decision.approveAll())
      expect([done._tag, ran]).toEqual(["Completed", [{ to: "ada", amount: 250 }]])
      const again = yield* Effect.flip(Agent.resume(agent, runId, Decision.approveAll()))
      expect([again._tag, ran.length]).toEqual(["RunAlreadyResumed", 1])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))

  it.effect("from an unsigned copy the store does not know: the same edit is InvalidEditedArguments (the edit is the problem), and the copy then resumes with approveAll once", () =>
    Effect.gen(function*() {
      const { agent, ran } = bank()
      const paused = yield* pausedRun(agent)
      // another store (another process): the copy is imported, not named
      const elsewhere = RunStore.layerMemory()
      const refused = yield* Effect.flip(Agent.resume(agent, copyOf(paused.checkpoint), toMallory).pipe(Effect.provide(elsewhere)))
      expect([refused._tag, refused.message]).toEqual(["InvalidEditedArguments", refusedMessage])
      expect(ran).toEqual([])
      const done = yield* Agent.resume(agent, copyOf(paused.checkpoint), Decision.approveAll()).pipe(Effect.provide(elsewhere))
      expect([done._tag, ran]).toEqual(["Completed", [{ to: "ada", amount: 250 }]])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))

  it.effect("an edit the gate would answer itself (Reply) is refused too, naming the verdict", () =>
    Effect.gen(function*() {
      const { agent, ran } = bank()
      const paused = yield* pausedRun(agent)
      const refused = yield* Effect.flip(
        Agent.resume(agent, paused.checkpoint.runId, Decision.byCall({ call_1: Decision.approve({ args: { to: "bot", amount: 5 } }) }))
      )
      expect([refused._tag, refused.message]).toEqual([
        "InvalidEditedArguments",
        "Invalid edited arguments: call_1 (transfer): the agent's gate says Reply to the edited arguments: it answers such a call itself"
      ])
      expect(ran).toEqual([])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))

  it.effect("an edit the gate lets through (it would ask a person: Pause) runs with the edited arguments, by run id and from a copy", () =>
    Effect.gen(function*() {
      const { agent, ran } = bank()
      const toBob = Decision.byCall({ call_1: Decision.approve({ args: { to: "bob", amount: 50 } }) })
      const byId = yield* pausedRun(agent)
      const done = yield* Agent.resume(agent, byId.checkpoint.runId, toBob)
      assert(done._tag === "Completed")
      const copied = yield* pausedRun(agent)
      const fromCopy = yield* Agent.resume(agent, copyOf(copied.checkpoint), toBob).pipe(Effect.provide(RunStore.layerMemory()))
      assert(fromCopy._tag === "Completed")
      expect(ran).toEqual([{ to: "bob", amount: 50 }, { to: "bob", amount: 50 }])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))
})
