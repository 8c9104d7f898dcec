import { describe, expect, it } from "vitest"
import { run } from "./run.js"

describe("examples/cluster.ts", () => {
  it("two runners and a client on PostgreSQL: the runner holding the run is killed mid-call, the other finishes the run", async () => {
    const { raw } = await run("cluster.ts", "", {}, 150_000)
    const text = raw.trimEnd().split("\n").map((line) => line.replace(/^\[\s*\d+ ms\] /, ""))
    const killed = text.findIndex((line) => /^killing runner [AB] \(pid \d+\) with SIGKILL, mid-call$/.test(line))
    expect(killed).toBeGreaterThan(-1)
    const victim = /^killing (runner [AB]) \(pid (\d+)\)/.exec(text[killed]!)!
    const survivor = victim[1] === "runner A" ? "runner B" : "runner A"
    const compiled = text.filter((line) => line.endsWith("compiling the Q3 report (3 s)"))
    expect(compiled.map((line) => line.split(" (pid")[0])).toEqual([victim[1], survivor])
    const over = text.find((line) => line.startsWith(`${survivor} (pid`) && line.includes("took the run over"))
    const after = Number(/over (\d+) ms after the kill/.exec(over ?? "")?.[1])
    expect(after).toBeGreaterThan(0)
    expect(after).toBeLessThan(20_000)
    const survivorPid = /^runner [AB] \(pid (\d+)\)/.exec(over!)![1]
    expect(text.at(-1)).toBe(`run completed: Done: "report Q3 compiled by runner ${survivorPid}"`)
    expect(survivorPid).not.toBe(victim[2])
  }, 180_000)
})
