/**
 * The run store on SQL: records (the checkpoint as JSON text), the compare-and-set transition
 * as one conditional UPDATE, the outcomes of the running batch, finished records kept for
 * the retention, and leases as rows (`lease.ts`); every time on the database's clock (`clock.ts`).
 */
import * as SqlClient from "effect/sql/SqlClient"
import { RunStore, ToolCall } from "@agentfx/core"
import { Clock, Duration, Effect, Option, Schema } from "effect"
import type { Options } from "../SqlRunStore.js"
import * as DatabaseClock from "./clock.js"
import { describe } from "./errors.js"
import * as Lease from "./lease.js"

const Millis = DatabaseClock.Millis

const RunRow = Schema.Struct({
  run_id: Schema.String,
  agent: Schema.String,
  conversation_id: Schema.String,
  ephemeral: Schema.Number,
  status: RunStore.Status,
  version: Schema.Number,
  created_at: Millis,
  updated_at: Millis,
  // absent from what a transition returns (not read back): null
  checkpoint: Schema.NullOr(Schema.fromJsonString(Schema.Unknown)).pipe(Schema.withDecodingDefaultType(Effect.succeed(null))),
  decided_by: Schema.NullOr(Schema.String),
  decided_at: Schema.NullOr(Millis),
  decision_id: Schema.NullOr(Schema.String)
})

const decodeRows = Schema.decodeUnknownEffect(Schema.Array(RunRow))
const encodeOutcome = Schema.encodeEffect(Schema.fromJsonString(ToolCall.Outcome))
const decodeOutcomes = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ outcome: Schema.fromJsonString(ToolCall.Outcome) })))

/** Who decided and when, as a record or a finished run has them (absent when `NULL`). */
const decided = (row: { readonly decided_by: string | null; readonly decided_at: number | null }) => ({
  ...(row.decided_by === null ? {} : { decidedBy: row.decided_by }),
  ...(row.decided_at === null ? {} : { decidedAt: row.decided_at })
})

const toRecord = (row: typeof RunRow.Type): RunStore.RunRecord => ({
  runId: row.run_id,
  agent: row.agent,
  conversationId: row.conversation_id,
  ephemeral: row.ephemeral === 1,
  status: row.status,
  version: row.version,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  ...(row.checkpoint === null ? {} : { checkpoint: row.checkpoint }),
  ...decided(row),
  ...(row.decision_id === null ? {} : { decisionId: row.decision_id })
})

const records = (rows: ReadonlyArray<unknown>) => Effect.map(decodeRows(rows), (decoded) => decoded.map(toRecord))

/** Every column but the checkpoint. */
const columns = "run_id, agent, conversation_id, ephemeral, status, version, created_at, updated_at, decided_by, decided_at, decision_id"

const storeError = (error: unknown) => new RunStore.StoreError({ message: describe(error) })

/** Whether a one-row write was made. */
const written = (rows: ReadonlyArray<unknown>) => rows.length === 1

const json = (value: unknown) => value === undefined ? null : JSON.stringify(value)

const finishedStatuses = ["completed", "failed"] as const

/** The one row of `finished`: the database's time, and the finished run's fields (`NULL` when it has none). */
const decodeFinished = Schema.decodeUnknownEffect(Schema.Tuple([Schema.Struct({
  now: Millis,
  status: Schema.NullOr(Schema.Literals(finishedStatuses)),
  decided_by: RunRow.fields.decided_by,
  decided_at: RunRow.fields.decided_at
})]))

/**
 * Physical deletion of expired records and leases runs at most this often, by this process's
 * `Clock` (only how often: what expired is the database's to say; a record is hidden as soon as it expires).
 */
const pruneEvery = 60_000

/** A duration option: positive and finite, or the refusal naming it. */
const positive = (name: string, value: Duration.Input | undefined, fallback: Duration.Input) =>
  Effect.flatMap(
    Effect.try({ try: () => Duration.fromInputUnsafe(value ?? fallback), catch: () => `${name} ${JSON.stringify(value)} is not a duration` }),
    (duration) =>
      Duration.isFinite(duration) && Duration.toMillis(duration) > 0
        ? Effect.succeed(Duration.toMillis(duration))
        : Effect.fail(`${name} must be a positive, finite duration (got ${Duration.format(duration)})`)
  ).pipe(Effect.mapError((message) => new RunStore.StoreError({ message: `Invalid SqlRunStore option: ${message}` })))

const defaultRetention = "24 hours"
const defaultLeaseTtl = "30 seconds"

/** See `SqlRunStore.make`. */
export const make = (options: Options | undefined) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const retention = yield* positive("retention", options?.retention, defaultRetention)
    const ttl = yield* positive("leaseTtl", options?.leaseTtl, defaultLeaseTtl)
    const clock = DatabaseClock.make(sql)
    const leases = Lease.make(sql, ttl, clock)
    const now = clock.sql
    let prunedAt = Number.NEGATIVE_INFINITY

    /** Finished longer ago than the retention. */
    const expired = sql`agentfx_runs.status IN ${sql.in(finishedStatuses)} AND agentfx_runs.updated_at <= ${now} - ${retention}`

    /** Visible: running or paused, or finished within the retention. */
    const visible = sql`(status IN ('running', 'paused') OR updated_at > ${now} - ${retention})`

    const prune = Effect.flatMap(Clock.currentTimeMillis, (at) =>
      at - prunedAt < pruneEvery ? Effect.void : Effect.andThen(
        Effect.all([sql`DELETE FROM agentfx_runs WHERE ${expired}`, leases.prune], { discard: true }),
        Effect.sync(() => void (prunedAt = at))
      ))

    /** One statement: the compare-and-set UPDATE, and the clearing of the run's outcomes (a trigger on SQLite, a WITH on PostgreSQL). */
    const transitionStatement = (runId: string, transition: RunStore.Transition) => {
      // who decided: the transition's, else kept — but a pause clears it
      const decidedBy = transition.decidedBy !== undefined
        ? sql`${transition.decidedBy}`
        : transition.to === "paused"
        ? sql`NULL`
        : sql`decided_by`
      // when: a claim's time, else kept — but a pause clears it
      const decidedAt = transition.from.status === "paused" && transition.to === "running"
        ? now
        : transition.to === "paused"
        ? sql`NULL`
        : sql`decided_at`
      // which decision claimed it: kept as who decided is
      const decisionId = transition.decisionId !== undefined
        ? sql`${transition.decisionId}`
        : transition.to === "paused"
        ? sql`NULL`
        : sql`decision_id`
      const update = sql`UPDATE agentfx_runs
        SET status = ${transition.to}, version = version + 1, updated_at = ${now}, checkpoint = ${json(transition.checkpoint)},
          decided_by = ${decidedBy}, decided_at = ${decidedAt}, decision_id = ${decisionId}
        WHERE run_id = ${runId} AND status = ${transition.from.status} AND version = ${transition.from.version}
        RETURNING ${sql.literal(columns)}`
      return sql.onDialectOrElse({
        pg: () =>
          sql`WITH next AS (${update}),
            cleared AS (DELETE FROM agentfx_outcomes WHERE run_id IN (SELECT run_id FROM next)),
            unstarted AS (DELETE FROM agentfx_started WHERE run_id IN (SELECT run_id FROM next))
            SELECT * FROM next`,
        orElse: () => update
      })
    }

    /** The run's row, if it is running at `version`: the condition of every write of a running batch. */
    const runningAt = (runId: string, version: number) => sql`run_id = ${runId} AND status = 'running' AND version = ${version}`

    /**
     * PostgreSQL: a write of a running batch holds the run's row shared while it reads it, so
     * that it waits for a `takeOver` holding the row and then sees the new version (SQLite
     * runs one writer at a time).
     */
    const heldShared = sql.literal(sql.onDialectOrElse({ pg: () => "FOR SHARE", orElse: () => "" }))

    /** Moves the rows of `table` (starts, results) of the run at `version` to the next version, if the run is running there. */
    const carry = (table: string, runId: string, version: number) =>
      sql`UPDATE ${sql.literal(table)} SET version = ${version + 1}
        WHERE run_id = ${runId} AND version = ${version} AND EXISTS (SELECT 1 FROM agentfx_runs WHERE ${runningAt(runId, version)})`

    /**
     * A takeover in one transaction: on PostgreSQL the run's row held first (so that every
     * write of the batch made before is committed and seen by what follows, and none is made
     * after), the batch's rows carried to the next version, then the record moved there (on
     * SQLite its trigger clears the rows of older versions only).
     */
    const takeOverStatements = (runId: string, version: number) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql.onDialectOrElse({ pg: () => sql`SELECT 1 FROM agentfx_runs WHERE ${runningAt(runId, version)} FOR UPDATE`, orElse: () => Effect.void })
        yield* carry("agentfx_started", runId, version)
        yield* carry("agentfx_outcomes", runId, version)
        return yield* sql`UPDATE agentfx_runs SET version = version + 1, updated_at = ${now} WHERE ${runningAt(runId, version)} RETURNING *`
      }))

    /** The rows of `alias` (started calls, results) written at the run's current version: a stale writer's are not read. */
    const ofCurrentVersion = (alias: string, runId: string) =>
      sql`JOIN agentfx_runs r ON r.run_id = ${sql.literal(alias)}.run_id AND r.version = ${sql.literal(alias)}.version WHERE ${sql.literal(alias)}.run_id = ${runId}`

    const service: RunStore.RunStore.Service = {
      durable: true,
      retentionMillis: retention,
      now: clock.now,
      get: (runId) =>
        sql`SELECT * FROM agentfx_runs WHERE run_id = ${runId} AND ${visible}`.pipe(
          Effect.flatMap(records),
          Effect.map((found) => Option.fromNullishOr(found[0])),
          Effect.mapError(storeError)
        ),
      list: (filter) =>
        Effect.suspend(() => {
          const where = [visible]
          if (filter?.status !== undefined) where.push(sql`status = ${filter.status}`)
          if (filter?.agent !== undefined) where.push(sql`agent = ${filter.agent}`)
          if (filter?.conversationId !== undefined) where.push(sql`conversation_id = ${filter.conversationId}`)
          const limit = filter?.limit === undefined ? sql`` : sql`LIMIT ${filter.limit}`
          return sql`SELECT * FROM agentfx_runs WHERE ${sql.and(where)} ORDER BY updated_at DESC, created_at DESC, run_id ${limit}`
        }).pipe(Effect.flatMap(records), Effect.mapError(storeError)),
      insert: (record) =>
        Effect.andThen(
          prune,
          // a new row, or over the row of a run finished longer ago than the retention
          clock.carrying(sql`INSERT INTO agentfx_runs (run_id, agent, conversation_id, ephemeral, status, version, created_at, updated_at, checkpoint, decided_by, decided_at, decision_id)
            VALUES (${record.runId}, ${record.agent}, ${record.conversationId}, ${record.ephemeral ? 1 : 0}, ${record.status},
              ${record.version}, ${record.createdAt}, ${record.updatedAt}, ${json(record.checkpoint)}, ${record.decidedBy ?? null},
              ${record.decidedAt ?? null}, ${record.decisionId ?? null})
            ON CONFLICT (run_id) DO UPDATE SET agent = excluded.agent, conversation_id = excluded.conversation_id,
              ephemeral = excluded.ephemeral, status = excluded.status, version = excluded.version,
              created_at = excluded.created_at, updated_at = excluded.updated_at, checkpoint = excluded.checkpoint,
              decided_by = excluded.decided_by, decided_at = excluded.decided_at, decision_id = excluded.decision_id
            WHERE ${expired}
            RETURNING run_id, ${now} AS now`, (rows) => rows[0]?.now)
        ).pipe(Effect.map(written), Effect.mapError(storeError)),
      transition: (runId, transition) =>
        clock.carrying(Effect.flatMap(transitionStatement(runId, transition), records), ([next]) => next?.updatedAt).pipe(
          // the checkpoint is the one just written: not read back
          Effect.map(([next]) => next === undefined || transition.checkpoint === undefined ? next : { ...next, checkpoint: transition.checkpoint }),
          Effect.mapError(storeError)
        ),
      takeOver: (runId, version) =>
        clock.carrying(Effect.flatMap(takeOverStatements(runId, version), records), ([next]) => next?.updatedAt).pipe(
          Effect.map(([next]) => next),
          Effect.mapError(storeError)
        ),
      recordStarted: (runId, version, callId) =>
        clock.carrying(
          sql`INSERT INTO agentfx_started (run_id, version, call_id) SELECT run_id, version, ${callId} FROM agentfx_runs
            WHERE ${runningAt(runId, version)} ${heldShared} RETURNING seq, ${now} AS now`,
          (rows) => rows[0]?.now
        ).pipe(Effect.map(written), Effect.mapError(storeError)),
      started: (runId) =>
        sql<{ readonly call_id: string }>`SELECT s.call_id FROM agentfx_started s ${ofCurrentVersion("s", runId)} ORDER BY s.seq`.pipe(
          Effect.map((rows) => rows.map((row) => row.call_id)),
          Effect.mapError(storeError)
        ),
      recordOutcome: (runId, version, outcome) =>
        Effect.flatMap(encodeOutcome(outcome), (encoded) =>
          clock.carrying(
            sql`INSERT INTO agentfx_outcomes (run_id, version, outcome) SELECT run_id, version, ${encoded} FROM agentfx_runs
              WHERE ${runningAt(runId, version)} ${heldShared} RETURNING seq, ${now} AS now`,
            (rows) => rows[0]?.now
          )).pipe(Effect.map(written), Effect.mapError(storeError)),
      outcomes: (runId) =>
        sql`SELECT o.outcome FROM agentfx_outcomes o ${ofCurrentVersion("o", runId)} ORDER BY o.seq`.pipe(
          Effect.flatMap(decodeOutcomes),
          Effect.map((rows) => rows.map((row) => row.outcome)),
          Effect.mapError(storeError)
        ),
      // one row whether or not the run is there: the time it was looked for at is carried, for the age of a copy (`clock.ts`)
      finished: (runId) =>
        clock.carrying(
          sql`SELECT ${now} AS now, r.status, r.decided_by, r.decided_at FROM (SELECT 1 AS one) AS looked
            LEFT JOIN agentfx_runs r ON r.run_id = ${runId} AND r.status IN ${sql.in(finishedStatuses)} AND r.updated_at > ${now} - ${retention}`,
          (rows) => rows[0]?.now
        ).pipe(
          Effect.flatMap(decodeFinished),
          Effect.map(([row]) => row.status === null ? Option.none() : Option.some<RunStore.Finished>({ status: row.status, ...decided(row) })),
          Effect.mapError(storeError)
        ),
      lease: leases.lease,
      holder: leases.holder
    }
    return service
  })
