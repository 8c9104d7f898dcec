import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { McpToolkit } from "../src/index.js"
import { nested } from "./fixtures/hostile.js"
import { batch } from "./fixtures/run.js"
import { hostileStdio } from "./fixtures/transports.js"

const Hostile = McpToolkit.layer({ transport: hostileStdio(), overrides: { never: { timeout: "300 millis" } } })

const tools = Effect.flatMap(McpToolkit.McpToolkit, (mcp) => mcp.tools)

describe("McpToolkit against a hostile server (raw JSON-RPC over stdio)", () => {
  layer(Hostile, { timeout: 30_000, excludeTestServices: true })("one connection", (it) => {
    it.effect("two tools whose input schemas share an $id are each checked against their own schema", () =>
      Effect.gen(function*() {
        expect(yield* batch(yield* tools, [["count", { n: 1 }], ["name", { s: "x" }], ["name", { n: 1 }]])).toEqual([
          `count got {"n":1}`,
          `name got {"s":"x"}`,
          `ToolError(semantic): Invalid arguments for tool "name": data must have required property 's'`
        ])
      }))

    it.effect("a check that exhausts the stack (a recursive schema, a value nested 100 000 levels deep) is a semantic error, not a defect", () =>
      Effect.gen(function*() {
        expect(yield* batch(yield* tools, [["tree", nested(100_000)], ["deep_output", {}], ["tree", nested(3)]])).toEqual([
          `ToolError(semantic): Invalid arguments for tool "tree": the check threw RangeError: Maximum call stack size exceeded`,
          `ToolError(semantic): MCP server "hostile", tool "deep_output": the structured content does not match the tool's output schema: the check threw RangeError: Maximum call stack size exceeded`,
          `tree got {"next":{"next":{"next":{}}}}`
        ])
      }))
  })
})
