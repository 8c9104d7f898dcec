import { describe, expect, it } from "vitest"
import { expectInOrder, jsonServer, offlineBanner, run } from "./run.js"

describe("examples/reasoning.ts", () => {
  it("offline: the thinking is kept in the paused run's checkpoint and comes back to the model after the resume", async () => {
    const { lines } = await run("reasoning.ts")
    expectInOrder(lines, [
      offlineBanner,
      "  model thinks: The order arrived broken: a full refund of 40 is fair.",
      `  model asks: refund({"order":"A-17","amount":40}) [call_1]`,
      "paused (approval):",
      "  the checkpoint (format 3) keeps 1 reasoning block(s) of anthropic:https://api.anthropic.com",
      "  result call_1 refund: refunded 40 for A-17",
      "answer: Refunded. (My reasoning came back with the tool result: 1 block, signed EuYBCkQYAiJAgCs1le6.)"
    ])
  }, 60_000)

  it("on Anthropic's Messages API (ANTHROPIC_BASE_URL): thinking is asked for; the signed block goes back first in its turn after the approval", async () => {
    const thinking = { type: "thinking", thinking: "A broken order: refund it.", signature: "EqQBCgIYAhIM" }
    const server = await jsonServer((_body, index) => ({
      id: `msg_${index}`,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: index === 0
        ? [thinking, { type: "tool_use", id: "toolu_1", name: "refund", input: { order: "A-17", amount: 40 } }]
        : [{ type: "text", text: "Refunded." }],
      stop_reason: index === 0 ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 20 }
    }))
    try {
      const { lines } = await run("reasoning.ts", "", { ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: server.url })
      expectInOrder(lines, ["  model thinks: A broken order: refund it.", "paused (approval):", "answer: Refunded."])
      expect(server.bodies.map((body) => body.thinking)).toEqual([{ type: "enabled", budget_tokens: 1024 }, { type: "enabled", budget_tokens: 1024 }])
      expect(server.bodies[1].messages[1].content).toEqual([thinking, { type: "tool_use", id: "toolu_1", name: "refund", input: { order: "A-17", amount: 40 } }])
    } finally {
      server.close()
    }
  }, 60_000)
})
