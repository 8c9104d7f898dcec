/**
 * The schema of the store and the memory, applied with `effect/sql`'s Migrator (its own
 * table: `agentfx_migrations`). Times are milliseconds since the epoch, on the database's clock
 * (`clock.ts`; the first versions read them from the host's `Clock`);
 * JSON is kept as text on both dialects (the store never queries inside it; PostgreSQL's
 * jsonb would only reorder keys).
 */
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import { RunStore } from "@agentfx/core"
import { Effect, Schedule } from "effect"
import { codeOf, describe } from "./errors.js"

/** The Migrator's table, apart from an app's own migrations. */
export const migrationsTable = "agentfx_migrations"

const store = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const serial = sql.literal(sql.onDialectOrElse({ pg: () => "BIGSERIAL PRIMARY KEY", orElse: () => "INTEGER PRIMARY KEY" }))
  yield* sql`CREATE TABLE agentfx_runs (
    run_id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    ephemeral INTEGER NOT NULL,
    status TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    checkpoint TEXT,
    decided_by TEXT
  )`
  yield* sql`CREATE INDEX agentfx_runs_status ON agentfx_runs (status, updated_at)`
  yield* sql`CREATE INDEX agentfx_runs_conversation ON agentfx_runs (conversation_id, status)`
  yield* sql`CREATE TABLE agentfx_outcomes (
    seq ${serial},
    run_id TEXT NOT NULL,
    outcome TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX agentfx_outcomes_run ON agentfx_outcomes (run_id, seq)`
  // SQLite: a transition's UPDATE clears the run's outcomes in the same statement
  // (PostgreSQL does it in the UPDATE's own statement, a data-modifying WITH)
  yield* sql.onDialectOrElse({
    sqlite: () =>
      sql`CREATE TRIGGER agentfx_runs_transition AFTER UPDATE OF version ON agentfx_runs
        BEGIN DELETE FROM agentfx_outcomes WHERE run_id = NEW.run_id; END`,
    orElse: () => Effect.void
  })
  yield* sql`CREATE TABLE agentfx_leases (
    lease_key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    token TEXT NOT NULL,
    expires_at BIGINT NOT NULL
  )`
  yield* sql`CREATE TABLE agentfx_messages (
    seq ${serial},
    conversation_id TEXT NOT NULL,
    message TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX agentfx_messages_conversation ON agentfx_messages (conversation_id, seq)`
})

/** When a run's last decision claimed it (`RunRecord.decidedAt`); `NULL` in the rows of a database made before. */
const decidedAt = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ALTER TABLE agentfx_runs ADD COLUMN decided_at BIGINT`)

/**
 * The progress of a running batch: each call's start (`agentfx_started`), and the version of
 * the record each start and result was written at — a row of an older version is not read, so
 * that a writer that lost the run adds nothing to the batch of the one that took it over.
 */
const callProgress = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const serial = sql.literal(sql.onDialectOrElse({ pg: () => "BIGSERIAL PRIMARY KEY", orElse: () => "INTEGER PRIMARY KEY" }))
  yield* sql`ALTER TABLE agentfx_outcomes ADD COLUMN version INTEGER`
  // the results already recorded belong to their run's current version (a transition clears the others)
  yield* sql`UPDATE agentfx_outcomes SET version = (SELECT version FROM agentfx_runs WHERE agentfx_runs.run_id = agentfx_outcomes.run_id)`
  yield* sql`CREATE TABLE agentfx_started (
    seq ${serial},
    run_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    call_id TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX agentfx_started_run ON agentfx_started (run_id, seq)`
  yield* sql.onDialectOrElse({
    sqlite: () =>
      sql`CREATE TRIGGER agentfx_runs_transition_started AFTER UPDATE OF version ON agentfx_runs
        BEGIN DELETE FROM agentfx_started WHERE run_id = NEW.run_id; END`,
    orElse: () => Effect.void
  })
})

/**
 * A takeover (`RunStore.takeOver`) keeps the batch's rows, carried to the record's new version
 * before the record moves: SQLite's triggers now clear only the rows of older versions.
 */
const takeOver = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    sqlite: () =>
      Effect.forEach([
        { trigger: "agentfx_runs_transition", table: "agentfx_outcomes" },
        { trigger: "agentfx_runs_transition_started", table: "agentfx_started" }
      ], ({ table, trigger }) =>
        Effect.andThen(
          sql`DROP TRIGGER ${sql.literal(trigger)}`,
          sql`CREATE TRIGGER ${sql.literal(trigger)} AFTER UPDATE OF version ON agentfx_runs
            BEGIN DELETE FROM ${sql.literal(table)} WHERE run_id = NEW.run_id AND version < NEW.version; END`
        ), { discard: true }),
    orElse: () => Effect.void
  })
})

/** The id of the decision that last claimed a run (`RunRecord.decisionId`); `NULL` in the rows of a database made before. */
const decisionId = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ALTER TABLE agentfx_runs ADD COLUMN decision_id TEXT`)

/**
 * The steering inbox (decision 170): inputs steered into the turn holding their conversation,
 * pending until that turn takes them or their sender withdraws them.
 */
const steering = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const serial = sql.literal(sql.onDialectOrElse({ pg: () => "BIGSERIAL PRIMARY KEY", orElse: () => "INTEGER PRIMARY KEY" }))
  yield* sql`CREATE TABLE agentfx_steering (
    seq ${serial},
    steer_id TEXT NOT NULL UNIQUE,
    conversation_id TEXT NOT NULL,
    message TEXT NOT NULL,
    status TEXT NOT NULL,
    run_id TEXT,
    created_at BIGINT NOT NULL
  )`
  yield* sql`CREATE INDEX agentfx_steering_conversation ON agentfx_steering (conversation_id, status, seq)`
})

/** Every migration, in order; a database made by an earlier version runs those it lacks. */
export const migrations = {
  "1_agentfx_store": store,
  "2_agentfx_decided_at": decidedAt,
  "3_agentfx_call_progress": callProgress,
  "4_agentfx_take_over": takeOver,
  "5_agentfx_decision_id": decisionId,
  "6_agentfx_steering": steering
}

const loader = Migrator.fromRecord(migrations)

/**
 * Races of two processes migrating one new database at once: SQLite's busy and locked
 * answers (a migrating transaction holds the file's write lock from its `BEGIN IMMEDIATE`;
 * another waits up to the busy timeout for it), and PostgreSQL creating the Migrator's table
 * twice (unique violation, duplicate table, or duplicate object: the table's row type, 42710,
 * seen with four processes at once; the Migrator looks for its table again after such a
 * failure, and these are retried should it not be there yet). Retried; the Migrator's own lock
 * then serialises them.
 */
const concurrentMigration = new Set(["SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_LOCKED", "23505", "42P07", "42710"])

/** The id of the last migration: a schema is up to date once the Migrator's table records it. */
const latestMigration = Math.max(...Object.keys(migrations).map((name) => Number.parseInt(name, 10)))

/**
 * Another process's migration still under way: the Migrator's insert of what it runs met the
 * rows of another's (a conflict: a SQLite client whose transactions begin deferred) and it
 * returned as if nothing were to do, before the schema exists.
 */
class MigrationUnderWay extends Error {
  constructor(readonly recorded: number) {
    super(`another process is migrating the schema (migration ${recorded} of ${latestMigration} recorded so far)`)
  }
}

/** The last migration the Migrator's table records: 0 when it has none, or no table yet. */
const recordedMigration = (sql: SqlClient.SqlClient) =>
  sql<{ readonly id: number | null }>`SELECT max(migration_id) AS id FROM ${sql(migrationsTable)}`.pipe(
    Effect.map((rows) => Number(rows[0]?.id ?? 0)),
    Effect.orElseSucceed(() => 0)
  )

/**
 * The migrations that ran (none when the schema is up to date), or the database's refusal.
 * Once the Migrator returns, the schema must be up to date: a Migrator that found another
 * process migrating may return at once with nothing done (see {@link MigrationUnderWay}), and
 * is run again until that migration is committed — never a store on a schema that is not there.
 */
export const migrate: Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, RunStore.StoreError, SqlClient.SqlClient> = Effect
  .gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const dialect = sql.onDialect({ sqlite: () => "SQLite", pg: () => "PostgreSQL", mysql: () => "MySQL", mssql: () => "SQL Server", clickhouse: () => "ClickHouse" })
    if (dialect !== "SQLite" && dialect !== "PostgreSQL") {
      return yield* new RunStore.StoreError({ message: `@agentfx/sql runs on SQLite and PostgreSQL; this SqlClient speaks ${dialect}` })
    }
    return yield* Migrator.make({})({ loader, table: migrationsTable }).pipe(
      // a migration that dies is a defect of the Migrator's: a typed error here, as its failures are
      Effect.catchDefect(Effect.fail),
      Effect.flatMap((ran) =>
        Effect.flatMap(recordedMigration(sql), (recorded) => recorded >= latestMigration ? Effect.succeed(ran) : Effect.fail(new MigrationUnderWay(recorded)))
      ),
      Effect.retry({
        while: (error) => error instanceof MigrationUnderWay || concurrentMigration.has(codeOf(error) ?? ""),
        schedule: Schedule.spaced("100 millis"),
        times: 50
      }),
      Effect.mapError((error) => new RunStore.StoreError({ message: `Could not migrate the agentfx schema: ${describe(error)}` }))
    )
  })
