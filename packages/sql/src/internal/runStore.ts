/**
 * The run store on SQL: records (the checkpoint as JSON text), the compare-and-set transition
 * as one conditional UPDATE, the outcomes of the running batch, finished records kept for
 * the retention, and leases as rows (`lease.ts`); every time on the database's clock (`clock.ts`).
 * On PostgreSQL a step of a run is one statement (decision 161): a transition with the messages
 * it carries and the leases it lets go of, a claim with the lease of its run, a resume's read
 * with the lease of its conversation — each a data-modifying `WITH`. SQLite, in-process, makes
 * them one transaction (a transition with messages) or two statements.
 */
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { Fragment } from "effect/sql/Statement"
import type { ChatMemory, Message } from "@agentfx/core"
import { RunStore, ToolCall } from "@agentfx/core"
import { Array as Arr, Clock, Duration, Effect, Option, Schema } from "effect"
import type { Scope } from "effect"
import { randomUUID } from "node:crypto"
import type { Options } from "../SqlRunStore.js"
import { encodeMessages, rowsPerInsert } from "./chatMemory.js"
import * as DatabaseClock from "./clock.js"
import { describe } from "./errors.js"
import * as Lease from "./lease.js"
import * as Steering from "./steering.js"

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

/** A row as a statement returns it. */
type Row = { readonly [column: string]: unknown }

/** A lease a step takes for its scope: its key, its owner, and the token of this holding. */
interface Taken {
  readonly key: string
  readonly owner: string
  readonly token: string
}

/**
 * See `SqlRunStore.make`. `conversations`: the memory on the same client, made with the store
 * (`SqlStore.layer`), whose messages a transition writes in its own step (`Transition.messages`).
 */
export const make = (options: Options | undefined, conversations?: ChatMemory.ChatMemory.Service) =>
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

    /** The compare-and-set UPDATE of a transition, returning the record's columns but its checkpoint. */
    const updateOf = (runId: string, transition: RunStore.Transition) => {
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
      return sql`UPDATE agentfx_runs
        SET status = ${transition.to}, version = version + 1, updated_at = ${now}, checkpoint = ${json(transition.checkpoint)},
          decided_by = ${decidedBy}, decided_at = ${decidedAt}, decision_id = ${decisionId}
        WHERE run_id = ${runId} AND status = ${transition.from.status} AND version = ${transition.from.version}
        RETURNING ${sql.literal(columns)}`
    }

    /**
     * PostgreSQL: a transition in one statement, a data-modifying `WITH` — the compare-and-set
     * UPDATE (`next`); the clearing of the batch's starts and results; and, each only when the
     * UPDATE applied, the starts it carries recorded at the new version, the messages appended to
     * the run's conversation in order, the leases of the ending turn deleted, a lease taken.
     * Returns the record's row, with `held`. (The clearing reads the rows as they were before the
     * statement: the starts it records are not cleared.)
     */
    const pgStep = (
      runId: string,
      transition: RunStore.Transition,
      started: ReadonlyArray<string> | undefined,
      messages: ReadonlyArray<string> | undefined,
      letGo: ReadonlyArray<Lease.Holding>,
      take: Taken | undefined
    ) => {
      const parts: Array<Fragment> = [
        sql`next AS (${updateOf(runId, transition)})`,
        sql`cleared AS (DELETE FROM agentfx_outcomes WHERE run_id IN (SELECT run_id FROM next))`,
        sql`unstarted AS (DELETE FROM agentfx_started WHERE run_id IN (SELECT run_id FROM next))`
      ]
      if (started !== undefined) {
        parts.push(sql`began AS (INSERT INTO agentfx_started (run_id, version, call_id)
          SELECT next.run_id, next.version, s.call_id FROM next, unnest(${started}::text[]) WITH ORDINALITY AS s(call_id, n) ORDER BY s.n)`)
      }
      if (messages !== undefined) {
        parts.push(sql`appended AS (INSERT INTO agentfx_messages (conversation_id, message)
          SELECT next.conversation_id, m.message FROM next, unnest(${messages}::text[]) WITH ORDINALITY AS m(message, n) ORDER BY m.n)`)
      }
      if (letGo.length > 0) {
        parts.push(sql`released AS (DELETE FROM agentfx_leases WHERE ${leases.deleting(letGo)} AND EXISTS (SELECT 1 FROM next))`)
      }
      if (take !== undefined) {
        parts.push(sql`held AS (${leases.taking(sql`SELECT ${take.key}, ${take.owner}, ${take.token}, ${leases.expiry} FROM next WHERE true`)})`)
      }
      return sql`WITH ${sql.join(", ", false)(parts)}
        SELECT next.*${take === undefined ? sql`` : sql`, EXISTS (SELECT 1 FROM held) AS held`} FROM next`
    }

    /**
     * SQLite: the UPDATE (its triggers clear the batch's older rows in the same statement); with
     * starts or messages, one transaction that also records the starts at the new version,
     * appends the messages and deletes the ending turn's leases — all or none. Without them, the
     * leases are deleted right after the UPDATE applied, by a statement of their own (`step`).
     */
    const sqliteStep = (
      runId: string,
      transition: RunStore.Transition,
      started: ReadonlyArray<string> | undefined,
      messages: ReadonlyArray<string> | undefined,
      letGo: ReadonlyArray<Lease.Holding>
    ): Effect.Effect<ReadonlyArray<Row>, SqlError> => {
      const update = updateOf(runId, transition)
      if (messages === undefined && started === undefined) return update
      const carried = (row: Row) =>
        Effect.all([
          started === undefined ? Effect.void : Effect.forEach(Arr.chunksOf(started, rowsPerInsert), (chunk) =>
            sql`INSERT INTO agentfx_started ${sql.insert(Arr.map(chunk, (call_id) => ({ run_id: runId, version: row.version as number, call_id })))}`, { discard: true }),
          messages === undefined ? Effect.void : Effect.forEach(Arr.chunksOf(messages, rowsPerInsert), (chunk) =>
            sql`INSERT INTO agentfx_messages ${sql.insert(Arr.map(chunk, (message) => ({ conversation_id: String(row.conversation_id), message })))}`, { discard: true }),
          letGo.length === 0 ? Effect.void : Effect.asVoid(sql`DELETE FROM agentfx_leases WHERE ${leases.deleting(letGo)}`)
        ], { discard: true })
      return sql.withTransaction(Effect.tap(update, (rows) => rows.length === 0 ? Effect.void : carried(rows[0]!)))
    }

    /** A transition that carries nothing: the compare-and-set and the clearing of the batch's rows, one statement. */
    const plainStep = (runId: string, transition: RunStore.Transition): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
      sql.onDialectOrElse({ pg: () => pgStep(runId, transition, undefined, undefined, [], undefined), orElse: () => updateOf(runId, transition) })

    /**
     * A transition and what it carries (`Transition.started`, `messages`, `letGo`), and on PostgreSQL a
     * lease taken in its statement when `take` is given: the rows it returned, and whether the
     * lease was taken.
     */
    const step = (runId: string, transition: RunStore.Transition, take: Taken | undefined) =>
      // a transition that carries nothing: its statement alone, as it was before anything rode on it
      take === undefined && (transition.messages === undefined || transition.messages.length === 0) &&
        (transition.started === undefined || transition.started.length === 0) &&
        (transition.letGo === undefined || transition.letGo.length === 0)
        ? clock.carrying(plainStep(runId, transition), (rows) => rows[0]?.updated_at).pipe(
          Effect.map((rows) => ({ rows, held: false })),
          Effect.mapError(storeError)
        )
        : Effect.gen(function*() {
          if (transition.messages !== undefined && transition.messages.length > 0 && conversations === undefined) {
            return yield* Effect.die(new Error("This SqlRunStore was made without its ChatMemory (SqlStore.layer): a transition carries no messages"))
          }
          const messages = transition.messages === undefined || transition.messages.length === 0
            ? undefined
            : yield* Effect.mapError(encodeMessages(transition.messages as ReadonlyArray<Message.Message>), storeError)
          // starts only with a transition to running: the rows of a running batch
          const started = transition.started === undefined || transition.started.length === 0 || transition.to !== "running" ? undefined : transition.started
          const letGo = yield* leases.heldFor(transition.letGo)
          const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
          // in the transition's own step on PostgreSQL, and in SQLite's transaction with starts or messages
          const inStep = pg || messages !== undefined || started !== undefined
          const statement: Effect.Effect<ReadonlyArray<Row>, SqlError> = pg
            ? pgStep(runId, transition, started, messages, letGo, take)
            : sqliteStep(runId, transition, started, messages, inStep ? letGo : [])
          const rows = yield* clock.carrying(
            leases.lettingGo(inStep ? letGo : [], statement, (rows) => rows.length === 1),
            (rows) => rows[0]?.updated_at
          ).pipe(Effect.mapError(storeError))
          // SQLite without messages: deleted right after, by a statement of their own (the one their scope's end would make)
          if (!inStep && letGo.length > 0 && rows.length === 1) yield* leases.letGoNow(letGo)
          return { rows, held: take !== undefined && rows[0]?.held === true }
        })

    /** The record a transition returned, if it applied (the checkpoint is the one just written: not read back). */
    const afterwards = (rows: ReadonlyArray<Row>, transition: RunStore.Transition) =>
      records(rows).pipe(
        Effect.map(([next]) => next === undefined || transition.checkpoint === undefined ? next : { ...next, checkpoint: transition.checkpoint }),
        Effect.mapError(storeError)
      )

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

    const get = (runId: string) =>
      sql`SELECT * FROM agentfx_runs WHERE run_id = ${runId} AND ${visible}`.pipe(
        Effect.flatMap(records),
        Effect.map((found) => Option.fromNullishOr(found[0])),
        Effect.mapError(storeError)
      )

    const service: RunStore.RunStore.Service = {
      durable: true,
      transitionStarts: true,
      ...(conversations === undefined ? {} : { conversations }),
      retentionMillis: retention,
      now: clock.now,
      get,
      getHolding: (runId) =>
        sql.onDialectOrElse({
          // one statement: the record read, and its conversation's lease taken when it is paused
          pg: () =>
            Effect.uninterruptibleMask((restore) =>
              Effect.gen(function*() {
                const token = randomUUID()
                const rows = yield* restore(clock.carrying(
                  sql`WITH r AS (SELECT * FROM agentfx_runs WHERE run_id = ${runId} AND ${visible}),
                    held AS (${leases.taking(sql`SELECT 'conversation:' || r.conversation_id, r.run_id, ${token}, ${leases.expiry} FROM r
                      WHERE r.status = 'paused' AND r.ephemeral = 0`)})
                    SELECT r.*, EXISTS (SELECT 1 FROM held) AS held, ${now} AS now FROM r`,
                  (rows) => rows[0]?.now
                )).pipe(Effect.mapError(storeError))
                const held = rows[0]?.held === true
                if (held) yield* leases.keep(`conversation:${String(rows[0]!.conversation_id)}`, token)
                const [record] = yield* Effect.mapError(records(rows), storeError)
                return { record: Option.fromNullishOr(record), held }
              })
            ),
          // two statements, as `get` then `lease`
          orElse: () =>
            Effect.flatMap(get(runId), (record): Effect.Effect<{ record: Option.Option<RunStore.RunRecord>; held: boolean }, RunStore.StoreError, Scope.Scope> =>
              Option.isSome(record) && record.value.status === "paused" && !record.value.ephemeral
                ? Effect.map(leases.lease(`conversation:${record.value.conversationId}`, { owner: runId, wait: false }), (held) => ({ record, held }))
                : Effect.succeed({ record, held: false }))
        }),
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
      transition: (runId, transition) => Effect.flatMap(step(runId, transition, undefined), ({ rows }) => afterwards(rows, transition)),
      transitionHolding: (runId, transition, hold) =>
        sql.onDialectOrElse({
          pg: () =>
            Effect.uninterruptibleMask((restore) =>
              Effect.gen(function*() {
                const take = { ...hold, token: randomUUID() }
                const { held, rows } = yield* restore(step(runId, transition, take))
                if (held) yield* leases.keep(take.key, take.token)
                return { record: yield* afterwards(rows, transition), held }
              })
            ),
          // two statements, as `transition` then `lease`
          orElse: () =>
            Effect.flatMap(
              Effect.flatMap(step(runId, transition, undefined), ({ rows }) => afterwards(rows, transition)),
              (record): Effect.Effect<{ record: RunStore.RunRecord | undefined; held: boolean }, RunStore.StoreError, Scope.Scope> =>
              record === undefined
                ? Effect.succeed({ record, held: false })
                : Effect.map(leases.lease(hold.key, { owner: hold.owner, wait: false }), (held) => ({ record, held })))
        }),
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
      holder: leases.holder,
      steering: Steering.make(sql, clock, retention, leases.holder)
    }
    return service
  })
