/**
 * The in-memory run store keeps its own copy of every checkpoint and hands out copies: what
 * app code does with `Paused.checkpoint`, a pending call or a record it read never changes
 * what a resume by run id runs.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { Agent, Decision, RunStore, ScriptedChatModel } from "../src/index.js"
import { type Transfer, transferTool } from "./agentFixtures.js"

/** `transfer` needs approval; each run of its handler is recorded with its arguments. */
const bank = (options: { readonly signed?: boolean } = {}) => {
  const ran: Array<Transfer> = []
  const agent = Agent.make({
    name: "memory-store-bank",
    tools: [transferTool(ran)],
    ...(options.signed === true ? { checkpointSecret: Redacted.make("a-secret-of-at-least-thirty-two-bytes!") } : {})
  })
  return { agent, ran }
}

const model = ScriptedChatModel.layer([
  ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "ada", amount: 250 } }),
  ScriptedChatModel.text("done")
])

const pausedRun = (agent: Agent.Any) =>
  Effect.flatMap(Agent.run(agent, { input: "pay ada" }), (exit) =>
    exit._tag === "Paused" ? Effect.succeed(exit) : Effect.die(new Error(`expected a pause, got ${exit._tag}`)))

/** What app code might do to a checkpoint it was given: redact the arguments of every call it shows. */
const redact = (checkpoint: unknown) => {
  const cp = checkpoint as {
    batch: Array<{ call: { args: unknown } }>
    messages: Array<{ toolCalls?: Array<{ args: unknown }> }>
  }
  for (const item of cp.batch) item.call.args = { to: "mallory", amount: 99999 }
  for (const message of cp.messages) for (const call of message.toolCalls ?? []) call.args = { to: "mallory", amount: 99999 }
}

describe("RunStore.makeInMemory", () => {
  for (const signed of [false, true]) {
    it.effect(
      signed
        ? "with a checkpointSecret, a pause edited by the app leaves the record's signature intact: the resume by run id completes"
        : "the pause's checkpoint and pending calls are copies: edited by the app, the resume by run id runs what was approved",
      () =>
        Effect.gen(function*() {
          const { agent, ran } = bank({ signed })
          const paused = yield* pausedRun(agent)
          ;(paused.pending[0]!.call as { args: unknown }).args = { to: "mallory", amount: 99999 }
          redact(paused.checkpoint)
          const done = yield* Agent.resume(agent, paused.checkpoint.runId, Decision.approveAll())
          expect([done._tag, ran]).toEqual(["Completed", [{ to: "ada", amount: 250 }]])
        }).pipe(Effect.provide(model))
    )
  }

  it.effect("a record read with get or list and edited does not change the next read, nor what the resume runs", () =>
    Effect.gen(function*() {
      const { agent, ran } = bank()
      const paused = yield* pausedRun(agent)
      const runId = paused.checkpoint.runId
      const store = yield* RunStore.RunStore
      const first = yield* store.get(runId)
      assert(Option.isSome(first))
      redact(first.value.checkpoint)
      const listed = yield* store.list({ agent: agent.name, status: "paused" })
      expect(listed.map((record) => record.runId)).toEqual([runId])
      expect(listed[0]!.checkpoint).toEqual(JSON.parse(JSON.stringify(paused.checkpoint)))
      redact(listed[0]!.checkpoint)
      const second = yield* store.get(runId)
      assert(Option.isSome(second))
      expect(second.value.checkpoint).toEqual(JSON.parse(JSON.stringify(paused.checkpoint)))
      expect((second.value.checkpoint as { batch: Array<{ call: { args: unknown } }> }).batch[0]!.call.args).toEqual({ to: "ada", amount: 250 })
      const done = yield* Agent.resume(agent, runId, Decision.approveAll())
      expect([done._tag, ran]).toEqual(["Completed", [{ to: "ada", amount: 250 }]])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))
})
