/**
 * A store written by agentfx on Effect 3 (fixtures/README.md, "Fixtures of checkpoint format 3"),
 * opened by this version: a copy of its SQLite file, and its PostgreSQL dump replayed into a new
 * schema. The Effect 3 Migrator's rows mark the schema up to date; every run resumes, recovers,
 * goes on in a next turn or is refused as the Effect 3 runtime did (checked there by
 * fixtures/v3/check.ts.txt), each call of a batch exactly once. Each scenario works on its own copy.
 */
import { Agent, ChatMemory, type ChatModel, Decision, type Message, RunStore, ScriptedChatModel } from "@agentfx/core"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { assert, describe, expect, it } from "@effect/vitest"
import type { Scope } from "effect"
import { Effect, Layer, Option, Redacted } from "effect"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import { copyFileSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { clerk, fetcher, viewer, worker } from "../../core/test/fixtures/agentsV3.js"
import { migrations } from "../src/internal/migrations.js"
import { SqlStore } from "../src/index.js"
import { freshSchema, tempDir } from "./fixtures.js"

const fixture = (path: string) => fileURLToPath(new URL(`./fixtures/${path}`, import.meta.url))

/** The finished records were written days before any run of this test: kept visible. */
const retention = "36500 days"

/** The conversation of `checkpoint-v3-files.json` (the paused `run-v3-files` holds the same). */
const filesMessages = JSON.parse(readFileSync(fixture("../../../core/test/fixtures/checkpoint-v3-files.json"), "utf8")).messages

/** How the fixtures' databases are opened: each `copy` a new database holding what Effect 3 wrote. */
const databases: ReadonlyArray<{
  readonly name: string
  readonly copy: Effect.Effect<Layer.Layer<SqlClient.SqlClient, unknown>, never, Scope.Scope>
}> = [
  {
    name: "SQLite",
    // opening a file, even read-only, writes beside it: a copy in a temp directory
    copy: Effect.map(tempDir, (dir) => {
      const filename = join(dir, "store.db")
      copyFileSync(fixture("v3/store.db"), filename)
      return SqliteClient.layer({ filename })
    })
  },
  {
    name: "PostgreSQL",
    // one statement per line, into a new schema first on the search path
    copy: Effect.gen(function*() {
      const client = PgClient.layer({ url: Redacted.make(yield* freshSchema) })
      const statements = readFileSync(fixture("v3/pg.sql"), "utf8").split("\n").filter((line) => line !== "" && !line.startsWith("--"))
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.forEach(statements, (statement) => sql.unsafe(statement), { discard: true })).pipe(
        Effect.provide(client),
        Effect.orDie
      )
      return client
    })
  }
]

/** A message as one line: `User: text`, `Assistant: text (call ids)`, `ToolResult id: content`. */
const line = (message: Message.Message) => {
  switch (message._tag) {
    case "User":
      return `User: ${message.text}`
    case "Assistant":
      return `Assistant${message.text === "" ? "" : `: ${message.text}`}${message.toolCalls.length === 0 ? "" : ` (${message.toolCalls.map((call) => call.id).join(", ")})`}`
    case "ToolResult":
      return `ToolResult ${message.callId}: ${JSON.stringify(message.content)}`
    default:
      return message._tag
  }
}

/** conv-v3-chat as the Effect 3 code wrote it: two completed turns. */
const chatAsWritten = [
  "User: Is account ada open?",
  "Assistant (l2)",
  `ToolResult l2: "account ada: open"`,
  "Assistant: Yes, account ada is open.",
  "User: Thanks!",
  "Assistant: You are welcome."
]

const history = (conversationId: string) => Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get(conversationId))
const lines = (conversationId: string) => Effect.map(history(conversationId), (messages) => messages.map(line))

/** A record's status and version. */
const record = (runId: string) => Effect.flatMap(RunStore.RunStore, (store) => store.get(runId)).pipe(Effect.map(Option.map((r) => [r.status, r.version])))

/** What a refused resume or recover says: its tag, and `RunAlreadyResumed`'s status and decider. */
const refusal = (error: { readonly _tag: string }) => {
  const { decidedBy, status } = error as { readonly status?: string; readonly decidedBy?: string }
  return [error._tag, status, decidedBy]
}

const completed = <A extends { readonly _tag: string }>(exit: A) => {
  assert(exit._tag === "Completed", `expected Completed, got ${exit._tag}`)
  return exit as Extract<A, { readonly _tag: "Completed" }>
}

const model = (text: string) => ScriptedChatModel.layer([ScriptedChatModel.text(text)])

/** The crashed runs' model: every request answered with the results it holds. */
const echo = ScriptedChatModel.layer((request) =>
  ScriptedChatModel.text(`saw ${request.messages.filter((m) => m._tag === "ToolResult").map((m) => `${m.callId}=${JSON.stringify(m.content)}`).join(", ")}`)
)

const cancelledResult = "cancelled: the call was interrupted before it returned a result"

for (const database of databases) {
  describe(`a store written by Effect 3, on ${database.name}`, () => {
    /** `body` in a process of its own on a new copy of the fixture: the ported store, and the models. */
    const onCopy = <A, E>(
      models: Layer.Layer<ScriptedChatModel.ScriptedChatModel | ChatModel.ChatModel>,
      body: Effect.Effect<A, E, ScriptedChatModel.ScriptedChatModel | ChatModel.ChatModel | SqlClient.SqlClient>
    ) =>
      Effect.flatMap(database.copy, (client) =>
        body.pipe(Effect.provide(Layer.merge(models, SqlStore.layer({ retention }).pipe(Layer.provideMerge(client))))))

    it.effect("opens as written: the schema brought up to date by the migrations added since (a nullable column, the steering inbox), every record, conversation and crashed batch as Effect 3 left it", () =>
      Effect.gen(function*() {
        const client = yield* database.copy
        expect(yield* SqlStore.migrate.pipe(Effect.provide(client))).toEqual([[5, "agentfx_decision_id"], [6, "agentfx_steering"]])
        const store = SqlStore.layer({ retention }).pipe(Layer.provideMerge(client))
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          expect((yield* sql`SELECT migration_id, name FROM agentfx_migrations ORDER BY migration_id`).map((row) => [Number(row.migration_id), row.name])).toEqual([
            [1, "agentfx_store"],
            [2, "agentfx_decided_at"],
            [3, "agentfx_call_progress"],
            [4, "agentfx_take_over"],
            [5, "agentfx_decision_id"],
            [6, "agentfx_steering"]
          ])
          const runs = yield* RunStore.RunStore
          const records = [...yield* runs.list({ limit: 100 })].sort((a, b) => a.runId.localeCompare(b.runId))
          expect(records.map((r) => {
            const checkpoint = r.checkpoint as { readonly reason?: string; readonly pending?: ReadonlyArray<string> } | undefined
            return [r.runId, r.agent, r.conversationId, r.ephemeral, r.status, r.version, r.decidedBy, r.decidedAt, checkpoint?.reason, checkpoint?.pending]
          })).toEqual([
            ["run-v3-approval", "clerk", "conv-v3-approval", false, "paused", 3, undefined, undefined, "approval", ["p1"]],
            ["run-v3-cancelled", "clerk", "conv-v3-cancelled", false, "failed", 3, "ops@example.com", undefined, undefined, undefined],
            ["run-v3-chat-1", "clerk", "conv-v3-chat", false, "completed", 3, undefined, undefined, undefined, undefined],
            ["run-v3-chat-2", "clerk", "conv-v3-chat", false, "completed", 2, undefined, undefined, undefined, undefined],
            ["run-v3-crashed", "worker", "conv-v3-crashed", false, "running", 2, undefined, undefined, "running", []],
            ["run-v3-crashed-idempotent", "worker", "conv-v3-crashed-idempotent", false, "running", 2, undefined, undefined, "running", []],
            ["run-v3-environment", "fetcher", "conv-v3-environment", false, "paused", 3, undefined, undefined, "environment", ["f1"]],
            ["run-v3-files", "viewer", "conv-v3-files", false, "paused", 3, undefined, undefined, "approval", ["u1"]]
          ])
          const conversations = ["conv-v3-approval", "conv-v3-environment", "conv-v3-files", "conv-v3-chat", "conv-v3-cancelled", "conv-v3-crashed", "conv-v3-crashed-idempotent"]
          expect(yield* Effect.forEach(conversations, (id) => Effect.map(history(id), (messages) => [id, messages.length]))).toEqual(
            conversations.map((id, i) => [id, [4, 2, 4, 6, 2, 2, 2][i]])
          )
          expect(yield* lines("conv-v3-chat")).toEqual(chatAsWritten)
          const batch = (runId: string) =>
            Effect.all([runs.started(runId), Effect.map(runs.outcomes(runId), (outcomes) => outcomes.map((o) => [o._tag, o.callId, o._tag === "Succeeded" ? o.value : undefined]))])
          expect(yield* batch("run-v3-crashed")).toEqual([["s1", "c1"], [["Succeeded", "s1", "stamped first"]]])
          expect(yield* batch("run-v3-crashed-idempotent")).toEqual([["s3", "r1"], [["Succeeded", "s3", "stamped third"]]])
        }).pipe(Effect.provide(store))
      }).pipe(Effect.scoped))

    it.effect("migrates forward: a migration added after Effect 3's runs once on it, recorded after Effect 3's own; the runs are all still there", () =>
      Effect.gen(function*() {
        const client = yield* database.copy
        const later = Migrator.fromRecord({
          ...migrations,
          "7_agentfx_later": Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ALTER TABLE agentfx_runs ADD COLUMN later_column TEXT`)
        })
        const migrateLater = Migrator.make({})({ loader: later, table: "agentfx_migrations" })
        yield* Effect.gen(function*() {
          expect(yield* migrateLater).toEqual([[5, "agentfx_decision_id"], [6, "agentfx_steering"], [7, "agentfx_later"]])
          expect(yield* migrateLater).toEqual([])
          const sql = yield* SqlClient.SqlClient
          expect((yield* sql`SELECT migration_id FROM agentfx_migrations ORDER BY migration_id`).map((row) => Number(row.migration_id))).toEqual([1, 2, 3, 4, 5, 6, 7])
          expect((yield* sql`SELECT count(later_column) AS n, count(*) AS runs FROM agentfx_runs`).map((row) => [Number(row.n), Number(row.runs)])).toEqual([[0, 8]])
        }).pipe(Effect.provide(client))
        const records = yield* Effect.flatMap(RunStore.RunStore, (store) => store.list({ limit: 100 })).pipe(
          Effect.provide(SqlStore.layer({ retention }).pipe(Layer.provide(client)))
        )
        expect(records.length).toBe(8)
      }).pipe(Effect.scoped))

    it.effect("run-v3-approval: approved by run id, both payments run once; a second resume is refused, naming who decided", () =>
      Effect.gen(function*() {
        const { agent, executions } = clerk()
        yield* onCopy(model("Paid ada 250 and bob 20."), Effect.gen(function*() {
          const exit = completed(yield* Agent.resume(agent, "run-v3-approval", Decision.approveAll(), { decidedBy: "ada" }))
          expect([exit.text, exit.state, [exit.usage.inputTokens, exit.usage.outputTokens, exit.usage.totalTokens]]).toEqual([
            "Paid ada 250 and bob 20.",
            { paid: 275, notes: ["looked up ada"] },
            [42, 13, 55]
          ])
          expect(executions).toEqual([{ tool: "pay", args: { to: "ada", amount: 250 } }, { tool: "pay", args: { to: "bob", amount: 20 } }])
          expect(yield* lines("conv-v3-approval")).toEqual([
            "User: Look up ada, then pay ada 250 and bob 20",
            "Assistant (l1)",
            `ToolResult l1: "account ada: open"`,
            "Assistant (p1, p2)",
            `ToolResult p1: "paid 250 to ada"`,
            `ToolResult p2: "paid 20 to bob"`,
            "Assistant: Paid ada 250 and bob 20."
          ])
          expect(yield* record("run-v3-approval")).toEqual(Option.some(["completed", 5]))
          const again = yield* Effect.flip(Agent.resume(clerk().agent, "run-v3-approval", Decision.approveAll()))
          expect(refusal(again)).toEqual(["RunAlreadyResumed", "completed", "ada"])
          expect(executions.length).toBe(2)
        }))
      }).pipe(Effect.scoped))

    it.effect("run-v3-environment: retried online, only the failed fetch runs again", () =>
      Effect.gen(function*() {
        const { agent, executions } = fetcher({ online: true })
        yield* onCopy(model("example.com says hello."), Effect.gen(function*() {
          const exit = completed(yield* Agent.resume(agent, "run-v3-environment", Decision.retry()))
          expect([exit.text, exit.state]).toEqual(["example.com says hello.", { notes: ["fetching example.com"] }])
          expect(executions).toEqual([{ tool: "fetch_page", args: { url: "https://example.com" } }])
          expect(yield* lines("conv-v3-environment")).toEqual([
            "User: Fetch https://example.com and note it",
            "Assistant (n1, f1)",
            `ToolResult n1: "noted"`,
            `ToolResult f1: "https://example.com: hello"`,
            "Assistant: example.com says hello."
          ])
          expect(yield* record("run-v3-environment")).toEqual(Option.some(["completed", 5]))
        }))
      }).pipe(Effect.scoped))

    it.effect("run-v3-files: approved, the publish runs once; the user's files, the tool's file and both providers' reasoning come back as written", () =>
      Effect.gen(function*() {
        const { agent, executions } = viewer()
        yield* onCopy(model("Published."), Effect.gen(function*() {
          const exit = completed(yield* Agent.resume(agent, "run-v3-files", Decision.approveAll()))
          expect(exit.text).toBe("Published.")
          expect(executions).toEqual([{ tool: "publish", args: { text: "Revenue rose 12% this quarter." } }])
          const { requests } = yield* ScriptedChatModel.ScriptedChatModel
          expect(requests[0]!.messages.slice(0, 4)).toEqual(filesMessages)
          const stored = yield* history("conv-v3-files")
          expect(stored.slice(0, 4)).toEqual(filesMessages)
          expect(stored.slice(4).map(line)).toEqual([`ToolResult u1: "published"`, "Assistant: Published."])
          expect(yield* record("run-v3-files")).toEqual(Option.some(["completed", 5]))
        }))
      }).pipe(Effect.scoped))

    it.effect("conv-v3-chat: two completed turns; the next turn goes on from their conversation", () =>
      Effect.gen(function*() {
        yield* onCopy(model("Goodbye."), Effect.gen(function*() {
          expect([yield* record("run-v3-chat-1"), yield* record("run-v3-chat-2")]).toEqual([Option.some(["completed", 3]), Option.some(["completed", 2])])
          const exit = completed(yield* Agent.run(clerk().agent, { input: "Bye", conversationId: "conv-v3-chat" }))
          expect(exit.text).toBe("Goodbye.")
          expect(yield* lines("conv-v3-chat")).toEqual([...chatAsWritten, "User: Bye", "Assistant: Goodbye."])
        }))
      }).pipe(Effect.scoped))

    it.effect("run-v3-cancelled: a resume is refused, naming who cancelled it; the next turn closes its dangling call, runs nothing of it", () =>
      Effect.gen(function*() {
        const { agent, executions } = clerk()
        yield* onCopy(model("Not paid yet."), Effect.gen(function*() {
          const refused = yield* Effect.flip(Agent.resume(clerk().agent, "run-v3-cancelled", Decision.approveAll()))
          expect(refusal(refused)).toEqual(["RunAlreadyResumed", "failed", "ops@example.com"])
          const exit = completed(yield* Agent.run(agent, { input: "Pay carol 50 instead", conversationId: "conv-v3-cancelled" }))
          expect(exit.text).toBe("Not paid yet.")
          expect(executions).toEqual([])
          expect(yield* lines("conv-v3-cancelled")).toEqual([
            "User: Pay carol 500",
            "Assistant (p3)",
            `ToolResult p3: "${cancelledResult}"`,
            "User: Pay carol 50 instead",
            "Assistant: Not paid yet."
          ])
          expect(yield* record("run-v3-cancelled")).toEqual(Option.some(["failed", 3]))
        }))
      }).pipe(Effect.scoped))

    const crashedText = `saw s1="stamped first", c1="${cancelledResult}", s2="stamped second"`
    const crashedResults = [`ToolResult s1: "stamped first"`, `ToolResult c1: "${cancelledResult}"`, `ToolResult s2: "stamped second"`]

    it.effect("run-v3-crashed, recovered: the ended call is not run again, the cut-off one (not idempotent) is cancelled, the unstarted one runs once", () =>
      Effect.gen(function*() {
        const { agent, executions } = worker()
        yield* onCopy(echo, Effect.gen(function*() {
          const exit = completed(yield* Agent.recover(agent, "run-v3-crashed"))
          expect(exit.text).toBe(crashedText)
          expect(executions).toEqual([{ tool: "stamp", args: { label: "second" } }])
          expect(yield* lines("conv-v3-crashed")).toEqual(["User: Stamp first, charge 30, stamp second", "Assistant (s1, c1, s2)", ...crashedResults, `Assistant: ${crashedText}`])
          expect(yield* record("run-v3-crashed")).toEqual(Option.some(["completed", 4]))
        }))
      }).pipe(Effect.scoped))

    it.effect("run-v3-crashed, by the next turn on its conversation: its batch settled by the same rule, the run failed", () =>
      Effect.gen(function*() {
        const { agent, executions } = worker()
        yield* onCopy(echo, Effect.gen(function*() {
          const exit = completed(yield* Agent.run(agent, { input: "status?", conversationId: "conv-v3-crashed" }))
          expect(exit.text).toBe(crashedText)
          expect(executions).toEqual([{ tool: "stamp", args: { label: "second" } }])
          expect(yield* lines("conv-v3-crashed")).toEqual([
            "User: Stamp first, charge 30, stamp second",
            "Assistant (s1, c1, s2)",
            ...crashedResults,
            "User: status?",
            `Assistant: ${crashedText}`
          ])
          expect(yield* record("run-v3-crashed")).toEqual(Option.some(["failed", 4]))
        }))
      }).pipe(Effect.scoped))

    const idempotentText = `saw s3="stamped third", r1="refreshed cache", c2="charged 40"`

    it.effect("run-v3-crashed-idempotent, by the next turn: the cut-off idempotent call runs again, the unstarted one once; recovering it afterwards is refused", () =>
      Effect.gen(function*() {
        const { agent, executions } = worker()
        yield* onCopy(echo, Effect.gen(function*() {
          const exit = completed(yield* Agent.run(agent, { input: "status?", conversationId: "conv-v3-crashed-idempotent" }))
          expect(exit.text).toBe(idempotentText)
          expect(executions).toEqual([{ tool: "refresh", args: { key: "cache" } }, { tool: "charge", args: { amount: 40 } }])
          expect(yield* lines("conv-v3-crashed-idempotent")).toEqual([
            "User: Stamp third, refresh the cache, charge 40",
            "Assistant (s3, r1, c2)",
            `ToolResult s3: "stamped third"`,
            `ToolResult r1: "refreshed cache"`,
            `ToolResult c2: "charged 40"`,
            "User: status?",
            `Assistant: ${idempotentText}`
          ])
          expect(yield* record("run-v3-crashed-idempotent")).toEqual(Option.some(["failed", 4]))
          const late = yield* Effect.flip(Agent.recover(worker().agent, "run-v3-crashed-idempotent"))
          expect(refusal(late)).toEqual(["RunAlreadyResumed", "failed", undefined])
          expect(executions.length).toBe(2)
        }))
      }).pipe(Effect.scoped))

    it.effect("run-v3-crashed-idempotent, recovered: the same calls run, each once", () =>
      Effect.gen(function*() {
        const { agent, executions } = worker()
        yield* onCopy(echo, Effect.gen(function*() {
          const exit = completed(yield* Agent.recover(agent, "run-v3-crashed-idempotent"))
          expect(exit.text).toBe(idempotentText)
          expect(executions).toEqual([{ tool: "refresh", args: { key: "cache" } }, { tool: "charge", args: { amount: 40 } }])
          expect(yield* record("run-v3-crashed-idempotent")).toEqual(Option.some(["completed", 4]))
        }))
      }).pipe(Effect.scoped))
  })
}
