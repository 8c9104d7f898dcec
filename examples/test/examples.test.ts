import { describe, expect, it } from "vitest"
import { expectInOrder, jsonServer, run, runExample } from "./run.js"

describe("examples", () => {
  it("approval.ts without a terminal says so and exits 1 (see terminal.test.ts for the prompts)", async () => {
    const { raw, status, stderr } = await runExample("approval.ts")
    expect(status).toBe(1)
    // NodeRuntime.runMain's report (Effect's pretty logger writes to stdout)
    expect(raw).toMatch(/^\[[\d:.]+\] ERROR \(#\d+\): Error: approval\.ts asks its questions in a terminal: run it in one\n$/)
    expect(stderr).toBe("")
  }, 60_000)

  it("bounded.ts: five slow searches, never more than two at once, results in call order", async () => {
    const { lines } = await run("bounded.ts")
    const started = lines.filter((l) => / started \(\d running\)$/.test(l))
    expect(started.map((l) => /\[(call_\d)\]/.exec(l)?.[1])).toEqual(["call_1", "call_2", "call_3", "call_4", "call_5"])
    expect(started.every((l) => / \([12] running\)$/.test(l))).toBe(true)
    expectInOrder(lines, [
      `  result call_1 search_docs: ["timeouts: guide","timeouts: reference"]`,
      `  result call_5 search_docs: ["memory: guide","memory: reference"]`,
      "answer: Found 5 of 5 topics: timeouts, retries, approval, checkpoints, memory.",
      "at most 2 searches ran at once; the turn took N ms"
    ])
  }, 60_000)

  it("hanging-http.ts: the timeout aborts the request and the service sees the connection close", async () => {
    const { lines } = await run("hanging-http.ts")
    expectInOrder(lines, [
      "  tool check_status [call_1] started",
      "  service: got GET /status/billing; not answering",
      "  tool check_status [call_1] interrupted after N ms",
      `  result call_1 check_status: ERROR transient error: Tool "check_status" timed out after 300ms`,
      `answer: I could not check billing: transient error: Tool "check_status" timed out after 300ms.`
    ])
    expect(lines).toContain("  service: the client closed the connection after N ms")
  }, 60_000)

  it("environment.ts: an environment error pauses the run; after the fix, retry re-runs the failed call", async () => {
    const { lines } = await run("environment.ts")
    expectInOrder(lines, [
      "paused (environment):",
      `  call_1 save_report({"name":"q3.txt","text":"Revenue up 12%."}) failed: the reports directory does not exist; an operator must create it`,
      "operator: creating reports/ and retrying the failed call",
      "  tool save_report [call_1] finished after N ms",
      "answer: Report: saved q3.txt (15 bytes).",
      "on disk: q3.txt"
    ])
    expect(lines.filter((l) => l.startsWith("model call #"))).toEqual(["model call #1 (1 message, 1 tool)", "model call #2 (3 messages, 1 tool)"])
  }, 60_000)

  it("timeouts.ts shows what a timeout stops and what it does not (outcomes asserted, not times)", async () => {
    const { raw } = await run("timeouts.ts")
    const outcomes = raw.split("\n").filter((line) => line.length > 0).map((line) =>
      line.replace(/-?\d+(\.\d+)?/g, "N").replace(/\s+/g, " ").trim()
    )
    expect(outcomes).toEqual([
      "fetch with AbortSignal, timeout N ms (N runs), after the deadline:",
      "ToolTimeout returned min N / pN N / max N ms",
      "server saw close min N / pN N / max N ms",
      `synchronous N ms busy loop, timeout N ms: succeeded ("finished") at N ms`,
      "N ms slices + Effect.yieldNow, timeout N ms: timed out at N ms",
      "N ms slices + Tool.yieldToEventLoop, timeout N ms: timed out at N ms",
      "timeout N ms, finalizer N ms: ToolTimeout returned at N ms"
    ])
  }, 60_000)

  it("managers.ts runs a batch under each manager: partial results, in call order", async () => {
    const { raw } = await run("managers.ts")
    const sections = raw.split("\n\n").filter((s) => s.trim().length > 0)
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

describe("examples on a real wire format", () => {
  it("demo.ts talks to the Chat Completions server named by AGENTFX_BASE_URL + AGENTFX_MODEL", async () => {
    const server = await jsonServer((_body, index) => ({
      id: "c",
      object: "chat.completion",
      created: 1,
      model: "llama3.2",
      choices: [{
        index: 0,
        finish_reason: "stop",
        message: index === 0
          ? { role: "assistant", content: null, tool_calls: [{ id: "call_9", type: "function", function: { name: "get_weather", arguments: `{"city":"Lima"}` } }] }
          : { role: "assistant", content: "Lima is foggy, 16°C." }
      }]
    }))
    const baseUrl = `${server.url}/v1`
    try {
      const { lines } = await run("demo.ts", "", { AGENTFX_BASE_URL: baseUrl, AGENTFX_MODEL: "llama3.2" })
      expectInOrder(lines, [
        `model: Chat Completions at ${baseUrl} (llama3.2)`,
        `  model asks: get_weather({"city":"Lima"}) [call_9]`,
        `  result call_9 get_weather: {"city":"Lima","sky":"foggy","celsius":16}`,
        "answer: Lima is foggy, 16°C."
      ])
      expect(server.bodies.map((b) => b.model)).toEqual(["llama3.2", "llama3.2"])
      expect(server.bodies[0].tools.map((t: any) => t.function.name)).toEqual(["get_weather", "get_forecast", "send_email"])
    } finally {
      server.close()
    }
  }, 60_000)
})
