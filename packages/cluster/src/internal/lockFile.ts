/**
 * One runner per SQLite file: an exclusive lock file beside the database, holding the pid of
 * the process that runs it. A lock whose process is gone (it crashed) is taken over; a lock of
 * a live process — this one included — refuses the runner. (Two runners on one file both take
 * every shard: they ran the same call twice when measured.)
 */
import { Effect } from "effect"
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs"
import { RunnerLocked } from "../ClusterError.js"

/** Whether process `pid` is alive (a process we may not signal is alive too). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const holderOf = (path: string): number | undefined => {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/** Creates the lock file with this pid; `false` when it exists. */
const create = (path: string): boolean => {
  try {
    const fd = openSync(path, "wx")
    writeSync(fd, `${process.pid}\n`)
    closeSync(fd)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  }
}

/** Takes the lock file of `database` for the scope, or fails with `RunnerLocked` naming the process that holds it. */
export const acquire = (database: string): Effect.Effect<void, RunnerLocked, import("effect").Scope.Scope> => {
  const path = `${database}.runner.lock`
  return Effect.acquireRelease(
    Effect.suspend(() => {
      for (let attempt = 0; attempt < 2; attempt++) {
        if (create(path)) return Effect.void
        const pid = holderOf(path)
        if (pid !== undefined && alive(pid)) return Effect.fail(new RunnerLocked({ filename: database, lockFile: path, pid }))
        // its process is gone: a stale lock, taken over
        try {
          unlinkSync(path)
        } catch {
          // removed meanwhile by its other claimant: try again
        }
      }
      return Effect.fail(new RunnerLocked({ filename: database, lockFile: path, pid: holderOf(path) ?? -1 }))
    }),
    () =>
      Effect.sync(() => {
        if (holderOf(path) === process.pid) unlinkSync(path)
      })
  )
}
