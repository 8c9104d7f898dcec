import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** The smallest Responses API answer @effect/ai-openai decodes. */
const response = (output: ReadonlyArray<object>) => ({
  id: "resp_1",
  object: "response",
  created_at: 1,
  error: null,
  incomplete_details: null,
  instructions: null,
  model: "gpt-4.1-mini",
  output,
  parallel_tool_calls: true,
  tools: [],
  tool_choice: "auto",
  metadata: null,
  temperature: null,
  top_p: null
})

describe("README quick start (examples/quickstart.ts)", () => {
  it("is in the README verbatim", () => {
    const readme = Fs.readFileSync(`${root}/README.md`, "utf8")
    expect(readme).toContain(Fs.readFileSync(`${root}/examples/quickstart.ts`, "utf8").trim())
  })

  it("runs against an OpenAI Responses server given by OPENAI_BASE_URL", async () => {
    const bodies: Array<any> = []
    const server = Http.createServer((req, res) => {
      let data = ""
      req.on("data", (chunk) => (data += chunk))
      req.on("end", () => {
        bodies.push(JSON.parse(data))
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify(response(
          bodies.length === 1
            ? [{ type: "function_call", call_id: "call_1", name: "get_weather", arguments: `{"city":"Oslo"}` }]
            : [{ type: "message", id: "m1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "It is sunny in Oslo.", annotations: [] }] }]
        )))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    try {
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile("pnpm", ["-s", "tsx", "examples/quickstart.ts"], {
          cwd: root,
          encoding: "utf8",
          timeout: 60_000,
          env: { ...process.env, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, OPENAI_MODEL: "", ANTHROPIC_API_KEY: "", AGENTFX_BASE_URL: "" }
        }, (error, out, err) => (error === null ? resolve(out) : reject(new Error(`${error.message}\n${out}\n${err}`))))
      )
      expect(stdout.trim()).toBe("It is sunny in Oslo.")
      expect(bodies).toHaveLength(2)
      expect(bodies[1].input.at(-1)).toEqual({ type: "function_call_output", call_id: "call_1", output: "\"Sunny in Oslo\"" })
    } finally {
      server.closeAllConnections()
      server.close()
    }
  }, 60_000)
})
