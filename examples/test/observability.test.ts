import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

describe("examples/observability.ts", () => {
  it("prints every event, the middleware's view of each call, and the spans through OpenTelemetry", () => {
    const output = execFileSync("pnpm", ["-s", "tsx", "examples/observability.ts"], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      encoding: "utf8",
      timeout: 60_000
    })
    const lines = (prefix: string) =>
      output.split("\n").filter((line) => line.startsWith(prefix)).map((line) => line.replace(/\(\d+ ms\)/, "(N ms)"))
    // the observer prints from its own fiber: its lines are ordered among themselves
    expect(lines("[event]")).toEqual([
      "[event] RunStarted",
      "[event] ModelCalled",
      "[event] ModelResponded",
      `[event] ToolStarted get_weather {"city":"Oslo"}`,
      "[event] ToolSucceeded",
      `[event] ToolStarted forecast {"city":"Oslo"}`,
      "[event] ToolTimedOut",
      "[event] ModelCalled",
      `[event] TextDelta "Sunny in Oslo today; "`,
      `[event] TextDelta "the forecast service timed out."`,
      "[event] ModelResponded",
      "[event] RunCompleted: Sunny in Oslo today; the forecast service timed out."
    ])
    expect(lines("[middleware]")).toEqual([
      "[middleware] get_weather → Succeeded (N ms)",
      `[middleware] forecast → ToolTimeout: Tool "forecast" timed out after 100ms (N ms)`
    ])
    expect(lines("[run]")).toEqual(["[run] Completed"])
    const spans = [...output.matchAll(/name: '(agentfx\.[a-z]+)'/g)].map((m) => m[1])
    expect(spans).toEqual([
      "agentfx.model",
      "agentfx.tool",
      "agentfx.tool",
      "agentfx.iteration",
      "agentfx.model",
      "agentfx.iteration",
      "agentfx.run"
    ])
  }, 60_000)
})
