/**
 * A start carries `Agent.run`'s options to the runner: slot values (encoded with their slots'
 * schemas, decoded on the runner), budget, model settings, tool choice and context policy. What
 * the client cannot send, or the runner's `Agent.run` refuses, is `Refused` and nothing is stored.
 */
import { Agent, ContextWindow, ScriptedChatModel, Slot, Tool, ToolCallingManager } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import { join } from "node:path"
import * as ClusterSqlite from "../src/ClusterSqlite.js"
import { AgentCluster } from "../src/index.js"
import { tempDir } from "./fixtures.js"

/** `since` is a date on the runner (a string on the wire): `show` answers with its ISO form, so a slot not decoded would fail. */
const ledger = Agent.make({
  name: "ledger",
  slots: { since: Slot.last(Schema.DateFromString, new Date(0)) },
  tools: [Tool.make("show", {
    description: "Shows since when the ledger counts",
    parameters: Schema.Struct({}),
    success: Schema.String,
    handler: (_, { state }) => Effect.sync(() => `since ${(state.since as Date).toISOString()}`)
  })]
})
const Ledger = AgentCluster.make(ledger)

/** Calls `show`, then answers with its result and the settings and tool choice it was sent. */
const model = ScriptedChatModel.layer((request) => {
  const last = request.messages.at(-1)
  if (last?._tag !== "ToolResult") return ScriptedChatModel.toolCalls({ id: "show-1", name: "show", args: {} })
  return ScriptedChatModel.text(`${JSON.stringify(last.content)}; temperature ${request.settings?.temperature}`)
}, { recordRequests: false })

const runnerOn = (filename: string) =>
  AgentCluster.runner(Ledger).pipe(
    Layer.provide([model, ToolCallingManager.unbounded()]),
    Layer.provideMerge(ClusterSqlite.layer({ filename, pollInterval: "100 millis", shutdownTimeout: "100 millis" }))
  )

describe("a start's run options", () => {
  it.live("state, budget and settings reach the runner's Agent.run: the slot decoded, the settings sent to the model, the budget enforced", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "cluster.db")
      yield* Effect.gen(function*() {
        const done = yield* AgentCluster.run(Ledger, {
          input: "show",
          state: { since: new Date("2026-01-02T00:00:00Z") },
          settings: { temperature: 0.25 },
          toolChoice: { tool: "show" },
          context: ContextWindow.trim({ maxTokens: 100_000 })
        })
        expect(done).toMatchObject({ _tag: "Completed", text: `"since 2026-01-02T00:00:00.000Z"; temperature 0.25` })
        const stopped = yield* AgentCluster.run(Ledger, { input: "show", budget: { modelCalls: 1 } })
        expect(stopped).toMatchObject({ _tag: "Failed", error: "BudgetExceeded" })
      }).pipe(Effect.provide(runnerOn(filename)))
    }).pipe(Effect.scoped), 30_000)

  it.live("refused, nothing stored: an undeclared slot, a value its slot refuses, a budget below 1 (on the client); a temperature out of range (by the runner's Agent.run); a summary model", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "cluster.db")
      yield* Effect.gen(function*() {
        const refused = (options: AgentCluster.StartOptions<typeof ledger.slots>, runId: string) =>
          Effect.gen(function*() {
            const error = yield* Effect.flip(AgentCluster.run(Ledger, { ...options, runId }))
            expect(Option.isNone(yield* AgentCluster.get(runId))).toBe(true)
            return error
          })
        expect(yield* refused({ input: "x", state: { nope: 1 } as never }, "r-slot")).toMatchObject({
          _tag: "Refused",
          reason: "InvalidRunInput",
          message: `Invalid run input: state for undeclared slot(s) "nope"; declared: since`
        })
        expect(yield* refused({ input: "x", state: { since: "not a date" as never } }, "r-value")).toMatchObject({ reason: "InvalidRunInput", message: expect.stringContaining(`state slot "since"`) })
        expect(yield* refused({ input: "x", budget: { modelCalls: 0 } }, "r-budget")).toMatchObject({ reason: "InvalidRunInput", message: expect.stringContaining("modelCalls") })
        expect(yield* refused({ input: "x", settings: { temperature: 5 } }, "r-temperature")).toMatchObject({ reason: "InvalidRunInput", message: expect.stringContaining("temperature") })
        const summary = ContextWindow.summarize({ maxTokens: 1000, model: Effect.die("not sent") })
        expect(yield* refused({ input: "x", context: summary as ContextWindow.Policy }, "r-summary")).toMatchObject({ reason: "InvalidRunInput", message: expect.stringContaining("summary model") })
      }).pipe(Effect.provide(runnerOn(filename)))
    }).pipe(Effect.scoped), 30_000)
})
