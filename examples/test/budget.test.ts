import { describe, expect, it } from "vitest"
import { expectInOrder, offlineBanner, run } from "./run.js"

describe("examples/budget.ts", () => {
  it("the token budget stops the run before the batch of the model call that crossed it; raised, the batch runs and the run completes; a run's own tool-call budget wins", async () => {
    const { lines } = await run("budget.ts")
    expectInOrder(lines, [
      offlineBanner,
      "user: What do agent budgets need? (agent budget: 1500 tokens)",
      `  model asks: search_papers({"query":"retry storms"}) [call_3_0]`,
      "  (N ms, 700 tokens, finish: tool-calls)",
      "stopped: Budget reached: tokens 2080 of 1500; resume the checkpoint with Decision.continue({ raise }) to go on",
      `waiting in the checkpoint: search_papers({"query":"retry storms"}) [call_3_0]`,
      "a person raises the token budget to 4000 and continues the run",
      `  result call_3_0 search_papers: ["A survey of retry storms","retry storms: lessons from production"]`,
      "model call #5 (9 messages, 1 tool)",
      "completed: 4 tool call(s), 2950 tokens",
      "answer: Read 4 searches: budgets need token, call and tool limits.",
      "user: What do agent budgets need? (this run's budget: 2 tool calls)",
      "stopped: Budget reached: toolCalls 2 of 2; resume the checkpoint with Decision.continue({ raise }) to go on"
    ])
    // 5 model calls for the first run; 3 for the second (its third asks for a batch past the tool-call budget)
    expect(lines.filter((line) => line.startsWith("model call #"))).toHaveLength(8)
  }, 60_000)
})
