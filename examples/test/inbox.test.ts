/**
 * `pnpm inbox` (examples/inbox.ts) as a person meets it: a server on 127.0.0.1 over a SQLite
 * file, whose address is logged as it starts, whose page lists a paused demo run, which can be
 * approved and completes; a paused run outlives a restart; a port that is taken is said in one
 * line naming INBOX_PORT.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { offlineBanner } from "./run.js"

const children: Array<ChildProcess> = []
const dirs: Array<string> = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGTERM")
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const freshDb = () => {
  const dir = mkdtempSync(join(tmpdir(), "agentfx-inbox-example-"))
  dirs.push(dir)
  return join(dir, "inbox.db")
}

/** The id of the demo run the example says is waiting. */
const waiting = (output: string) => /^a demo run is waiting for approval: (\S+)$/m.exec(output)?.[1]

/** Runs the example over `db`, on `port` (default: a free one). */
const spawnInbox = (db: string, port = "0") => {
  const child = spawn(process.execPath, ["--conditions=@agentfx/source", "--import", "tsx", "examples/inbox.ts"], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    env: { ...process.env, INBOX_PORT: port, INBOX_DB: db, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", AGENTFX_BASE_URL: "", AGENTFX_MODEL: "" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  return child
}

/** Starts the example on a free port over `db`; resolves with the address it logs (and what it printed once the demo run waits), and a way to stop it. */
const start = (db: string) =>
  new Promise<{ url: string; output: () => string; stop: () => Promise<void> }>((resolve, reject) => {
    let output = ""
    const child = spawnInbox(db)
    const exited = new Promise<void>((done) => child.on("exit", () => done()))
    const timer = setTimeout(() => reject(new Error(`no address printed within 30 s:\n${output}`)), 30_000)
    child.stdout!.on("data", (chunk) => {
      output += chunk
      const url = /INFO \(#\d+\): Inbox at (http:\/\/127\.0\.0\.1:\d+\/inbox)$/m.exec(output)?.[1]
      if (url !== undefined && waiting(output) !== undefined) {
        clearTimeout(timer)
        resolve({ url, output: () => output, stop: () => (child.kill("SIGTERM"), exited) })
      }
    })
    child.stderr!.on("data", (chunk) => (output += chunk))
    child.on("exit", (code) => reject(new Error(`exited with ${code}:\n${output}`)))
  })


describe("examples/inbox.ts (pnpm inbox)", () => {
  it("serves the page with one paused demo run; approved, it completes", async () => {
    const db = freshDb()
    const { output, url } = await start(db)
    expect(output()).toContain(offlineBanner)
    expect(output()).toContain(`store: ${db}`)
    // the address comes first, before the demo run (which may wait for a real model)
    expect(output().indexOf("Inbox at http://")).toBeLessThan(output().indexOf("a demo run is waiting"))
    const page = await fetch(url)
    expect([page.status, (await page.text()).includes("<title>agentfx inbox</title>")]).toEqual([200, true])
    const runs = await (await fetch(`${url}/api/runs`)).json()
    expect(runs.map((r: any) => [r.runId, r.agent, r.kind, r.pending])).toEqual([
      [waiting(output()), "payments", "approval", [{ callId: "call_1", toolName: "transfer", args: { to: "Ada Lovelace", amount: 250, memo: "Invoice 7" } }]]
    ])
    const decided = await fetch(`${url}/api/runs/${runs[0].runId}/decision`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-agentfx-reviewer": "Ada" },
      body: JSON.stringify({ _tag: "ByCall", decisions: { call_1: { _tag: "Approve", args: { to: "Ada Lovelace", amount: 200 } } } })
    })
    expect(decided.status).toBe(202)
    const events = await (await fetch(new URL((await decided.json()).events, url))).text()
    expect(events).toContain(`"_tag":"RunCompleted"`)
    expect(events).toContain(`Done: \\"sent €200 to Ada Lovelace\\"`)
    expect(await (await fetch(`${url}/api/runs`)).json()).toEqual([])
  }, 60_000)

  it("a paused run outlives a restart: the second start shows the same run, and pauses no other", async () => {
    const db = freshDb()
    const first = await start(db)
    const runId = waiting(first.output())
    expect(runId).toBeDefined()
    await first.stop()
    const second = await start(db)
    expect(waiting(second.output())).toBe(runId)
    const runs = await (await fetch(`${second.url}/api/runs`)).json()
    expect(runs.map((r: any) => r.runId)).toEqual([runId])
  }, 60_000)

  it("a port that is taken: one line naming INBOX_PORT, on stderr, and exit code 1", async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    try {
      const port = (taken.address() as AddressInfo).port
      const child = spawnInbox(freshDb(), String(port))
      let stdout = ""
      let stderr = ""
      child.stdout!.on("data", (chunk) => (stdout += chunk))
      child.stderr!.on("data", (chunk) => (stderr += chunk))
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve))
      expect([code, stderr]).toEqual([
        1,
        `Port ${port} of 127.0.0.1 is in use (another inbox?): set INBOX_PORT to another port, e.g. INBOX_PORT=${port + 1} pnpm inbox (INBOX_PORT=0 picks a free one)\n`
      ])
      expect(stdout).not.toContain("demo run")
    } finally {
      taken.close()
    }
  }, 60_000)
})
