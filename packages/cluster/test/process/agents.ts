/**
 * The agent of the cluster process tests, and its side table: every tool execution inserts a
 * row in `executions` (call id, tool, process, time) on the test's database, before it does
 * anything else, so a call cut off by a SIGKILL is counted too.
 *
 * The scripted model reads the user's input:
 * - `crash`: one batch of `charge` (not idempotent) and `fetch` (idempotent); each sleeps a minute
 *   on its first execution (the test kills the runner meanwhile) and ends at once on any later one;
 *   then the model answers with what each call returned.
 * - `freeze`: one batch of `debit` (not idempotent; its first execution sleeps 4 s, so it ends as the
 *   frozen runner wakes) and `probe` (idempotent; its first execution sleeps a minute, so it is still
 *   running when the runner wakes); then the model answers with what each call returned. Both print
 *   how each execution ended (`{"ended":"finished"|"interrupted","call","pid"}`) on the runner's
 *   stdout.
 * - `pay <n>`: `lookup` (call `lookup-<n>`), then `transfer` (call `transfer-<n>`, needs approval),
 *   then "paid <n>": a 3-step run with one approval.
 * - `work <n>`: `work` (call `work-<n>`, not idempotent, a few ms), then "worked <n>".
 */
import { Agent, type ChatModel, type Message, ScriptedChatModel, Tool, ToolCallingManager } from "@agentfx/core"
import * as SqlClient from "effect/sql/SqlClient"
import type { Layer } from "effect"
import { Cause, Effect, identity, Schema } from "effect"

/** Creates the side table (once per database). */
export const createExecutions = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql`CREATE TABLE IF NOT EXISTS executions (id BIGSERIAL PRIMARY KEY, call_id TEXT NOT NULL, tool TEXT NOT NULL, pid INTEGER NOT NULL, at DOUBLE PRECISION NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1000))`
)

/** One row per tool execution. `at`: ms since the epoch (the database's clock). */
export interface Execution {
  readonly callId: string
  readonly tool: string
  readonly pid: number
  readonly at: number
}

/** Every execution, in order. */
export const executions = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ readonly call_id: string; readonly tool: string; readonly pid: number; readonly at: number }>`SELECT call_id, tool, pid, at FROM executions ORDER BY id`).pipe(
    Effect.map((rows): ReadonlyArray<Execution> => rows.map((row) => ({ callId: row.call_id, tool: row.tool, pid: Number(row.pid), at: Number(row.at) })))
  )

/** Executions per call id. */
export const countsByCall = (rows: ReadonlyArray<Execution>): Record<string, number> =>
  rows.reduce<Record<string, number>>((counts, row) => ({ ...counts, [row.callId]: (counts[row.callId] ?? 0) + 1 }), {})

/** How a reported execution ended, as its runner prints it on stdout. */
export interface Ended {
  readonly ended: "finished" | "interrupted"
  readonly call: string
  readonly pid: number
}

/** Prints how the execution of `callId` ended, when it finished or was interrupted. */
const reportEnd = (callId: string) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.onExit(self, (exit) => {
    const ended = exit._tag === "Success" ? "finished" : Cause.hasInterruptsOnly(exit.cause) ? "interrupted" : undefined
    return ended === undefined
      ? Effect.void
      : Effect.sync(() => void process.stdout.write(`${JSON.stringify({ ended, call: callId, pid: process.pid } satisfies Ended)}\n`))
  })

/** Records the execution; then sleeps `firstSleep` ms when it is the call's first, else `sleep`. */
const record = (tool: string, callId: string, options: { readonly firstSleep: number; readonly sleep: number; readonly report: boolean }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [{ n }] = yield* sql<{ readonly n: number }>`WITH inserted AS (INSERT INTO executions (call_id, tool, pid) VALUES (${callId}, ${tool}, ${process.pid}) RETURNING 1) SELECT count(*)::int AS n FROM executions WHERE call_id = ${callId}`
    yield* Effect.sleep(n === 0 ? options.firstSleep : options.sleep)
    return `${tool} ran in ${process.pid}`
  }).pipe(Effect.orDie, options.report ? reportEnd(callId) : identity)

const tool = (name: string, options: { readonly idempotent?: boolean; readonly needsApproval?: boolean; readonly firstSleep?: number; readonly sleep?: number; readonly report?: boolean }) =>
  Tool.make(name, {
    description: `Tool ${name}`,
    parameters: Schema.Struct({}),
    success: Schema.String,
    idempotent: options.idempotent ?? false,
    needsApproval: options.needsApproval ?? false,
    handler: (_, call) => record(name, call.callId, { firstSleep: options.firstSleep ?? options.sleep ?? 0, sleep: options.sleep ?? 0, report: options.report ?? false })
  })

/** How long the first execution of the `freeze` scenario's `debit` sleeps (ms). */
export const freezeDebitSleep = 4_000

/** The agent every runner of the tests serves. */
export const proofAgent: Agent.Agent<{}, SqlClient.SqlClient> = Agent.make({
  name: "proof",
  tools: [
    tool("charge", { firstSleep: 60_000 }),
    tool("fetch", { idempotent: true, firstSleep: 60_000 }),
    tool("debit", { firstSleep: freezeDebitSleep, report: true }),
    tool("probe", { idempotent: true, firstSleep: 60_000, report: true }),
    tool("lookup", {}),
    tool("transfer", { needsApproval: true }),
    tool("work", { sleep: 5 })
  ]
})

const results = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((m) => m._tag === "ToolResult" ? [`${m.toolName}: ${JSON.stringify(m.content)}`] : []).join("; ")

/** The scripted model of {@link proofAgent}. */
export const proofModel: Layer.Layer<ChatModel.ChatModel | ScriptedChatModel.ScriptedChatModel> = ScriptedChatModel.layer((request) => {
  const user = request.messages.find((m): m is Message.UserMessage => m._tag === "User")
  const [what, n] = (user?.text ?? "").split(" ")
  const last = request.messages.at(-1)
  if (what === "crash") {
    return last?._tag === "User"
      ? ScriptedChatModel.toolCalls({ id: "call_charge", name: "charge", args: {} }, { id: "call_fetch", name: "fetch", args: {} })
      : ScriptedChatModel.text(results(request.messages))
  }
  if (what === "freeze") {
    return last?._tag === "User"
      ? ScriptedChatModel.toolCalls({ id: "call_debit", name: "debit", args: {} }, { id: "call_probe", name: "probe", args: {} })
      : ScriptedChatModel.text(results(request.messages))
  }
  if (what === "pay") {
    if (last?._tag === "User") return ScriptedChatModel.toolCalls({ id: `lookup-${n}`, name: "lookup", args: {} })
    if (last?._tag === "ToolResult" && last.toolName === "lookup") return ScriptedChatModel.toolCalls({ id: `transfer-${n}`, name: "transfer", args: {} })
    return ScriptedChatModel.text(`paid ${n}: ${results(request.messages)}`)
  }
  return last?._tag === "User" ? ScriptedChatModel.toolCalls({ id: `work-${n}`, name: "work", args: {} }) : ScriptedChatModel.text(`worked ${n}`)
}, { recordRequests: false })

/** The calls of one batch run at once (the `crash` batch has both calls in flight at the kill). */
export const proofManager = ToolCallingManager.unbounded()
