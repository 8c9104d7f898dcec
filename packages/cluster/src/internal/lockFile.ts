/**
 * One runner per SQLite file: a lock database beside it (`<file>.runner.lock`) that the runner
 * holds with SQLite's own exclusive lock (`locking_mode = EXCLUSIVE` and a write) for the
 * Layer's scope. The operating system holds that lock for the connection, so it ends with the
 * process however the process ends (a SIGKILL, a power loss): nothing stale to take over, no
 * pid to trust. Another connection — another process, or another Layer in this one — is
 * refused at once. The holder's pid is noted beside it (`<file>.runner.pid`) for the error's
 * message only. (Two runners on one file both take every shard: they ran the same call twice
 * when measured.)
 */
import { RunStore } from "@agentfx/core"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqliteClient } from "@effect/sql-sqlite-node"
import type { Scope } from "effect"
import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { readFileSync, writeFileSync } from "node:fs"
import { RunnerLocked } from "../ClusterError.js"

/** The pid noted by the lock's holder; 0 when none can be read. */
const notedPid = (path: string): number => {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : 0
  } catch {
    return 0
  }
}

/** Whether a failed statement failed because another connection holds the lock (SQLITE_BUSY, SQLITE_LOCKED). */
const busy = (error: SqlError): boolean => error.reason._tag === "LockTimeoutError"

/** What SQLite said, after the client's summary of it. */
const describe = (error: SqlError): string => {
  const cause = error.reason.cause
  return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message
}

/**
 * Holds the runner lock of `database` for the scope, or fails with `RunnerLocked` naming the
 * process that holds it — or with a `StoreError` when the lock cannot be taken for another
 * reason (a directory that does not exist or cannot be written), never mistaken for a runner.
 */
export const acquire = Effect.fnUntraced(function*(database: string): Effect.fn.Return<void, RunnerLocked | RunStore.StoreError, Scope.Scope> {
  const lockFile = `${database}.runner.lock`
  const pidFile = `${database}.runner.pid`
  const sql = yield* SqliteClient.make({ filename: lockFile, disableWAL: true, busyTimeout: 0 }).pipe(
    Effect.provide(Reactivity.layer),
    Effect.mapError((error) => new RunStore.StoreError({ message: `Cannot open the runner lock ${lockFile}: ${describe(error)}` }))
  )
  yield* Effect.gen(function*() {
    yield* sql.unsafe("PRAGMA locking_mode = EXCLUSIVE")
    // the first write takes the exclusive lock, kept until the connection closes
    yield* sql.unsafe("CREATE TABLE IF NOT EXISTS runner (pid INTEGER NOT NULL)")
    yield* sql.unsafe("DELETE FROM runner")
    yield* sql.unsafe("INSERT INTO runner (pid) VALUES (?)", [process.pid])
  }).pipe(Effect.catch((error): Effect.Effect<never, RunnerLocked | RunStore.StoreError> =>
    busy(error)
      ? Effect.fail(new RunnerLocked({ filename: database, lockFile, pid: notedPid(pidFile) }))
      : Effect.fail(new RunStore.StoreError({ message: `Cannot take the runner lock ${lockFile}: ${describe(error)}` }))
  ))
  // the holder's pid, for another runner's error message only: a failed note changes nothing
  yield* Effect.ignore(Effect.try(() => writeFileSync(pidFile, `${process.pid}\n`)))
})
