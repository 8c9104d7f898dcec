import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

describe("examples/observability.ts", () => {
  it("prints every event, the middleware's view of each call, and the spans with their GenAI attributes through OpenTelemetry", () => {
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
    // the GenAI attributes as the console exporter prints them (docs/observability.md shows this trace):
    // stop_sequences (set when the span starts) and finish_reasons (when it ends) reach OpenTelemetry as string arrays, not JSON text
    const genAi = [...output.matchAll(/^\s+'(gen_ai\.[a-z_.]+)': (.*?),?$/gm)].map((m) =>
      `${m[1]}: ${m[2]!.replace(/ephemeral-[0-9a-f-]+/, "ephemeral-<run id>")}`
    )
    expect(genAi).toEqual([
      "gen_ai.operation.name: 'chat'",
      "gen_ai.request.temperature: 0.2",
      "gen_ai.request.max_tokens: 500",
      "gen_ai.request.stop_sequences: [ 'END' ]",
      "gen_ai.request.model: 'scripted'",
      "gen_ai.response.finish_reasons: [ 'tool-calls' ]",
      "gen_ai.usage.input_tokens: 182",
      "gen_ai.usage.output_tokens: 41",
      "gen_ai.operation.name: 'execute_tool'",
      "gen_ai.tool.name: 'get_weather'",
      "gen_ai.tool.call.id: 'call_1'",
      "gen_ai.operation.name: 'execute_tool'",
      "gen_ai.tool.name: 'forecast'",
      "gen_ai.tool.call.id: 'call_2'",
      "gen_ai.operation.name: 'chat'",
      "gen_ai.request.temperature: 0.2",
      "gen_ai.request.max_tokens: 500",
      "gen_ai.request.stop_sequences: [ 'END' ]",
      "gen_ai.request.model: 'scripted'",
      "gen_ai.response.finish_reasons: [ 'stop' ]",
      "gen_ai.usage.input_tokens: 260",
      "gen_ai.usage.output_tokens: 12",
      "gen_ai.operation.name: 'invoke_agent'",
      "gen_ai.agent.name: 'weather'",
      "gen_ai.conversation.id: 'ephemeral-<run id>'"
    ])
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
