/** `RunLocation` in a table beside the run store, on the store's SQL client (SQLite or PostgreSQL). */
import { RunStore } from "@agentfx/core"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { Clock, Effect, Layer, Option, Schedule } from "effect"
import { RunLocation } from "../RunLocation.js"

const storeError = (error: { readonly message: string }) =>
  new RunStore.StoreError({ message: `Run locations (agentfx_cluster_locations): ${error.message}` })

/**
 * PostgreSQL's answers to a `CREATE TABLE IF NOT EXISTS` that raced another member's (not safe
 * against itself: 23505 on `pg_type`, 42P07 duplicate table, 42710 duplicate object). The
 * statement waited for the other's commit: run again, it finds the table.
 */
const concurrentCreate = (error: SqlError): boolean => {
  const code = (error.reason.cause as { readonly code?: unknown } | undefined)?.code
  return code === "23505" || code === "42P07" || code === "42710"
}

/**
 * The table, created if missing, and the service on it: a new Layer for each member, on that
 * member's SQL client (a module-level Layer would be memoized across `Effect.provide` calls,
 * and a member built inside another's context would get the other's table).
 */
export const layer = (): Layer.Layer<RunLocation, RunStore.StoreError, SqlClient.SqlClient> =>
  Layer.effect(
    RunLocation,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE IF NOT EXISTS agentfx_cluster_locations (
        agent TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        runner TEXT NOT NULL,
        since BIGINT NOT NULL,
        PRIMARY KEY (agent, entity_id)
      )`.pipe(
        Effect.retry({ while: concurrentCreate, schedule: Schedule.spaced("50 millis"), times: 5 }),
        Effect.mapError(storeError)
      )
      return RunLocation.of({
        enter: (agent, entityId, runner) =>
          Effect.flatMap(Clock.currentTimeMillis, (since) =>
            sql`INSERT INTO agentfx_cluster_locations (agent, entity_id, runner, since) VALUES (${agent}, ${entityId}, ${runner}, ${since})
                ON CONFLICT (agent, entity_id) DO UPDATE SET runner = excluded.runner, since = excluded.since`).pipe(
            Effect.asVoid,
            Effect.mapError(storeError)
          ),
        find: (agent, entityId) =>
          sql<{ readonly runner: string; readonly since: number | string }>`SELECT runner, since FROM agentfx_cluster_locations WHERE agent = ${agent} AND entity_id = ${entityId}`.pipe(
            Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), ({ runner, since }) => ({ runner, since: Number(since) }))),
            Effect.mapError(storeError)
          )
      })
    })
  )
