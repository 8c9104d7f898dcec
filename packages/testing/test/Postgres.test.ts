/**
 * startPostgres runs a real PostgreSQL server and stop leaves nothing of it; setupPostgres
 * (a project's global setup) takes AGENTFX_PG_URL's server when it is set and starts nothing.
 */
import * as Reactivity from "effect/reactivity/Reactivity"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { connect } from "node:net"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"
import { afterEach, describe, expect, it } from "vitest"
import { startPostgres } from "../src/Postgres.js"
import { setupPostgres } from "../src/PostgresSetup.js"
import { postgresUrl } from "../src/PostgresUrl.js"

/** The server's answer to `SELECT version()`. */
const version = (url: string) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* PgClient.make({ url: Redacted.make(url) })
      return (yield* sql<{ readonly version: string }>`SELECT version()`)[0]!.version
    }).pipe(Effect.scoped, Effect.provide(Reactivity.layer))
  )

/**
 * The data directories of the servers on `port`, from their processes' command lines (a backend
 * just forked still shows its server's: one directory per server).
 */
const serversOn = (port: number) => [
  ...new Set(
    spawnSync("ps", ["-eo", "args="], { encoding: "utf8" }).stdout.split("\n")
      .flatMap((line) => line.match(new RegExp(`postgres -D (\\S+) -p ${port}( |$)`))?.[1] ?? [])
  )
]

/** The servers still on `port` once their processes are gone, or after 10 s (what is left then). */
const gone = async (port: number) => {
  const deadline = Date.now() + 10_000
  while (serversOn(port).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
  return serversOn(port)
}

const refuses = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => (socket.destroy(), resolve(false)))
    socket.once("error", () => resolve(true))
  })

/** A stand-in for vitest's project: what it was given. */
const project = () => {
  const provided: Record<string, unknown> = {}
  const value = { name: "a-project", provide: (key: string, v: unknown) => void (provided[key] = v) }
  return { project: value as unknown as TestProject, provided }
}

const saved = process.env.AGENTFX_PG_URL
afterEach(() => {
  if (saved === undefined) delete process.env.AGENTFX_PG_URL
  else process.env.AGENTFX_PG_URL = saved
})

describe("startPostgres", () => {
  it("a real PostgreSQL 17 on 127.0.0.1; stop ends its process and removes its data directory", async () => {
    const server = await startPostgres()
    const port = Number(new URL(server.url).port)
    try {
      expect(server.url).toBe(`postgres://postgres@127.0.0.1:${port}/postgres`)
      expect(await version(server.url)).toMatch(/^PostgreSQL 17\./)
      const [dir, ...others] = serversOn(port)
      expect([existsSync(dir!), others]).toEqual([true, []])
      await server.stop()
      expect([await gone(port), existsSync(dir!), await refuses(port)]).toEqual([[], false, true])
    } finally {
      await server.stop()
    }
  }, 60_000)

  /** Runs `code` (after `startPostgres` is imported) in a new node process: its exit code, its stdout and stderr. */
  const run = (code: string) =>
    new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
      const module = fileURLToPath(new URL("../src/Postgres.ts", import.meta.url))
      const script = `import { startPostgres } from ${JSON.stringify(module)}\n${code}`
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString("utf8")))
      child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString("utf8")))
      child.on("close", (code) => resolve({ code, stdout, stderr }))
    })

  it("a process that ran a server ends with the exit code it set, and nothing is reported (as vitest's main process)", async () => {
    const result = await run(`
      // as vitest does: an unhandled rejection is reported and fails the run
      process.on("unhandledRejection", (error) => { console.error("unhandled:", error); process.exitCode = 1 })
      const server = await startPostgres()
      await server.stop()
      process.exitCode = 3 // then the event loop drains, as vitest's does
    `)
    expect(result).toEqual({ code: 3, stdout: "", stderr: "" })
  }, 60_000)

  it("a process that exits with its server running (process.exit) tells the server to shut down, first of its exit listeners", async () => {
    const result = await run(`
      // as vitest does on a signal: an exit listener that calls process.exit() again, which ends
      // the process at once — the listeners after it do not run
      process.once("exit", () => process.exit())
      const server = await startPostgres()
      console.log(server.url)
      process.exit(0)
    `)
    const port = Number(new URL(result.stdout.trim()).port)
    expect([result.code, await gone(port), await refuses(port)]).toEqual([0, [], true])
  }, 60_000)
})

describe("setupPostgres", () => {
  it("with AGENTFX_PG_URL set: that URL is provided, no server is started", async () => {
    process.env.AGENTFX_PG_URL = "postgres://someone@127.0.0.1:1/elsewhere"
    const { project: p, provided } = project()
    const teardown = await setupPostgres(p)
    expect(provided).toEqual({ agentfxPostgresUrl: "postgres://someone@127.0.0.1:1/elsewhere" })
    await teardown()
  })

  it("without it: an embedded server's URL is provided, and the teardown stops that server", async () => {
    delete process.env.AGENTFX_PG_URL
    const { project: p, provided } = project()
    const teardown = await setupPostgres(p)
    try {
      const port = Number(new URL(String(provided.agentfxPostgresUrl)).port)
      expect(await version(String(provided.agentfxPostgresUrl))).toMatch(/^PostgreSQL 17\./)
      await teardown()
      expect([await gone(port), await refuses(port)]).toEqual([[], true])
    } finally {
      await teardown()
    }
  }, 60_000)

  it("two projects naming it share one server, stopped when the second tears down", async () => {
    delete process.env.AGENTFX_PG_URL
    const [a, b] = [project(), project()]
    const [teardownA, teardownB] = await Promise.all([setupPostgres(a.project), setupPostgres(b.project)])
    try {
      const url = String(a.provided.agentfxPostgresUrl)
      const port = Number(new URL(url).port)
      expect([b.provided.agentfxPostgresUrl, serversOn(port).length]).toEqual([url, 1])
      await teardownA()
      await teardownA() // a second call counts nothing: b still uses the server
      expect(await version(url)).toMatch(/^PostgreSQL 17\./)
      await teardownB()
      expect([await gone(port), await refuses(port)]).toEqual([[], true])
    } finally {
      await teardownA()
      await teardownB()
    }
  }, 60_000)
})

describe("postgresUrl", () => {
  it("in a project without setupPostgres: throws, naming what to add", () => {
    expect(() => postgresUrl()).toThrow(
      "No PostgreSQL server for this test: its project's vitest.config.ts needs a globalSetup file that exports " +
        "setupPostgres from @agentfx/testing/PostgresSetup (as packages/sql/test/globalSetup.ts does)"
    )
  })
})
