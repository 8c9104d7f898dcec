/**
 * Against the MCP reference server `@modelcontextprotocol/server-everything` (over stdio): a
 * server nobody here wrote.
 */
import { Part, ToolCallingManager, Toolkit } from "@agentfx/core"
import { assert, describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { McpToolkit, McpTransport } from "../src/index.js"
import { batch, childrenRunning } from "./fixtures/run.js"

const bin = join(dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js")

const Everything = McpToolkit.layer({
  transport: McpTransport.stdio({ command: process.execPath, args: [bin, "stdio"], stderr: "ignore" }),
  overrides: { "trigger-long-running-operation": { timeout: "500 millis" } }
})

const tools = Effect.flatMap(McpToolkit.McpToolkit, (mcp) => mcp.tools)

describe("McpToolkit against server-everything", () => {
  layer(Everything, { timeout: 30_000, excludeTestServices: true })("one connection", (it) => {
    it.effect("lists its tools, leaving out the one that needs task-based execution", () =>
      Effect.gen(function*() {
        const mcp = yield* McpToolkit.McpToolkit
        expect(mcp.server.name).toBe("mcp-servers/everything")
        expect((yield* tools).map((tool) => tool.name)).toEqual([
          "echo",
          "get-annotated-message",
          "get-env",
          "get-resource-links",
          "get-resource-reference",
          "get-structured-content",
          "get-sum",
          "get-tiny-image",
          "gzip-file-as-resource",
          "toggle-simulated-logging",
          "toggle-subscriber-updates",
          "trigger-long-running-operation"
        ])
        const sum = (Toolkit.make(...yield* tools)).entries.get("get-sum")!
        expect([sum.description, sum.needsApproval, sum.parametersJsonSchema]).toEqual([
          "Returns the sum of two numbers",
          false,
          {
            type: "object",
            properties: { a: { type: "number", description: "First number" }, b: { type: "number", description: "Second number" } },
            required: ["a", "b"],
            $schema: "http://json-schema.org/draft-07/schema#"
          }
        ])
      }))

    it.effect("calls: text, structured content, an image", () =>
      Effect.gen(function*() {
        expect(yield* batch(yield* tools, [
          ["get-sum", { a: 2, b: 3 }],
          ["echo", { message: "hi" }],
          ["get-structured-content", { location: "Chicago" }]
        ])).toEqual([
          "The sum of 2 and 3 is 5.",
          "Echo: hi",
          `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}`
        ])
        const [image] = yield* ToolCallingManager.executeBatch(Toolkit.make(...yield* tools), [{ id: "i1", name: "get-tiny-image", args: {} }])
        assert(image?._tag === "Succeeded")
        expect(image.value).toBe("Here's the image you requested:\nThe image above is the MCP logo.")
        expect(image.files?.map((file) => [file.mediaType, file.source._tag, Part.inlineBytes(file) > 100])).toEqual([["image/png", "Base64", true]])
      }))

    it.effect("bad arguments are refused before the server sees them", () =>
      Effect.gen(function*() {
        expect(yield* batch(yield* tools, [["get-sum", { a: "x" }]])).toEqual([
          `ToolError(semantic): Invalid arguments for tool "get-sum": data must have required property 'b', data/a must be number`
        ])
      }))

    it.effect("its long-running operation ends at the declared timeout; the connection stays usable", () =>
      Effect.gen(function*() {
        const started = Date.now()
        expect(yield* batch(yield* tools, [["trigger-long-running-operation", { duration: 30, steps: 3 }]])).toEqual([
          `ToolTimeout(transient): Tool "trigger-long-running-operation" timed out after 500ms`
        ])
        expect(Date.now() - started).toBeLessThan(5_000)
        expect(yield* batch(yield* tools, [["echo", { message: "still here" }]])).toEqual(["Echo: still here"])
      }))

    it.effect("its server process is this test's child while the layer lives", () =>
      Effect.sync(() => expect(childrenRunning(bin)).toHaveLength(1)))
  })

  describe("after the layer's scope closed", () => {
    it("no server-everything process is left", () => {
      expect(childrenRunning(bin)).toEqual([])
    })
  })
})
