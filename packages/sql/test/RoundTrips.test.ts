/**
 * The round trips a run makes to a SQL store, counted per operation and pinned: a pause, a
 * resume, a run of three steps — on SQLite and PostgreSQL — and the commits that write among
 * them. A change that adds a statement, or splits a commit, fails here (docs/persistence.md has
 * the table; decisions 100, 101 and 161 say why each is what it is).
 *
 * Counted from the client spans `effect/sql` opens: one per statement (its
 * `db.query.text`), and one per transaction control (its `db.operation.name`: `BEGIN`, and
 * `COMMIT` or `ROLLBACK`). A commit that writes: a `COMMIT`, or a statement outside a
 * transaction that is not a `SELECT` (on PostgreSQL a `WITH` writes: the claim, the end, the read
 * that holds a conversation).
 */
import { Agent, Decision, ScriptedChatModel, Tool } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { statementsOf } from "@agentfx/testing/Statements"
import { Effect, Layer, Option, Schema } from "effect"
import { nowOf } from "../src/internal/clock.js"
import { SqlStore } from "../src/index.js"
import { dialects, storeOn } from "./fixtures.js"

/** The statements an effect sends, each its first 60 characters (`BEGIN`, `COMMIT` for a transaction). */
const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(statementsOf(effect), ({ statements, value }) => ({ value, statements: statements.map((text) => text.slice(0, 60)) }))

/** An agent whose model asks for a transfer (which needs approval), then says "done". */
const bank = Agent.make({
  name: "bank",
  tools: [Tool.make("transfer", {
    description: "Sends money",
    parameters: Schema.Struct({ amount: Schema.Number }),
    success: Schema.String,
    needsApproval: true,
    handler: ({ amount }) => Effect.succeed(`sent ${amount}`)
  })]
})

/** An agent whose model looks up three accounts, one step each, then says "done". */
const lookups = Agent.make({
  name: "lookups",
  tools: [Tool.make("lookup", {
    description: "Finds an account",
    parameters: Schema.Struct({ iban: Schema.String }),
    success: Schema.String,
    handler: ({ iban }) => Effect.succeed(`account ${iban}`)
  })]
})

const model = ScriptedChatModel.layer((request) => {
  const last = request.messages.at(-1)
  if (last?._tag === "User") {
    return last.text === "pay"
      ? ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { amount: 100 } })
      : ScriptedChatModel.toolCalls({ id: "l1", name: "lookup", args: { iban: "1" } })
  }
  const results = request.messages.filter((message) => message._tag === "ToolResult").length
  return request.messages.some((message) => message._tag === "ToolResult" && message.toolName === "lookup") && results < 3
    ? ScriptedChatModel.toolCalls({ id: `l${results + 1}`, name: "lookup", args: { iban: String(results + 1) } })
    : ScriptedChatModel.text("done")
}, { recordRequests: false })

/** The round trips of each operation, and the commits that write among them, per dialect: what this test pins. */
const expected: Record<string, {
  readonly statements: { readonly pause: number; readonly resume: number; readonly threeSteps: number }
  readonly commits: { readonly pause: number; readonly resume: number; readonly threeSteps: number }
}> = {
  SQLite: { statements: { pause: 12, resume: 12, threeSteps: 30 }, commits: { pause: 5, resume: 6, threeSteps: 11 } },
  PostgreSQL: { statements: { pause: 8, resume: 6, threeSteps: 14 }, commits: { pause: 5, resume: 5, threeSteps: 11 } }
}

/** The commits that write among `statements`: each `COMMIT`, and each statement outside a transaction but a `SELECT`. */
const commitsOf = (statements: ReadonlyArray<string>) => {
  let commits = 0
  let inTransaction = false
  for (const statement of statements) {
    if (statement === "BEGIN") inTransaction = true
    else if (statement === "COMMIT" || statement === "ROLLBACK") (inTransaction = false, commits += statement === "COMMIT" ? 1 : 0)
    else if (!inTransaction && !statement.startsWith("SELECT")) commits++
  }
  return commits
}

for (const dialect of dialects) {
  describe(`round trips on ${dialect.name}`, () => {
    it.effect("a pause, a resume, a run of three steps: each makes the round trips pinned here", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const context = yield* Layer.build(Layer.merge(SqlStore.layer().pipe(Layer.provide(database.client)), model))
        const inContext = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provide(effect, context)
        // the once-a-minute deletion of expired rows (decision 056) made here, before what is counted
        yield* inContext(Agent.run(lookups, { input: "look", conversationId: "warm-up" }))
        const pause = yield* counted(inContext(Agent.run(bank, { input: "pay", conversationId: "c-pay" })))
        if (pause.value._tag !== "Paused") throw new Error("expected a pause")
        const resume = yield* counted(inContext(Agent.resume(bank, pause.value.runId, Decision.approveAll())))
        expect(resume.value._tag).toBe("Completed")
        const threeSteps = yield* counted(inContext(Agent.run(lookups, { input: "look", conversationId: "c-look" })))
        expect(threeSteps.value._tag).toBe("Completed")
        if (threeSteps.value._tag === "Completed") {
          expect(threeSteps.value.messages.filter((message) => message._tag === "ToolResult").length).toBe(3)
        }
        const counts = {
          statements: { pause: pause.statements.length, resume: resume.statements.length, threeSteps: threeSteps.statements.length },
          commits: { pause: commitsOf(pause.statements), resume: commitsOf(resume.statements), threeSteps: commitsOf(threeSteps.statements) }
        }
        expect(counts, JSON.stringify({ pause: pause.statements, resume: resume.statements, threeSteps: threeSteps.statements }, null, 1))
          .toEqual(expected[dialect.name])
      }).pipe(Effect.scoped))
    it.effect("RunStore.now after a statement that returned the database's time: no statement, never ahead of the database, never behind that time", () =>
      Effect.gen(function*() {
        const { sql, store } = yield* storeOn(yield* dialect.database)
        const databaseNow = Effect.map(sql<{ readonly now: number | string }>`SELECT ${nowOf(sql)} AS now`, ([row]) => Number(row!.now))
        const inserted = { runId: "r-1", agent: "a", conversationId: "c-1", ephemeral: false, status: "running" as const, version: 1, createdAt: 0, updatedAt: 0 }
        expect(yield* store.insert(inserted)).toBe(true)
        const paused = yield* store.transition("r-1", { from: { status: "running", version: 1 }, to: "paused" })
        const carried = yield* counted(store.now)
        const after = yield* databaseNow
        expect(carried.statements).toEqual([])
        expect(carried.value >= paused!.updatedAt && carried.value <= after).toBe(true)
        // a run looked for and not found: the time it was looked for at is carried
        const before = yield* databaseNow
        expect(yield* store.finished("nobody")).toEqual(Option.none())
        const looked = yield* counted(store.now)
        expect(looked.statements).toEqual([])
        expect(looked.value >= before && looked.value <= (yield* databaseNow)).toBe(true)
      }).pipe(Effect.scoped))
  })
}
