import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

describe("examples/pause-resume.ts", () => {
  it("pauses in one process and completes in another, after a refused decision", () => {
    const output = execFileSync("pnpm", ["-s", "tsx", "examples/pause-resume.ts"], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      encoding: "utf8",
      timeout: 60_000
    })
    const lines = output.trim().split("\n")
    const pid = (line: string) => /^\[process (\d+)\]/.exec(line)?.[1]
    expect(lines.map((line) => line.replace(/^\[process \d+\] /, ""))).toEqual([
      `paused for approval; pending: pay_invoice {"number":"INV-7","amount":1200}`,
      expect.stringMatching(/^checkpoint written to a file \(\d+ bytes\); resuming in a new process$/),
      "refused: Decisions for calls that are not pending: call_lookup (pending: call_pay)",
      "  [pay_invoice] paying 1000 for invoice INV-7",
      `completed: Done: lookup_invoice → {"number":"INV-7","amount":1200,"payee":"ACME"}; pay_invoice → "paid 1000 for INV-7"`,
      "tool calls: lookup_invoice=Succeeded, pay_invoice=Succeeded"
    ])
    expect(pid(lines[0]!)).not.toBe(pid(lines[2]!))
  }, 60_000)
})
