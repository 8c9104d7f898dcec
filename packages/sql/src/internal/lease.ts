/**
 * Leases as rows: a key, its owner, the token of one holding, and an expiry on the database's
 * clock. Taken in one statement (a new row, or over an expired one) — on its own, or inside
 * another statement of the store (`taking`: a claim that holds its run, a read that holds its
 * conversation) — renewed by a fiber every third of the ttl while its scope is open, deleted
 * when the scope closes or, before, by the transition that ends its turn (`letGo`). A holder
 * that crashed stops renewing: its lease expires and another process may take it.
 */
import type * as SqlClient from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import { RunStore } from "@agentfx/core"
import { Effect, Option, Random, Scope } from "effect"
import { randomUUID } from "node:crypto"
import type { DatabaseClock } from "./clock.js"
import { describe } from "./errors.js"

/** The first wait between two attempts of a waiting lease; it doubles up to {@link maxPoll}. */
const firstPoll = 10
/** The longest wait between two attempts (before a jitter of ±20%). */
export const maxPoll = 500

const storeError = (error: unknown) => new RunStore.StoreError({ message: describe(error) })

/** One holding of a lease, for the scope it was taken in. */
export interface Holding {
  readonly key: string
  readonly token: string
  readonly scope: Scope.Scope
  /** Deleted (by its scope's end, or by a transition's `letGo`): no longer renewed, nor deleted again. */
  released: boolean
  /** A transition that lets go of it is under way: a renewal that finds it gone is no loss. */
  releasing: boolean
}

export const make = (sql: SqlClient.SqlClient, ttl: number, clock: DatabaseClock) => {
  const now = clock.sql
  /** The leases held for each open scope, for a transition's `letGo`. */
  const holdings = new WeakMap<Scope.Scope, Array<Holding>>()

  /**
   * The lease's row taken from `source` — a `SELECT` of the key, the owner, the token and the
   * expiry, with a `WHERE` (SQLite needs one before an upsert's `ON CONFLICT`) — when it has no
   * row or an expired one: a statement, or a part of a PostgreSQL `WITH`. Returns the token.
   */
  const taking = (source: Fragment) =>
    sql`INSERT INTO agentfx_leases (lease_key, owner, token, expires_at) ${source}
      ON CONFLICT (lease_key) DO UPDATE SET owner = excluded.owner, token = excluded.token, expires_at = excluded.expires_at
      WHERE agentfx_leases.expires_at <= ${now}
      RETURNING token`

  /** The expiry of a lease taken now. */
  const expiry = sql`${now} + ${ttl}`

  const acquire = (key: string, owner: string, token: string) =>
    clock.carrying(
      sql<{ readonly token: string; readonly now: unknown }>`INSERT INTO agentfx_leases (lease_key, owner, token, expires_at)
      VALUES (${key}, ${owner}, ${token}, ${expiry})
      ON CONFLICT (lease_key) DO UPDATE SET owner = excluded.owner, token = excluded.token, expires_at = excluded.expires_at
      WHERE agentfx_leases.expires_at <= ${now}
      RETURNING token, ${now} AS now`,
      (rows) => rows[0]?.now
    ).pipe(
      Effect.map((rows) => rows.length === 1),
      Effect.mapError(storeError)
    )

  const renew = (key: string, token: string) =>
    sql<{ readonly token: string }>`UPDATE agentfx_leases SET expires_at = ${expiry}
      WHERE lease_key = ${key} AND token = ${token} RETURNING token`.pipe(Effect.map((rows) => rows.length === 1))

  const release = (key: string, token: string) =>
    sql`DELETE FROM agentfx_leases WHERE lease_key = ${key} AND token = ${token}`.pipe(
      Effect.catch((error) => Effect.logWarning(`Lease ${key}: could not be released (it expires on its own): ${describe(error)}`))
    )

  /** Renews the lease every ttl/3 until it is let go of; stops, saying so, when another owner took it over. */
  const keepAlive = (holding: Holding): Effect.Effect<void> =>
    Effect.sleep(ttl / 3).pipe(
      Effect.andThen(Effect.suspend(() => holding.released ? Effect.void : Effect.flatMap(Effect.result(renew(holding.key, holding.token)), (renewed) => {
        if (renewed._tag === "Failure") {
          return Effect.andThen(
            Effect.logWarning(`Lease ${holding.key}: renewal failed, trying again: ${describe(renewed.failure)}`),
            keepAlive(holding)
          )
        }
        // gone because a transition let go of it (or is letting go of it): no loss
        return renewed.success || holding.releasing
          ? keepAlive(holding)
          : holding.released
          ? Effect.void
          : Effect.logWarning(`Lease ${holding.key}: lost (it expired and another owner took it); no longer renewed`)
      })))
    )

  /** Marks a holding let go of: its scope's end deletes nothing more, its renewal stops. */
  const forget = (holding: Holding) => {
    if (holding.released) return
    holding.released = true
    const held = holdings.get(holding.scope)
    if (held !== undefined) held.splice(held.indexOf(holding), 1)
  }

  /**
   * A lease just taken with `token` (by its own statement or inside another), held for the
   * current scope: deleted when the scope closes unless let go of before, renewed until then.
   * Run uninterruptibly right after the statement that took it.
   */
  const keep = (key: string, token: string) =>
    Effect.flatMap(Effect.scope, (scope) => {
      const holding: Holding = { key, token, scope, released: false, releasing: false }
      const held = holdings.get(scope)
      if (held === undefined) holdings.set(scope, [holding])
      else held.push(holding)
      return Effect.andThen(
        Effect.addFinalizer(() => Effect.suspend(() => holding.released ? Effect.void : Effect.andThen(Effect.sync(() => forget(holding)), release(key, token)))),
        // interruptible (a forked fiber does not inherit the mask): its scope stops it
        Effect.asVoid(Effect.forkScoped(keepAlive(holding)))
      )
    })

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
        yield* keep(key, token)
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

  /** The holdings of the current scope that `keys` names and that are not let go of yet. */
  const heldFor = (keys: ReadonlyArray<string> | undefined): Effect.Effect<ReadonlyArray<Holding>> =>
    keys === undefined || keys.length === 0 ? Effect.succeed([]) : Effect.map(Effect.serviceOption(Scope.Scope), (scope) =>
      Option.isNone(scope) ? [] : (holdings.get(scope.value) ?? []).filter((holding) => !holding.released && keys.includes(holding.key)))

  return {
    lease: (key: string, options: { readonly owner: string; readonly wait: boolean }) =>
      options.wait ? waitFor(key, options.owner, firstPoll) : attempt(key, options.owner),
    holder: (key: string) =>
      sql<{ readonly owner: string }>`SELECT owner FROM agentfx_leases WHERE lease_key = ${key} AND expires_at > ${now}`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0]?.owner)),
        Effect.mapError(storeError)
      ),
    /** Deletes the rows of leases that expired (their holders crashed, or lost them). */
    prune: Effect.suspend(() => Effect.asVoid(sql`DELETE FROM agentfx_leases WHERE expires_at <= ${now}`)),
    taking,
    expiry,
    keep,
    heldFor,
    /**
     * `holdings` let go of by a statement that deletes them ({@link deleting}) when `applied`:
     * marked so, their renewal stops and their scope deletes nothing. Runs the statement.
     */
    lettingGo: <A, E, R>(holdings: ReadonlyArray<Holding>, statement: Effect.Effect<A, E, R>, applied: (result: A) => boolean) =>
      holdings.length === 0 ? statement : Effect.suspend(() => {
        for (const holding of holdings) holding.releasing = true
        return statement.pipe(
          Effect.tap((result) => Effect.sync(() => { if (applied(result)) for (const holding of holdings) forget(holding) })),
          Effect.ensuring(Effect.sync(() => { for (const holding of holdings) holding.releasing = false }))
        )
      }),
    /**
     * Deletes `holdings`' rows now, by one statement: let go of (see `lettingGo`). A failure is
     * logged and leaves them to their scope's end, which deletes them again.
     */
    letGoNow: (holdings: ReadonlyArray<Holding>) =>
      Effect.suspend(() => {
        for (const holding of holdings) holding.releasing = true
        return sql`DELETE FROM agentfx_leases WHERE lease_key IN ${sql.in(holdings.map((holding) => holding.key))}
          AND token IN ${sql.in(holdings.map((holding) => holding.token))}`.pipe(
          Effect.andThen(Effect.sync(() => { for (const holding of holdings) forget(holding) })),
          Effect.catch((error) => Effect.logWarning(`Leases ${holdings.map((holding) => holding.key).join(", ")}: not let go of yet (their scope's end tries again): ${describe(error)}`)),
          Effect.ensuring(Effect.sync(() => { for (const holding of holdings) holding.releasing = false }))
        )
      }),
    /** The `WHERE` of a `DELETE` of `holdings`' rows (by key and token: a lease another took since is not touched). */
    deleting: (holdings: ReadonlyArray<Holding>) =>
      sql`lease_key IN ${sql.in(holdings.map((holding) => holding.key))} AND token IN ${sql.in(holdings.map((holding) => holding.token))}`
  }
}
