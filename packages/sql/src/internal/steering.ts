/**
 * The steering inbox as rows (`agentfx_steering`, decision 170): a steered input is a row,
 * pending until the turn holding its conversation takes it or its sender withdraws it — each an
 * `UPDATE … WHERE status = 'pending'`, so that a row is taken once or withdrawn, never both (on
 * PostgreSQL the second of two such updates waits for the first, then finds the row no longer
 * pending). Settled rows are kept for the store's retention, for their senders to read.
 */
import type * as SqlClient from "effect/sql/SqlClient"
import { RunStore } from "@agentfx/core"
import { Effect, Option, Random } from "effect"
import type { DatabaseClock } from "./clock.js"
import { describe } from "./errors.js"
import { maxPoll } from "./lease.js"

const storeError = (error: unknown) => new RunStore.StoreError({ message: describe(error) })

interface Row {
  readonly status: string
  readonly run_id: string | null
}

const statusOf = (row: Row | undefined): RunStore.SteerStatus =>
  row === undefined || row.status === "withdrawn"
    ? { _tag: "withdrawn" }
    : row.status === "taken"
    ? { _tag: "taken", runId: row.run_id ?? "" }
    : { _tag: "pending" }

/** The first wait of a sender between two looks; it doubles up to the leases' longest. */
const firstPoll = 10

export const make = (
  sql: SqlClient.SqlClient,
  clock: DatabaseClock,
  retention: number,
  holder: (key: string) => Effect.Effect<Option.Option<string>, RunStore.StoreError>
): RunStore.Steering => {
  const now = clock.sql
  const status = (id: string) =>
    sql<Row>`SELECT status, run_id FROM agentfx_steering WHERE steer_id = ${id}`.pipe(
      Effect.map((rows) => statusOf(rows[0])),
      Effect.mapError(storeError)
    )
  /** Looks again, backing off, until the input is no longer pending or the conversation's holder changed. */
  const poll = (id: string, key: string, seen: Option.Option<string>, wait: number): Effect.Effect<void, RunStore.StoreError> =>
    Effect.flatMap(Random.nextBetween(0.8, 1.2), (jitter) =>
      Effect.andThen(
        Effect.sleep(Math.round(wait * jitter)),
        Effect.flatMap(status(id), (now) =>
          now._tag !== "pending"
            ? Effect.void
            : Effect.flatMap(holder(key), (current) =>
              Option.getOrUndefined(current) !== Option.getOrUndefined(seen) ? Effect.void : poll(id, key, seen, Math.min(wait * 2, maxPoll))))
      ))
  return {
    offer: ({ conversationId, id, message }) =>
      sql.withTransaction(Effect.andThen(
        // an input withdrawn and left again (its sender steered it into the next holder) is pending again, under its id
        sql`DELETE FROM agentfx_steering
          WHERE (status <> 'pending' AND created_at <= ${now} - ${retention}) OR (steer_id = ${id} AND status = 'withdrawn')`,
        sql`INSERT INTO agentfx_steering (steer_id, conversation_id, message, status, created_at)
          VALUES (${id}, ${conversationId}, ${JSON.stringify(message)}, 'pending', ${now})`
      )).pipe(Effect.asVoid, Effect.mapError(storeError)),
    // the take and its record in one transaction: a record that fails, or a process that dies before the commit, takes nothing
    take: (conversationId, runId, record) =>
      sql.withTransaction(Effect.flatMap(
        sql<{ readonly seq: number | string; readonly steer_id: string; readonly message: string }>`UPDATE agentfx_steering
          SET status = 'taken', run_id = ${runId}
          WHERE conversation_id = ${conversationId} AND status = 'pending'
          RETURNING seq, steer_id, message`.pipe(Effect.mapError(storeError)),
        (rows) =>
          rows.length === 0 ? Effect.void : record(
            [...rows].sort((a, b) => Number(a.seq) - Number(b.seq)).map((row) => ({ id: row.steer_id, message: JSON.parse(row.message) as unknown }))
          )
      )).pipe(Effect.catchTag("SqlError", (error) => Effect.fail(storeError(error)))),
    withdraw: (id) =>
      Effect.andThen(
        sql`UPDATE agentfx_steering SET status = 'withdrawn' WHERE steer_id = ${id} AND status = 'pending'`.pipe(Effect.mapError(storeError)),
        status(id)
      ),
    status,
    changed: (id, conversationId) => {
      const key = `conversation:${conversationId}`
      return Effect.flatMap(holder(key), (seen) => Option.isNone(seen) ? Effect.void : poll(id, key, seen, firstPoll))
    }
  }
}
