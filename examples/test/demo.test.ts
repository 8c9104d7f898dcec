import { describe, expect, it } from "vitest"
import { expectInOrder, offlineBanner, run } from "./run.js"

describe("pnpm demo (examples/demo.ts)", () => {
  it("shows the loop step by step: concurrent lookups, a forecast stopped by its timeout, an approval pause, the resume", async () => {
    const { lines, raw } = await run("demo.ts")
    expectInOrder(lines, [
      offlineBanner,
      "user: What's the weather in Oslo and Rome, and Oslo's forecast? Email a summary to ada@example.com.",
      "model call #1 (1 message, 3 tools)",
      `  model asks: get_weather({"city":"Oslo"}) [call_w1]`,
      `  model asks: get_weather({"city":"Rome"}) [call_w2]`,
      `  model asks: get_forecast({"city":"Oslo"}) [call_f1]`,
      "  (N ms, 240 tokens, finish: tool-calls)",
      "  tool get_weather [call_w1] started",
      "  tool get_weather [call_w2] started",
      "  tool get_forecast [call_f1] started",
      "  tool get_forecast [call_f1] interrupted after N ms",
      `  result call_w1 get_weather: {"city":"Oslo","sky":"sunny","celsius":21}`,
      `  result call_w2 get_weather: {"city":"Rome","sky":"cloudy","celsius":27}`,
      `  result call_f1 get_forecast: ERROR transient error: Tool "get_forecast" timed out after 500ms`,
      "model call #2 (5 messages, 3 tools)",
      "  model says: The forecast service timed out; I will send what I have.",
      `  model asks: send_email({"to":"ada@example.com","body":"Oslo: sunny, 21°C; Rome: cloudy, 27°C"}) [call_e1]`,
      "paused (approval):",
      `  call_e1 send_email({"to":"ada@example.com","body":"Oslo: sunny, 21°C; Rome: cloudy, 27°C"})`,
      "  checkpoint: N bytes of JSON, resumable in another process",
      "  the demo approves (examples/approval.ts asks you in the terminal)",
      "  tool send_email [call_e1] started",
      "  tool send_email [call_e1] finished after N ms",
      "  result call_e1 send_email: sent to ada@example.com",
      "model call #3 (7 messages, 3 tools)",
      "completed: 4 tool call(s), 1035 tokens",
      "answer: Done: sent to ada@example.com. Oslo is sunny (21°C), Rome cloudy (27°C); the forecast did not come in time."
    ])
    expect(lines.filter((l) => l.includes("finished after")).length).toBe(3)
    // the lookups ran concurrently: both started before either finished
    const at = (text: string) => lines.findIndex((l) => l.includes(text))
    expect(at("[call_w2] started")).toBeLessThan(at("[call_w1] finished"))
    // the forecast was stopped at its 500 ms deadline, not after the service's 2 s
    const stoppedAfter = Number(/get_forecast \[call_f1\] interrupted after (\d+) ms/.exec(raw)?.[1])
    expect(stoppedAfter).toBeGreaterThanOrEqual(495)
    expect(stoppedAfter).toBeLessThan(1500)
  }, 60_000)
})
