import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

describe("examples/resume-elsewhere.ts", () => {
  it("pauses in one process and resumes by run id in another on SQLite: the transfer runs once, every other resume is refused", () => {
    const output = execFileSync("pnpm", ["-s", "tsx", "examples/resume-elsewhere.ts"], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      encoding: "utf8",
      timeout: 60_000
    })
    const lines = output.trim().split("\n")
    const runId = /^\[process \d+\] run (\S+) is recorded/.exec(lines[1]!)?.[1]
    expect(runId).toMatch(/^[0-9a-f-]{36}-0$/)
    const pids = lines.map((line) => /^\[process (\d+)\]/.exec(line)?.[1])
    expect(pids).toEqual([pids[0], pids[0], pids[2], pids[2], pids[2], pids[2], pids[0], pids[0]])
    expect(pids[2]).not.toBe(pids[0])
    expect(lines.map((line) => line.replace(/^\[process \d+\] /, "").replaceAll(runId!, "<id>"))).toEqual([
      `paused for approval: transfer {"to":"NO93 8601 1117 947","amount":250}`,
      "run <id> is recorded in the store; resuming it in a new process (only its id is passed)",
      "paused runs in the store: <id> (payments, conversation rent)",
      "  [transfer] sending 250 to NO93 8601 1117 947",
      `completed: Done: "sent 250 to NO93 8601 1117 947"`,
      "resumed again? RunAlreadyResumed",
      "resumed here too? RunAlreadyResumed: Run <id> was already decided by ada@example.com: it is completed now",
      `conversation "rent" in the store: User, Assistant, ToolResult, Assistant`
    ])
  }, 60_000)
})
