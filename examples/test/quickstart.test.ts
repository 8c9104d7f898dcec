import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { envelope } from "../../packages/ai/test/recordings/responses.js"
import { jsonServer, run } from "./run.js"

const root = fileURLToPath(new URL("../..", import.meta.url))

describe("docs/testing.md", () => {
  it("shows examples/test/testing.test.ts verbatim", () => {
    const guide = Fs.readFileSync(`${root}/docs/testing.md`, "utf8")
    expect(guide).toContain(Fs.readFileSync(`${root}/examples/test/testing.test.ts`, "utf8").trim())
  })
})

describe("README quick start (examples/quickstart.ts)", () => {
  it("is in the README verbatim", () => {
    const readme = Fs.readFileSync(`${root}/README.md`, "utf8")
    expect(readme).toContain(Fs.readFileSync(`${root}/examples/quickstart.ts`, "utf8").trim())
  })

  it("without OPENAI_API_KEY it runs on its scripted model, and says what to set", async () => {
    const { raw, stderr } = await run("quickstart.ts")
    expect([raw, stderr]).toEqual(["Sunny in Oslo. (A scripted answer: set OPENAI_API_KEY for a real model.)\n", ""])
  }, 60_000)

  it("runs against an OpenAI Responses server given by OPENAI_BASE_URL", async () => {
    const server = await jsonServer((_body, index) =>
      envelope({
        status: "completed",
        output: index === 0
          ? [{ type: "function_call", call_id: "call_1", name: "get_weather", arguments: `{"city":"Oslo"}` }]
          : [{ type: "message", id: "m1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "It is sunny in Oslo.", annotations: [] }] }]
      })
    )
    try {
      const { raw: stdout } = await run("quickstart.ts", "", { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `${server.url}/v1` })
      expect(stdout.trim()).toBe("It is sunny in Oslo.")
      expect(server.bodies).toHaveLength(2)
      expect(server.bodies[1].input.at(-1)).toEqual({ type: "function_call_output", call_id: "call_1", output: "\"Sunny in Oslo\"" })
    } finally {
      server.close()
    }
  }, 60_000)
})
