import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Option, Schedule, Schema } from "effect"
import { fileURLToPath } from "node:url"
import { Tool, Toolkit } from "../src/index.js"

const tool = (name: string, extra: Partial<Tool.Options<{ q: string }, { q: string }, string, string, never>> = {}) =>
  Tool.make(name, {
    description: `the ${name} tool`,
    parameters: Schema.Struct({ q: Schema.String }),
    success: Schema.String,
    handler: ({ q }) => Effect.succeed(q),
    ...extra
  })

describe("Toolkit", () => {
  it.effect("refuses duplicate names and bad timeouts, naming every offender", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.fromResult(Toolkit.validate([
        tool("search"),
        tool("search"),
        tool("zero", { timeout: 0 }),
        tool("negative", { timeout: -5 }),
        tool("infinite", { timeout: Infinity }),
        tool("typo", { timeout: "2 sekonds" as Duration.Input }),
        tool("negative_string", { timeout: "-1 seconds" }),
        tool("beyond_timers", { timeout: "25 days" }),
        tool("beyond_timers_ms", { timeout: 2 ** 31 }),
        tool("fine", { timeout: "2 seconds" }),
        tool("longest", { timeout: 2 ** 31 - 1 })
      ])))
      expect(error._tag).toBe("InvalidToolkit")
      expect(error.problems).toEqual([
        `tool name "search" is used by 2 tools`,
        `tool "zero": timeout 0 is not positive`,
        `tool "negative": timeout -5 is not positive`,
        `tool "infinite": timeout Infinity is not finite`,
        `tool "typo": timeout "2 sekonds" cannot be parsed as a duration`,
        `tool "negative_string": timeout "-1 seconds" is not positive`,
        `tool "beyond_timers": timeout "25 days" is longer than a timer can wait (2147483647 ms, about 24.8 days): it would never fire`,
        `tool "beyond_timers_ms": timeout 2147483648 is longer than a timer can wait (2147483647 ms, about 24.8 days): it would never fire`
      ])
      expect(error.message).toContain("Invalid toolkit (8 problems)")
    }))

  it.effect("refuses retry counts that are negative or not integers", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.fromResult(Toolkit.validate([
        tool("negative", { retry: { times: -1 } }),
        tool("fraction", { retry: { times: 1.5 } }),
        // JSON overrides may carry a null
        tool("nothing", Tool.overridesOf(JSON.parse(`{ "retry": null }`))),
        tool("fine", { retry: { times: 0 } })
      ])))
      expect(error.problems).toEqual([
        `tool "negative": retry.times -1 is not a non-negative integer`,
        `tool "fraction": retry.times 1.5 is not a non-negative integer`,
        `tool "nothing": retry null is not an object { times, schedule? }`
      ])
    }))

  it.effect("refuses names providers reject and parameters that are not an object", () =>
    Effect.gen(function*() {
      const notObject = Tool.make("scalar", {
        description: "takes a bare string",
        parameters: Schema.String,
        success: Schema.String,
        handler: (s) => Effect.succeed(s)
      })
      const error = yield* Effect.flip(Effect.fromResult(Toolkit.validate([tool("get weather"), notObject])))
      expect(error.problems).toEqual([
        `tool "get weather": the name must match ^[a-zA-Z0-9_-]{1,64}$ (what model providers accept)`,
        `tool "scalar": parameters must describe a JSON object (use Schema.Struct)`
      ])
    }))

  it.effect("builds one metadata table with normalised options", () =>
    Effect.gen(function*() {
      const schedule = Schedule.spaced("1 second")
      const toolkit = Toolkit.make(
        tool("a", { timeout: "2 seconds", retry: { times: 2, schedule }, serial: true, tags: ["x"] }),
        tool("b", { needsApproval: true, returnDirect: true })
      )
      expect([...toolkit.entries.keys()]).toEqual(["a", "b"])
      const a = toolkit.entries.get("a")!
      expect(a.timeout).toEqual(Option.some(Duration.seconds(2)))
      expect(a.retryTimes).toBe(2)
      expect(a.retrySchedule).toEqual(Option.some(schedule))
      expect([a.serial, a.returnDirect, a.needsApproval, a.tags]).toEqual([true, false, false, ["x"]])
      const b = toolkit.entries.get("b")!
      expect(b.timeout).toEqual(Option.none())
      expect(b.retryTimes).toBe(0)
      expect([b.serial, b.returnDirect, b.needsApproval]).toEqual([false, true, true])
      expect(b.parametersJsonSchema).toEqual({
        type: "object",
        required: ["q"],
        properties: { q: { type: "string" } },
        additionalProperties: false
      })
    }))

  it.effect("refuses worker tools without a module, with a module that is not an existing file, or with a handler; in-process tools without one", () =>
    Effect.gen(function*() {
      const tools = new URL("./workers/tools.mjs", import.meta.url)
      const worker = (name: string, extra: Record<string, unknown>) =>
        Tool.make(name, {
          description: `the ${name} tool`,
          parameters: Schema.Struct({}),
          success: Schema.String,
          isolation: "worker",
          module: tools,
          ...extra
        } as Tool.WorkerOptions<{}, {}, string, string>)
      const error = yield* Effect.flip(Effect.fromResult(Toolkit.validate([
        worker("no_module", { module: undefined }),
        worker("missing", { module: new URL("./workers/missing.mjs", import.meta.url) }),
        worker("relative", { module: "./workers/tools.mjs" }),
        worker("remote", { module: new URL("https://example.com/tools.mjs") }),
        worker("directory", { module: new URL("./workers/", import.meta.url) }),
        worker("with_handler", { handler: () => Effect.succeed("in process?") }),
        worker("empty_export", { export: "" }),
        worker("thread", { isolation: "thread" }),
        tool("in_process_module", { module: tools } as Record<string, unknown>),
        tool("no_handler", { handler: undefined } as Record<string, unknown>),
        worker("fine", { module: fileURLToPath(tools), export: "echo" })
      ])))
      expect(error.problems).toEqual([
        `tool "no_module": isolation: "worker" needs a module (a file: URL of the module that exports the function)`,
        `tool "missing": module ${fileURLToPath(new URL("./workers/missing.mjs", import.meta.url))} does not exist`,
        `tool "relative": module "./workers/tools.mjs" is not a file: URL or an absolute path (use new URL("./x.worker.ts", import.meta.url))`,
        `tool "remote": module "https://example.com/tools.mjs" is not a file: URL or an absolute path (use new URL("./x.worker.ts", import.meta.url))`,
        `tool "directory": module ${fileURLToPath(new URL("./workers/", import.meta.url))} is not a file`,
        `tool "with_handler": a tool with isolation: "worker" takes a module, not a handler`,
        `tool "empty_export": export "" is not a non-empty string`,
        `tool "thread": isolation "thread" is not "in-process" or "worker"`,
        `tool "in_process_module": "module" and "export" are only read with isolation: "worker"`,
        `tool "no_handler": an in-process tool needs a handler function`
      ])
    }))

  it.effect("a worker tool's row says where it runs", () =>
    Effect.gen(function*() {
      const module = new URL("./workers/tools.mjs", import.meta.url)
      const toolkit = Toolkit.make(
        tool("here"),
        Tool.make("there", {
          description: "runs in a worker",
          parameters: Schema.Struct({ text: Schema.String }),
          success: Schema.String,
          isolation: "worker",
          module
        })
      )
      expect(toolkit.entries.get("here")!.isolation).toEqual({ _tag: "InProcess" })
      expect(toolkit.entries.get("there")!.isolation).toEqual({ _tag: "Worker", module: module.href, export: "default" })
    }))
})
