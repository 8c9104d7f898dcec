import { describe, expect, it } from "vitest"
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const run = (script: string) =>
  execFileSync("pnpm", ["-s", "tsx", `examples/${script}`], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    encoding: "utf8",
    timeout: 60_000
  })

describe("examples", () => {
  it("demo.ts runs a batch under each manager: partial results, in call order", () => {
    const output = run("demo.ts")
    const sections = output.split("\n\n").filter((s) => s.trim().length > 0)
    expect(sections.map((s) => s.trim().split(" — ")[0])).toEqual(["sequential", "unbounded", "bounded, 2 permits"])
    for (const section of sections) {
      const lines = section.trim().split("\n").slice(1).map((l) => l.trim().replace(/\s+/g, " "))
      expect(lines).toEqual([
        `call_1 lookup "effect: a thing"`,
        `call_2 search ["timeouts guide","timeouts reference"]`,
        `call_3 hang ToolTimeout (transient): Tool "hang" timed out after 300ms`,
        `call_4 lookup "fiber: a thing"`
      ])
    }
  }, 60_000)
})
