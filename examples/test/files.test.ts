import { describe, expect, it } from "vitest"
import { anthropicMessage } from "../../packages/ai/test/formats.js"
import { expectInOrder, jsonServer, offlineBanner, run } from "./run.js"

describe("examples/files.ts", () => {
  it("offline: the person's image and document reach the model; the tool's chart comes with its result; a file over the limit is refused", async () => {
    const { lines } = await run("files.ts")
    expectInOrder(lines, [
      offlineBanner,
      "user: Does this photo match our sales report?",
      `  with file "whiteboard.png" (image/png, 70 bytes)`,
      `  with file "report.pdf" (application/pdf, https://example.com/q3-report.pdf)`,
      "  model says: I was sent: whiteboard.png; report.pdf.",
      `  result call_1 sales_chart: the sales chart of Q3 + file "sales-Q3.png" (image/png, 70 bytes)`,
      "answer: Now I also have sales-Q3.png: the photo matches the chart's trend.",
      "A photo larger than the agent's limits.fileBytes (1000000):",
      "  InvalidRunInput: Invalid run input: input part 1 (image/*) is 2000000 bytes inline, more than the 1000000 allowed (limits.fileBytes)"
    ])
  }, 60_000)

  it("on Anthropic's Messages API (ANTHROPIC_BASE_URL): an image and a document block, then the chart inside the tool_result", async () => {
    const server = await jsonServer((_body, index) =>
      index === 0
        ? anthropicMessage([{ type: "tool_use", id: "toolu_1", name: "sales_chart", input: { quarter: "Q3" } }], "tool_use", 120, 30)
        : anthropicMessage([{ type: "text", text: "They match." }], "end_turn", 120, 30)
    )
    try {
      const { lines } = await run("files.ts", "", { ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: server.url })
      expectInOrder(lines, ["model: Anthropic Messages API (claude-sonnet-4-5)", "answer: They match."])
      expect(server.bodies[0].messages[0].content.map((block: any) => [block.type, block.source?.type])).toEqual([
        ["text", undefined],
        ["image", "base64"],
        ["document", "url"]
      ])
      expect(server.bodies[1].messages[2].content[0].content.map((block: any) => block.type)).toEqual(["text", "image"])
    } finally {
      server.close()
    }
  }, 60_000)
})
