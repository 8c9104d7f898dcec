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

    it.effect("an answer to an id never asked, a second answer, lines that are not JSON, requests to the client: the call still gets its own answer", () =>
      Effect.gen(function*() {
        expect(yield* batch(yield* tools, [["wrong_id", {}], ["twice", {}], ["garbage", {}], ["sample", {}], ["ping", {}]])).toEqual([
          "yours",
          "first",
          "after garbage",
          "sampled",
          "pong"
        ])
      }))

    it.effect("a server that never answers and ignores the cancellation: the timeout ends the call, and the connection stays usable", () =>
      Effect.gen(function*() {
        const all = yield* tools
        expect(yield* batch(all, [["never", {}]]).pipe(Effect.timeout("5 seconds"))).toEqual([`ToolTimeout(transient): Tool "never" timed out after 300ms`])
        expect(yield* batch(all, [["ping", {}]])).toEqual(["pong"])
      }))

    it.effect("a server that exits in the middle of its answer: an environment error, and the next call starts a new process", () =>
      Effect.gen(function*() {
        const all = yield* tools
        expect(yield* batch(all, [["exit", {}]]).pipe(Effect.timeout("5 seconds"))).toEqual([
          `ToolError(environment): MCP server "hostile", tool "exit": the connection was lost before the server answered; the next call reconnects`
        ])
        expect(yield* batch(all, [["ping", {}]])).toEqual(["pong"])
      }))

    it.effect("a check that exhausts the stack (a recursive schema, a value nested 100 000 levels deep) is a semantic error, not a defect", () =>
      Effect.gen(function*() {
        const [args, output, next] = yield* batch(yield* tools, [["tree", nested(100_000)], ["deep_output", {}], ["tree", nested(3)]])
        expect([args, next]).toEqual([
          `ToolError(semantic): Invalid arguments for tool "tree": the check threw RangeError: Maximum call stack size exceeded`,
          `tree got {"next":{"next":{"next":{}}}}`
        ])
        // ours, or the SDK's own check when its cache of output schemas holds the tool (after a
        // refresh of the list, which an earlier test of this connection may have caused)
        expect([
          `ToolError(semantic): MCP server "hostile", tool "deep_output": the structured content does not match the tool's output schema: the check threw RangeError: Maximum call stack size exceeded`,
          `ToolError(semantic): MCP server "hostile", tool "deep_output": MCP error -32602: Failed to validate structured content: Maximum call stack size exceeded`
        ]).toContain(output)
      }))
  })
})
