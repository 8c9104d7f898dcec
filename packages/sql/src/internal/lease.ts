/**
 * Leases as rows: a key, its owner, the token of one holding, and an expiry on the database's
 * clock. Taken in one statement (a new row, or over an expired one), renewed by a fiber every
 * third of the ttl while its scope is open, deleted when the scope closes. A holder that
 * crashed stops renewing: its lease expires and another process may take it.
 */
import type * as SqlClient from "effect/sql/SqlClient"
import { RunStore } from "@agentfx/core"
import { Effect, Option, Random, type Scope } from "effect"
import { randomUUID } from "node:crypto"
import type { DatabaseClock } from "./clock.js"
import { describe } from "./errors.js"

/** The first wait between two attempts of a waiting lease; it doubles up to {@link maxPoll}. */
const firstPoll = 10
/** The longest wait between two attempts (before a jitter of ±20%). */
export const maxPoll = 500

const storeError = (error: unknown) => new RunStore.StoreError({ message: describe(error) })

export const make = (sql: SqlClient.SqlClient, ttl: number, clock: DatabaseClock) => {
  const now = clock.sql

  const acquire = (key: string, owner: string, token: string) =>
    clock.carrying(sql<{ readonly token: string; readonly now: unknown }>`INSERT INTO agentfx_leases (lease_key, owner, token, expires_at)
      VALUES (${key}, ${owner}, ${token}, ${now} + ${ttl})
      ON CONFLICT (lease_key) DO UPDATE SET owner = excluded.owner, token = excluded.token, expires_at = excluded.expires_at
      WHERE agentfx_leases.expires_at <= ${now}
      RETURNING token, ${now} AS now`, (rows) => rows[0]?.now).pipe(
      Effect.map((rows) => rows.length === 1),
      Effect.mapError(storeError)
    )

  const renew = (key: string, token: string) =>
    sql<{ readonly token: string }>`UPDATE agentfx_leases SET expires_at = ${now} + ${ttl}
      WHERE lease_key = ${key} AND token = ${token} RETURNING token`.pipe(Effect.map((rows) => rows.length === 1))

  const release = (key: string, token: string) =>
    sql`DELETE FROM agentfx_leases WHERE lease_key = ${key} AND token = ${token}`.pipe(
      Effect.catch((error) => Effect.logWarning(`Lease ${key}: could not be released (it expires on its own): ${describe(error)}`))
    )

  /** Renews the lease every ttl/3 until its scope closes; stops, saying so, when another owner took it over. */
  const keepAlive = (key: string, token: string): Effect.Effect<void> =>
    Effect.sleep(ttl / 3).pipe(
      Effect.andThen(Effect.result(renew(key, token))),
      Effect.flatMap((renewed) => {
        if (renewed._tag === "Failure") {
          return Effect.andThen(Effect.logWarning(`Lease ${key}: renewal failed, trying again: ${describe(renewed.failure)}`), keepAlive(key, token))
        }
        return renewed.success
          ? keepAlive(key, token)
          : Effect.logWarning(`Lease ${key}: lost (it expired and another owner took it); no longer renewed`)
      })
    )

  /**
   * One attempt: held (released when the scope closes, renewed until then), or `false`. The
   * statement can be interrupted (a database that does not answer): `@effect/sql-pg` cancels
   * it; a row committed just before the cancel arrived expires after the ttl.
   */
  const attempt = (key: string, owner: string) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const token = randomUUID()
        const held = yield* restore(acquire(key, owner, token))
        if (!held) return false
        yield* Effect.addFinalizer(() => release(key, token))
        // interruptible (a forked fiber does not inherit the mask): its scope stops it
        yield* Effect.forkScoped(keepAlive(key, token))
        return true
      })
    )

  /** Attempts until held, waiting between attempts (on `Clock`): 10 ms, doubling up to 500 ms, each ±20%. */
  const waitFor = (key: string, owner: string, delay: number): Effect.Effect<boolean, RunStore.StoreError, Scope.Scope> =>
    Effect.flatMap(attempt(key, owner), (held) =>
      held ? Effect.succeed(true) : Random.nextBetween(0.8, 1.2).pipe(
        Effect.flatMap((jitter) => Effect.sleep(Math.round(delay * jitter))),
        Effect.andThen(waitFor(key, owner, Math.min(delay * 2, maxPoll)))
      ))

  return {
    lease: (key: string, options: { readonly owner: string; readonly wait: boolean }) =>
      options.wait ? waitFor(key, options.owner, firstPoll) : attempt(key, options.owner),
    holder: (key: string) =>
      sql<{ readonly owner: string }>`SELECT owner FROM agentfx_leases WHERE lease_key = ${key} AND expires_at > ${now}`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0]?.owner)),
        Effect.mapError(storeError)
      ),
    /** Deletes the rows of leases that expired (their holders crashed, or lost them). */
    prune: Effect.suspend(() => Effect.asVoid(sql`DELETE FROM agentfx_leases WHERE expires_at <= ${now}`))
  }
}
