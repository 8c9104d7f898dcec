import { describe, expect, it } from "vitest"
import { run } from "./run.js"

describe("examples/cluster.ts", () => {
  it("two runners and a client on PostgreSQL: the runner holding the run is killed mid-call, the other finishes the run; the client watches its events, a gap where the killed runner's were lost", async () => {
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
    // the watch: the first runner's events, the gap, the survivor's, none twice
    const watched = text.filter((line) => line.startsWith("watch: ")).map((line) => line.slice("watch: ".length).replace(/^gap: .*/, "gap"))
    expect(watched).toEqual([
      "RunStarted",
      "ModelCalled",
      "ModelResponded",
      "ToolStarted compile",
      "gap",
      "RunResumed",
      "ToolStarted compile",
      "ToolSucceeded",
      "ModelCalled",
      "ModelResponded",
      "RunCompleted"
    ])
    expect(text.find((line) => line.startsWith("watch: gap: "))).toMatch(/were lost with the runner that drove it/)
  }, 180_000)
})
