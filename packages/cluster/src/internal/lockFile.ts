/**
 * One runner per SQLite database file, whatever path names it. A runner holds two lock
 * databases for the Layer's scope, each with SQLite's own exclusive lock (`locking_mode =
 * EXCLUSIVE` and a write):
 *
 * - the file's name: `<real path>.runner.lock`, beside the database's real path (symbolic links,
 *   relative paths and `..` resolved), so every path that leads to one name agrees, and a file
 *   replaced on disk under a live runner (a new file with the old name) is still refused;
 * - the file itself: `.agentfx-<inode>.runner.lock`, in the directory of that real path, so that a
 *   second name of the same file in that directory (a hard link) is refused too.
 *
 * The operating system holds those locks for the connection, so they end with the process
 * however the process ends (a SIGKILL, a power loss): nothing stale to take over, no pid to
 * trust. Another connection — another process, or another Layer in this one — is refused at
 * once. The holder's pid is noted beside each lock (`.pid` for `.lock`) for the error's message
 * only. (Two runners on one file both take every shard: they ran the same call twice when
 * measured.) A database file that does not exist yet is created (empty, as SQLite would on its
 * first open) before the locks are taken, so that it has a real path and an inode to be locked
 * by. (`:memory:` and `""`, a connection's own database, take no lock.) Decision 082.
 */
import { RunStore } from "@agentfx/core"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqliteClient } from "@effect/sql-sqlite-node"
import type { Scope } from "effect"
import { Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { closeSync, openSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { RunnerLocked } from "../ClusterError.js"

/** The pid noted by a lock's holder; 0 when none can be read. */
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

/** The locks of a database file: the one of its real path, the one of its inode (in the same directory). */
export interface Locks {
  /** `<real path>.runner.lock`. */
  readonly name: string
  /** `<real directory>/.agentfx-<inode>.runner.lock`. */
  readonly file: string
}

/**
 * The locks of `database`, created first (empty) when it does not exist, as SQLite creates it
 * on its first open (a dangling symbolic link creates its target, as SQLite's open would).
 */
export const locksOf = (database: string): Effect.Effect<Locks, RunStore.StoreError> =>
  Effect.try({
    try: () => {
      closeSync(openSync(database, "a", 0o644))
      const real = realpathSync(database)
      const { ino } = statSync(real, { bigint: true })
      return { name: `${real}.runner.lock`, file: join(dirname(real), `.agentfx-${ino}.runner.lock`) }
    },
    catch: (error) =>
      new RunStore.StoreError({
        message: `Cannot open the runner lock ${database}.runner.lock: cannot open the database file ${database}: ${error instanceof Error ? error.message : String(error)}`
      })
  })

/** The pid file beside a lock (`x.runner.lock` → `x.runner.pid`). */
const pidFileOf = (lockFile: string) => join(dirname(lockFile), `${basename(lockFile, ".lock")}.pid`)

/**
 * Holds `lockFile` for the scope, or fails with `RunnerLocked` naming `database` and the
 * process that holds it — or with a `StoreError` when the lock cannot be taken for another
 * reason (a directory that cannot be written), never mistaken for a runner.
 */
const hold = Effect.fnUntraced(function*(database: string, lockFile: string): Effect.fn.Return<void, RunnerLocked | RunStore.StoreError, Scope.Scope> {
  const pidFile = pidFileOf(lockFile)
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

/**
 * Holds the runner locks of `database` for the scope (its name's, then its file's), or fails
 * with `RunnerLocked` naming the process that holds one — or with a `StoreError` when a lock
 * cannot be taken for another reason (a directory that does not exist or cannot be written),
 * never mistaken for a runner.
 */
export const acquire = Effect.fnUntraced(function*(database: string): Effect.fn.Return<void, RunnerLocked | RunStore.StoreError, Scope.Scope> {
  // SQLite's in-memory and temporary databases belong to their connection: no other process opens them
  if (database === ":memory:" || database === "") return
  const locks = yield* locksOf(database)
  yield* hold(database, locks.name)
  yield* hold(database, locks.file)
})
