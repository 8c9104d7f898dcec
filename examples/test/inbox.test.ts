/**
 * `pnpm inbox` (examples/inbox.ts) as a person meets it: a server on 127.0.0.1 whose page lists
 * one paused demo run, which can be approved and completes.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { offlineBanner } from "./run.js"

let child: ChildProcess | undefined
afterEach(() => {
  child?.kill("SIGTERM")
  child = undefined
})

/** Starts the example on a free port; resolves with the address it prints. */
const start = () =>
  new Promise<{ url: string; output: () => string }>((resolve, reject) => {
    let output = ""
    child = spawn(process.execPath, ["--conditions=@agentfx/source", "--import", "tsx", "examples/inbox.ts"], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      env: { ...process.env, INBOX_PORT: "0", OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "", AGENTFX_BASE_URL: "", AGENTFX_MODEL: "" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const timer = setTimeout(() => reject(new Error(`no address printed within 30 s:\n${output}`)), 30_000)
    child.stdout!.on("data", (chunk) => {
      output += chunk
      const url = /^inbox: (http:\/\/127\.0\.0\.1:\d+\/inbox)$/m.exec(output)?.[1]
      if (url !== undefined) {
        clearTimeout(timer)
        resolve({ url, output: () => output })
      }
    })
    child.stderr!.on("data", (chunk) => (output += chunk))
    child.on("exit", (code) => reject(new Error(`exited with ${code}:\n${output}`)))
  })

describe("examples/inbox.ts (pnpm inbox)", () => {
  it("serves the page with one paused demo run; approved, it completes", async () => {
    const { output, url } = await start()
    expect(output()).toContain(offlineBanner)
    expect(output()).toMatch(/^a demo run is waiting for approval: \S+$/m)
    const page = await fetch(url)
    expect([page.status, (await page.text()).includes("<title>agentfx inbox</title>")]).toEqual([200, true])
    const runs = await (await fetch(`${url}/api/runs`)).json()
    expect(runs.map((r: any) => [r.agent, r.conversationId, r.reason, r.pending])).toEqual([
      ["payments", "demo-1", "approval", [{ callId: "call_1", toolName: "transfer", args: { to: "Ada Lovelace", amount: 250, memo: "Invoice 7" } }]]
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
})
