import { describe, expect, it } from "vitest"
import { envelope } from "../../packages/ai/test/recordings/responses.js"
import { expectInOrder, jsonServer, offlineBanner, run } from "./run.js"

const outfit = { city: "Oslo", celsius: 4, sky: "rain", wear: ["raincoat", "wool sweater", "boots"] }

/** The value's lines, as the example prints them. */
const valueLines = [
  "value, decoded with Outfit:",
  "  city: Oslo",
  "  celsius: 4 (a number)",
  "  sky: rain",
  "  wear: raincoat, wool sweater, boots"
]

describe("examples/structured-output.ts", () => {
  it("offline: a tool call, an answer that does not decode fed back with the problem, then Completed.value typed", async () => {
    const { lines } = await run("structured-output.ts")
    expectInOrder(lines, [
      offlineBanner,
      "user: What should I wear in Oslo today?",
      `asked for: final_answer {"type":"object","properties":{"city":{"type":"string"},"celsius":{"type":"number"},"sky":{"type":"string","enum":["sunny","cloudy","rain","snow"]},"wear":{"type":"array","items":{"type":"string"}}},"required":["city","celsius","sky","wear"],"additionalProperties":false}`,
      `  model asks: get_weather({"city":"Oslo"}) [call_1]`,
      `  result call_1 get_weather: {"city":"Oslo","celsius":4,"sky":"rain"}`,
      `  model says: {"city":"Oslo","celsius":"4","sky":"rain","wear":["raincoat"]}`,
      `fed back to the model: Your answer does not match the required output: celsius: Expected number, got "4". Answer again with only the JSON.`,
      "completed: 1 tool call(s), 0 tokens",
      `answer: ${JSON.stringify(outfit)}`,
      ...valueLines
    ])
  }, 60_000)

  it("on OpenAI's Responses API (OPENAI_BASE_URL): text.format json_schema, strict, with the tool; the JSON answer decoded", async () => {
    const message = (text: string) => ({ type: "message", id: "m1", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] })
    const server = await jsonServer((_body, index) =>
      envelope({
        status: "completed",
        output: index === 0
          ? [{ type: "function_call", call_id: "call_7", name: "get_weather", arguments: `{"city":"Oslo"}` }]
          : [message(JSON.stringify(outfit))]
      })
    )
    try {
      const { lines } = await run("structured-output.ts", "", { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `${server.url}/v1` })
      expectInOrder(lines, ["model: OpenAI Responses API (gpt-4.1-mini)", `answer: ${JSON.stringify(outfit)}`, ...valueLines])
      expect(server.bodies.map((body) => [body.text.format.type, body.text.format.name, body.text.format.strict, body.temperature])).toEqual([
        ["json_schema", "final_answer", true, 0],
        ["json_schema", "final_answer", true, 0]
      ])
      expect(server.bodies[0].tools.map((tool: { name: string }) => tool.name)).toEqual(["get_weather"])
    } finally {
      server.close()
    }
  }, 60_000)

  it("on Anthropic's Messages API (ANTHROPIC_BASE_URL): Claude's call of the final_answer tool is the value", async () => {
    const message = (content: ReadonlyArray<object>) => ({
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content,
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 120, output_tokens: 30 }
    })
    const server = await jsonServer((_body, index) =>
      index === 0
        ? message([{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } }])
        : message([{ type: "text", text: "Here is the outfit." }, { type: "tool_use", id: "toolu_2", name: "final_answer", input: outfit }])
    )
    try {
      const { lines } = await run("structured-output.ts", "", { ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: server.url })
      expectInOrder(lines, [
        "model: Anthropic Messages API (claude-sonnet-4-5)",
        `  model says: ${JSON.stringify(outfit)}`,
        "completed: 1 tool call(s), 300 tokens",
        ...valueLines
      ])
      expect(server.bodies.map((body) => [body.tools.map((tool: { name: string }) => tool.name), body.tool_choice, body.temperature])).toEqual([
        [["get_weather", "final_answer"], { type: "auto" }, 0],
        [["get_weather", "final_answer"], { type: "auto" }, 0]
      ])
    } finally {
      server.close()
    }
  }, 60_000)
})
