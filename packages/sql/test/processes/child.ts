/**
 * The other process of the process tests (`Processes.test.ts`). Modes:
 * - `crash <db> <manager> <c>`: on SQLite, runs an agent whose batch has three calls (`a` ends at
 *   once, `b` and `c` sleep a minute; `c` is idempotent unless `<c>` is `not-idempotent`); each
 *   records its execution in the table `executions` of the same database. The parent kills it
 *   mid-batch.
 * - `recover <db> <manager> <c>`: `Agent.recover` on the run the crash left (retried while its
 *   lease lives), with tools that end at once; prints the final text.
 * - `resume <pg url> <run id> <n>`: resumes the run `n` times at once when told "go" on stdin;
 *   the approved `transfer` records its execution; prints each resume's outcome.
 * - `lease <dialect> <target> <ttl ms>`: holds the lease `conversation:c` until killed.
 */
import { Agent, Decision, RunStore, ScriptedChatModel, Tool, ToolCallingManager } from "@agentfx/core"
import * as SqlClient from "effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect, Layer, Redacted, Schedule, Schema } from "effect"
import { createInterface } from "node:readline"
import { SqlStore } from "../../src/index.js"
import { transferAgent, transferModel } from "./agents.js"

const [mode, target, third, fourth] = process.argv.slice(2)
const say = (value: unknown) => Effect.sync(() => console.log(JSON.stringify(value)))

/** A client on the test's database: a SQLite file, or a PostgreSQL URL. */
const client = (dialect: "sqlite" | "pg", where: string): Layer.Layer<SqlClient.SqlClient, unknown> =>
  dialect === "sqlite" ? SqliteClient.layer({ filename: where }) : PgClient.layer({ url: Redacted.make(where) })

/** A tool that records its execution (tool name and process) in `executions`, then sleeps `sleep` ms. */
const recorded = (name: string, options: { readonly idempotent: boolean; readonly sleep: number }) =>
  Tool.make(name, {
    description: `Tool ${name}`,
    parameters: Schema.Struct({}),
    success: Schema.String,
    idempotent: options.idempotent,
    handler: () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO executions (tool, pid) VALUES (${name}, ${process.pid})`
        yield* Effect.sleep(options.sleep)
        return `${name} ran in ${process.pid}`
      }).pipe(Effect.orDie)
  })

/** The crash test's agent; `slow`: `b` and `c` sleep a minute; `c` is idempotent unless told `not-idempotent`. */
const crashAgent = (slow: boolean, c = fourth) =>
  Agent.make({
    name: "crash",
    tools: [
      recorded("a", { idempotent: false, sleep: 0 }),
      recorded("b", { idempotent: false, sleep: slow ? 60_000 : 0 }),
      recorded("c", { idempotent: c !== "not-idempotent", sleep: slow ? 60_000 : 0 })
    ]
  })

const crashModel = ScriptedChatModel.layer((request) =>
  request.messages.at(-1)?._tag === "User"
    ? ScriptedChatModel.toolCalls({ id: "call_a", name: "a", args: {} }, { id: "call_b", name: "b", args: {} }, { id: "call_c", name: "c", args: {} })
    : ScriptedChatModel.text(
      request.messages.flatMap((m) => m._tag === "ToolResult" ? [`${m.toolName}: ${JSON.stringify(m.content)}`] : []).join("; ")
    )
)

const manager = (name: string | undefined) => name === "unbounded" ? ToolCallingManager.unbounded() : ToolCallingManager.sequential()

const crash = (db: string, managerName: string) =>
  Agent.run(crashAgent(true), { input: "go", conversationId: "crash-1" }).pipe(
    Effect.provide(SqlStore.layer({ leaseTtl: "1 second" }).pipe(Layer.provideMerge(client("sqlite", db)))),
    Effect.provide(manager(managerName)),
    Effect.provide(crashModel)
  )

const recover = (db: string, managerName: string) =>
  Effect.gen(function*() {
    const store = yield* RunStore.RunStore
    const [running] = yield* store.list({ status: "running" })
    const exit = yield* Agent.recover(crashAgent(false), running!.runId).pipe(
      // the crashed process's lease lives for up to a second after the crash
      Effect.retry({ while: (error) => error._tag === "RunAlreadyResumed", schedule: Schedule.spaced("100 millis"), times: 100 })
    )
    yield* say({ exit: exit._tag, text: exit._tag === "Completed" ? exit.text : undefined })
  }).pipe(
    Effect.provide(SqlStore.layer({ leaseTtl: "1 second" }).pipe(Layer.provideMerge(client("sqlite", db)))),
    Effect.provide(manager(managerName)),
    Effect.provide(crashModel)
  )

const go = Effect.callback<void>((resume) => {
  const lines = createInterface({ input: process.stdin })
  lines.once("line", () => {
    lines.close()
    resume(Effect.void)
  })
})

const resume = (url: string, runId: string, n: number) =>
  Effect.gen(function*() {
    yield* say("ready")
    yield* go
    const results = yield* Effect.all(
      Array.from({ length: n }, () =>
        Agent.resume(transferAgent, runId, Decision.approveAll()).pipe(
          Effect.map((exit) => exit._tag as string),
          Effect.catch((error) => Effect.succeed(error._tag as string))
        )),
      { concurrency: "unbounded" }
    )
    yield* say(results)
  }).pipe(
    Effect.provide(SqlStore.layer().pipe(Layer.provideMerge(client("pg", url)))),
    Effect.provide(transferModel)
  )

const lease = (dialect: "sqlite" | "pg", where: string, ttl: number) =>
  Effect.gen(function*() {
    const store = yield* RunStore.RunStore
    const held = yield* store.lease("conversation:c", { owner: `process-${process.pid}`, wait: false })
    yield* say({ held })
    return yield* Effect.never
  }).pipe(Effect.scoped, Effect.provide(SqlStore.layer({ leaseTtl: ttl }).pipe(Layer.provide(client(dialect, where)))))

const program = mode === "crash"
  ? crash(target!, third!)
  : mode === "recover"
  ? recover(target!, third!)
  : mode === "resume"
  ? resume(target!, third!, Number(fourth))
  : lease(target as "sqlite" | "pg", third!, Number(fourth))

Effect.runPromise(program as Effect.Effect<unknown, unknown>).then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
