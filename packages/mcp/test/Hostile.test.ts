import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { McpToolkit } from "../src/index.js"
import { nested } from "./fixtures/hostile.js"
import { batch, childrenRunning, logsInto } from "./fixtures/run.js"
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

    it.effect("answers that are not JSON-RPC (a result that is no object, neither result nor error, an error of the wrong shape): each call fails at once, semantic, naming it; no timeout needed", () =>
      Effect.gen(function*() {
        const kinds = ["string", "null", "neither", "error"]
        const results = yield* batch(yield* tools, [...kinds.map((kind) => ["malformed", { kind }] as const), ["ping", {}] as const]).pipe(
          Effect.timeout("5 seconds")
        )
        const failure = (problem: string) =>
          `ToolError(semantic): MCP server "hostile", tool "malformed": MCP error -32603: the server's answer is not a JSON-RPC response: ${problem}`
        expect(results).toEqual([
          failure("its result is a string, not an object"),
          failure("its result is null, not an object"),
          failure("it has neither a result nor an error"),
          failure("its error is not an object with an integer code and a message"),
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
        expect(output).toBe(
          `ToolError(semantic): MCP server "hostile", tool "deep_output": the structured content does not match the tool's output schema: the check threw RangeError: Maximum call stack size exceeded`
        )
      }))

    it.effect("a pattern that backtracks catastrophically: the check is stopped at its deadline off the event loop, a semantic error; ordinary values are checked as before", () =>
      Effect.gen(function*() {
        const all = yield* tools
        // the event loop's longest pause while the calls run, by a ticker every 10 ms (real time)
        let last = performance.now()
        let worst = 0
        const ticker = setInterval(() => {
          const now = performance.now()
          worst = Math.max(worst, now - last)
          last = now
        }, 10)
        const started = performance.now()
        const results = yield* batch(all, [["redos", { s: `${"a".repeat(30)}!` }], ["redos", { s: "aaaa" }], ["redos", { s: "ab" }]]).pipe(
          Effect.ensuring(Effect.sync(() => clearInterval(ticker)))
        )
        const took = performance.now() - started
        expect(results).toEqual([
          `ToolError(semantic): Invalid arguments for tool "redos": the check did not finish within 5s and was stopped`,
          `redos got {"s":"aaaa"}`,
          `ToolError(semantic): Invalid arguments for tool "redos": data/s must match pattern "^(a+)+$"`
        ])
        // on the event loop, "a" × 30 + "!" against ^(a+)+$ blocked it for 10 to 100 s on this machine (28: 2.5 to 22 s)
        expect(worst).toBeLessThan(500)
        expect(took).toBeLessThan(15_000)
      }), 30_000)

    it.effect("an answer over the SDK's 10 MiB stdio limit: the environment error names the limit, and the next call starts a new process", () =>
      Effect.gen(function*() {
        const all = yield* tools
        // generous: the server writes 10 MiB and the SDK reads it on a machine that may be busy (a hang fails it)
        expect(yield* batch(all, [["huge", {}]]).pipe(Effect.timeout("40 seconds"))).toEqual([
          `ToolError(environment): MCP server "hostile", tool "huge": the connection was lost before the server answered (the server sent a message larger than the MCP SDK's stdio limit of 10485760 bytes (10 MiB)); the next call reconnects`
        ])
        expect(yield* batch(all, [["ping", {}]])).toEqual(["pong"])
      }), 60_000)
  })

  it.live("entries it cannot use — not a tool, a schema that does not compile, a name listed twice, a task-only tool — are left out with a warning each; the others work", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const mcp = yield* McpToolkit.make({ transport: hostileStdio("bad-tools") }).pipe(
        Effect.provide(logsInto(logs))
      )
      const all = yield* mcp.tools
      expect(all.map((tool) => tool.name)).toEqual(["ping"])
      expect(yield* batch(all, [["ping", {}]])).toEqual(["pong"])
      const nowhere = `can't resolve reference #/$defs/Nowhere from id #`
      expect(logs).toEqual([
        `WARN: MCP server "hostile": the tool at position 2 is left out: it is not an MCP tool (Invalid input: expected object, received number)`,
        `WARN: MCP server "hostile": tool "no_schema" is left out: it is not an MCP tool (inputSchema: Invalid input: expected object, received undefined)`,
        `WARN: MCP server "hostile": tool "string_schema" is left out: it is not an MCP tool (inputSchema.type: Invalid input: expected "object")`,
        `WARN: MCP server "hostile": tool "twin" is left out: the server lists 2 tools with this name`,
        `WARN: MCP server "hostile": tool "task_only" is left out: it runs only as an MCP task (execution.taskSupport: "required"), which tools/call refuses`,
        `WARN: MCP server "hostile": tool "bad_input" is left out: its input schema cannot be compiled (${nowhere})`,
        `WARN: MCP server "hostile": tool "bad_output" is left out: its output schema cannot be compiled (${nowhere})`
      ])
    }).pipe(Effect.scoped), 30_000)

  it.live("a server that gives a next page for ever, or more tools than the cap, is refused with list-tools naming the cap, and ended", () =>
    Effect.gen(function*() {
      const refused = (variant: "endless-pages" | "huge-page") =>
        McpToolkit.make({ transport: hostileStdio(variant) }).pipe(
          Effect.scoped,
          Effect.flip,
          Effect.map((error) => [error.reason, error.message]),
          Effect.timeout("20 seconds")
        )
      const caps = "agentfx reads at most 1000 tools in at most 100 pages"
      expect(yield* refused("endless-pages")).toEqual([
        "list-tools",
        `MCP server "hostile": the server gives a next page after 100 pages of tools/list (${caps})`
      ])
      expect(yield* refused("huge-page")).toEqual(["list-tools", `MCP server "hostile": the server lists more than 1000 tools (${caps})`])
      expect(childrenRunning("fixtures/hostile.ts")).toEqual([])
    }), 60_000)
})
