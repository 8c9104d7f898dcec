import { Agent, Decision, ScriptedChatModel, Tool, ToolCallingManager, Toolkit } from "@agentfx/core"
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Layer, Result, Schema } from "effect"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { McpToolkit, McpTransport } from "../src/index.js"
import { alive, batch, childrenRunning, eventually, lastResult, logsInto, pausedThenRetried } from "./fixtures/run.js"
import { fixtureDir, fixtureStdio, packageDir } from "./fixtures/transports.js"

const Fixture = McpToolkit.layer({
  transport: fixtureStdio({ env: { FIXTURE_GREETING: "hello from the test" } }),
  prefix: "fx_",
  overrides: {
    slow: { timeout: "300 millis" },
    add: { serial: true, returnDirect: true, retry: { times: 2 } },
    write_note: { needsApproval: false }
  }
})

const tools = Effect.flatMap(McpToolkit.McpToolkit, (mcp) => mcp.tools)

/** Logged at each listing of the fixture: its `background_job` runs only as a task. */
const taskOnlyWarning =
  `WARN: MCP server "fixture": tool "background_job" is left out: it runs only as an MCP task (execution.taskSupport: "required"), which tools/call refuses`

/** What the fixture was asked and what it saw cancelled, through its `log` tool (named with or without the prefix). */
const serverLog = (all: ReadonlyArray<McpToolkit.McpTool>) =>
  Effect.map(batch(all, [[all.some((tool) => tool.name === "fx_log") ? "fx_log" : "log", {}]]), ([line]) => JSON.parse(line!) as { calls: Array<string>; cancelled: Array<{ tool: string; reason: string }> })

const managers = {
  sequential: ToolCallingManager.sequential(),
  unbounded: ToolCallingManager.unbounded(),
  bounded: ToolCallingManager.bounded({ permits: 2 })
} as const

/** A file the fixture's `hang_while` waits on. */
const blockerDir = mkdtempSync(join(tmpdir(), "agentfx-mcp-"))
const blocker = join(blockerDir, "blocker")
afterAll(() => rmSync(blockerDir, { recursive: true, force: true }))

const pidOf = (all: ReadonlyArray<McpToolkit.McpTool>) => Effect.map(batch(all, [["pid", {}]]), ([pid]) => Number(pid))

describe("McpToolkit over stdio (a server written with the SDK)", () => {
  layer(Fixture, { timeout: 30_000, excludeTestServices: true })("one connection", (it) => {
    it.effect("lists every page of tools, prefixed, leaving out task-only tools", () =>
      Effect.gen(function*() {
        const mcp = yield* McpToolkit.McpToolkit
        expect(mcp.server).toEqual({ name: "fixture", version: "1.2.3" })
        expect((yield* tools).map((tool) => tool.name)).toEqual([
          "fx_add",
          "fx_weather",
          "fx_fail",
          "fx_bad_weather",
          "fx_bad_result",
          "fx_protocol_error",
          "fx_slow",
          "fx_hang_while",
          "fx_log",
          "fx_pid",
          "fx_env",
          "fx_cwd",
          "fx_picture",
          "fx_order",
          "fx_write_note",
          "fx_toggle_extra"
        ])
      }))

    it.effect("gives the model the server's description and JSON Schema unchanged", () =>
      Effect.gen(function*() {
        const toolkit = Toolkit.make(...yield* tools)
        const add = toolkit.entries.get("fx_add")!
        expect(add.description).toBe("Adds two numbers")
        expect(add.parametersJsonSchema).toEqual({
          type: "object",
          properties: { a: { type: "number", description: "First" }, b: { type: "number" } },
          required: ["a", "b"],
          $schema: "http://json-schema.org/draft-07/schema#"
        })
      }))

    it.effect("the server's input schema reaches the model unchanged (root $defs and their $refs included), and validates", () =>
      Effect.gen(function*() {
        const all = yield* tools
        const toolkit = Toolkit.make(...all)
        expect(toolkit.entries.get("fx_order")!.parametersJsonSchema).toEqual({
          type: "object",
          properties: { item: { $ref: "#/$defs/Item" } },
          required: ["item"],
          $defs: {
            Item: { type: "object", properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1 } }, required: ["sku", "qty"] }
          }
        })
        expect(yield* batch(all, [["fx_order", { item: { sku: "A-1", qty: 2 } }], ["fx_order", { item: { sku: "A-1", qty: 0 } }]])).toEqual([
          "ordered 2 × A-1",
          `ToolError(semantic): Invalid arguments for tool "fx_order": data/item/qty must be >= 1`
        ])
      }))

    it.effect("annotations decide approval and tags; overrides beat them and set every other option", () =>
      Effect.gen(function*() {
        const toolkit = Toolkit.make(...yield* tools)
        const row = (name: string) => {
          const entry = toolkit.entries.get(name)!
          return {
            needsApproval: entry.needsApproval,
            tags: entry.tags,
            timeout: entry.timeout._tag === "Some" ? entry.timeout.value.toString() : "none",
            retryTimes: entry.retryTimes,
            serial: entry.serial,
            returnDirect: entry.returnDirect
          }
        }
        const plain = { timeout: "none", retryTimes: 0, serial: false, returnDirect: false }
        expect(row("fx_weather")).toEqual({ ...plain, needsApproval: false, tags: ["mcp", "readOnly", "idempotent"] })
        // no annotations: MCP's defaults say destructive and open-world; the override lifts the approval
        expect(row("fx_write_note")).toEqual({ ...plain, needsApproval: false, tags: ["mcp", "destructive", "openWorld"] })
        expect(row("fx_toggle_extra")).toEqual({ ...plain, needsApproval: false, tags: ["mcp", "openWorld"] })
        expect(row("fx_add")).toEqual({
          needsApproval: false,
          tags: ["mcp", "readOnly", "idempotent"],
          timeout: "none",
          retryTimes: 2,
          serial: true,
          returnDirect: true
        })
        expect(row("fx_slow").timeout).toBe("300 millis")
      }))

    it.effect("a call returns the text content, or structuredContent when the tool declares an output schema", () =>
      Effect.gen(function*() {
        expect(yield* batch(yield* tools, [["fx_add", { a: 2, b: 3 }], ["fx_weather", { city: "Oslo" }], ["fx_picture", {}]])).toEqual([
          "5",
          `{"city":"Oslo","tempC":21}`,
          "A red dot:\n[resource: file:///dot.png (image/png)]\n[image: png, 3 bytes]"
        ])
      }))

    it.effect("a result's images and embedded resources' bytes are files beside its text; a resource link, and an image without a media type, stay text", () =>
      Effect.gen(function*() {
        const [result] = yield* ToolCallingManager.executeBatch(Toolkit.make(...yield* tools), [{ id: "p1", name: "fx_picture", args: {} }])
        expect(result).toEqual({
          _tag: "Succeeded",
          callId: "p1",
          toolName: "fx_picture",
          value: "A red dot:\n[resource: file:///dot.png (image/png)]\n[image: png, 3 bytes]",
          files: [
            { _tag: "File", mediaType: "image/png", source: { _tag: "Base64", data: Buffer.from("0123456789").toString("base64") } },
            { _tag: "File", mediaType: "application/pdf", name: "file:///dot.pdf", source: { _tag: "Base64", data: Buffer.from("%PDF").toString("base64") } }
          ]
        })
      }))

    it.effect("arguments the schema rejects are a semantic error naming the problem, and the server is not called", () =>
      Effect.gen(function*() {
        const all = yield* tools
        const before = (yield* serverLog(all)).calls.length
        expect(yield* batch(all, [["fx_add", { a: "2" }]])).toEqual([
          `ToolError(semantic): Invalid arguments for tool "fx_add": data must have required property 'b', data/a must be number`
        ])
        expect((yield* serverLog(all)).calls.slice(before)).toEqual(["log"])
      }))

    it.effect("isError: true is a semantic error with the server's text; a JSON-RPC error is semantic too", () =>
      Effect.gen(function*() {
        expect(yield* batch(yield* tools, [["fx_fail", { message: "no such city: Atlantis" }], ["fx_protocol_error", {}]])).toEqual([
          "ToolError(semantic): no such city: Atlantis",
          `ToolError(semantic): MCP server "fixture", tool "protocol_error": MCP error -32602: protocol_error wants nothing you can give`
        ])
      }))

    it.effect("structured content its output schema rejects, and an answer the server's SDK refuses to send, are semantic", () =>
      Effect.gen(function*() {
        const [badWeather, badResult] = yield* batch(yield* tools, [["fx_bad_weather", {}], ["fx_bad_result", {}]])
        expect(badWeather).toBe(
          `ToolError(semantic): MCP server "fixture", tool "bad_weather": the structured content does not match the tool's output schema: data/tempC must be number`
        )
        expect(badResult).toMatch(/^ToolError\(semantic\): MCP server "fixture", tool "bad_result": MCP error -32602: Invalid tools\/call result: /)
      }))

    it.effect("a timeout aborts the request: the server sees notifications/cancelled, and the connection stays usable", () =>
      Effect.gen(function*() {
        const all = yield* tools
        const started = Date.now()
        expect(yield* batch(all, [["fx_slow", { ms: 20_000 }]])).toEqual([`ToolTimeout(transient): Tool "fx_slow" timed out after 300ms`])
        expect(Date.now() - started).toBeLessThan(5_000)
        const log = yield* eventually(serverLog(all), (log) => log.cancelled.length > 0)
        expect(log.cancelled).toEqual([{ tool: "slow", reason: "AbortError: This operation was aborted" }])
        expect(yield* batch(all, [["fx_add", { a: 1, b: 1 }]])).toEqual(["2"])
      }))

    it.effect("interrupting a call cancels it on the server", () =>
      Effect.gen(function*() {
        const all = yield* tools
        const before = yield* serverLog(all)
        const hangs = (log: typeof before) => log.calls.filter((call) => call === "hang_while").length
        const fiber = yield* Effect.forkChild(batch(all, [["fx_hang_while", { path: import.meta.filename }]]))
        yield* eventually(serverLog(all), (log) => hangs(log) > hangs(before))
        yield* Fiber.interrupt(fiber)
        const exit = yield* Fiber.await(fiber)
        expect(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)).toBe(true)
        const log = yield* eventually(serverLog(all), (log) => log.cancelled.length > before.cancelled.length)
        expect(log.cancelled.slice(before.cancelled.length)).toEqual([{ tool: "hang_while", reason: "AbortError: This operation was aborted" }])
      }))

    it.effect("tools/list_changed refreshes the list for the next toolkit", () =>
      Effect.gen(function*() {
        const all = yield* tools
        expect(yield* batch(all, [["fx_toggle_extra", {}]])).toEqual(["extra added"])
        const refreshed = yield* eventually(tools, (list) => list.some((tool) => tool.name === "fx_extra"))
        expect(yield* batch(refreshed, [["fx_extra", {}]])).toEqual(["extra here"])
        // the toolkit assembled before the change is what it was
        expect(all.some((tool) => tool.name === "fx_extra")).toBe(false)
        expect(yield* batch(refreshed, [["fx_toggle_extra", {}]])).toEqual(["extra removed"])
        yield* eventually(tools, (list) => !list.some((tool) => tool.name === "fx_extra"))
      }))

    it.effect("the child gets the safe default environment plus `env`, not this process's, and runs in `cwd`", () =>
      Effect.gen(function*() {
        process.env.AGENTFX_TEST_SECRET = "do not leak"
        expect(yield* batch(yield* tools, [
          ["fx_env", { name: "FIXTURE_GREETING" }],
          ["fx_env", { name: "AGENTFX_TEST_SECRET" }],
          ["fx_env", { name: "PATH" }],
          ["fx_cwd", {}]
        ])).toEqual(["hello from the test", "(unset)", process.env.PATH, packageDir.replace(/\/$/, "")])
      }))

    for (const [name, manager] of Object.entries(managers)) {
      it.effect(`an MCP tool and a native tool run side by side in one batch (${name})`, () =>
        Effect.gen(function*() {
          const native = Tool.make("native_upper", {
            description: "Upper-cases a text",
            parameters: Schema.Struct({ text: Schema.String }),
            success: Schema.String,
            handler: ({ text }) => Effect.succeed(text.toUpperCase())
          })
          expect(yield* batch([...yield* tools, native], [
            ["fx_weather", { city: "Oslo" }],
            ["native_upper", { text: "oslo" }],
            ["fx_slow", { ms: 50 }],
            ["fx_fail", { message: "nope" }]
          ]).pipe(Effect.provide(manager))).toEqual([`{"city":"Oslo","tempC":21}`, "OSLO", "slept 50 ms", "ToolError(semantic): nope"])
        }))
    }
  })

  /** An agent on the fixture's tools whose model asks for `write_note` (destructive: the run pauses), then says what it got. */
  const pausedOnNote = Effect.gen(function*() {
    const mcp = yield* McpToolkit.make({ transport: fixtureStdio() })
    const agent = Agent.make({ tools: [...yield* mcp.tools] })
    return { agent, exit: yield* Agent.run(agent, { input: "Note it" }) }
  })
  const noteModel = () =>
    ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ id: "call_1", name: "write_note", args: { text: "buy milk" } }),
      (request) => ScriptedChatModel.text(`Done: ${lastResult(request)}`)
    ])

  it.live("the default gate pauses for a destructive tool; approved, it runs", () =>
    Effect.gen(function*() {
      const { agent, exit } = yield* pausedOnNote
      expect(exit._tag === "Paused" && exit.kind === "approval" && exit.pending.map((p) => p.call.name)).toEqual(["write_note"])
      if (exit._tag !== "Paused") return
      const done = yield* Agent.resume(agent, exit.checkpoint, Decision.approveAll())
      expect(done._tag === "Completed" && done.text).toBe("Done: noted: buy milk")
    }).pipe(Effect.provide(noteModel()), Effect.scoped), 30_000)

  it.live("arguments a person edits on resume are checked against the server's schema (off the event loop) before anything is consumed", () =>
    Effect.gen(function*() {
      const { agent, exit } = yield* pausedOnNote
      if (exit._tag !== "Paused") return expect.fail(`expected a pause, got ${exit._tag}`)
      const refused = yield* Effect.flip(Agent.resume(agent, exit.checkpoint, Decision.byCall({ call_1: Decision.approve({ args: { text: 5 } }) })))
      expect([refused._tag, refused.message]).toEqual([
        "InvalidEditedArguments",
        `Invalid edited arguments: call_1 (write_note): Invalid arguments for tool "write_note": data/text must be string`
      ])
      const done = yield* Agent.resume(agent, exit.checkpoint, Decision.byCall({ call_1: Decision.approve({ args: { text: "buy bread" } }) }))
      expect(done._tag === "Completed" && done.text).toBe("Done: noted: buy bread")
    }).pipe(Effect.provide(noteModel()), Effect.scoped), 30_000)

  it.live("closing the scope ends the server process", () =>
    Effect.gen(function*() {
      const pid = yield* Effect.scoped(Effect.flatMap(McpToolkit.make({ transport: fixtureStdio() }), (mcp) => Effect.flatMap(mcp.tools, pidOf)))
      expect(pid).toBeGreaterThan(0)
      expect(alive(pid)).toBe(false)
    }), 30_000)

  it.live("the server killed mid-call: an environment error, and the next call starts a new process", () =>
    Effect.gen(function*() {
      const mcp = yield* McpToolkit.make({ transport: fixtureStdio() })
      const all = yield* mcp.tools
      const first = yield* pidOf(all)
      const fiber = yield* Effect.forkChild(batch(all, [["slow", { ms: 60_000 }], ["slow", { ms: 60_000 }]]).pipe(Effect.provide(managers.unbounded)))
      yield* eventually(serverLog(all), (log) => log.calls.filter((call) => call === "slow").length === 2)
      process.kill(first, "SIGKILL")
      const results = yield* Fiber.join(fiber).pipe(Effect.timeout("10 seconds"))
      const lost = `ToolError(environment): MCP server "fixture", tool "slow": the connection was lost before the server answered; the next call reconnects`
      expect(results).toEqual([lost, lost])
      const second = yield* pidOf(yield* mcp.tools)
      expect(second).not.toBe(first)
      expect(alive(second)).toBe(true)
    }).pipe(Effect.scoped), 30_000)

  it.live("killed mid-run with onEnvironmentError: \"pause\", the run pauses; retried after the fix, it completes on a new process", () =>
    Effect.gen(function*() {
      const mcp = yield* McpToolkit.make({ transport: fixtureStdio() })
      const all = yield* mcp.tools
      const pid = yield* pidOf(all)
      yield* pausedThenRetried({ tools: all, blocker, kill: Effect.sync(() => process.kill(pid, "SIGKILL")), restart: Effect.void })
    }).pipe(Effect.scoped), 30_000)

  it.live("an override naming a tool the server does not list is refused, and the process is ended", () =>
    Effect.gen(function*() {
      expect(childrenRunning("fixtures/stdio.ts")).toEqual([])
      const error = yield* McpToolkit.make({ transport: fixtureStdio(), overrides: { ad: { timeout: "1 second" }, wether: {} } }).pipe(
        Effect.scoped,
        Effect.flip
      )
      expect(childrenRunning("fixtures/stdio.ts")).toEqual([])
      expect(error.reason).toBe("invalid-options")
      expect(error.message).toBe(
        `overrides name tools that MCP server "fixture" does not list: "ad", "wether" (it lists: add, weather, fail, bad_weather, bad_result, protocol_error, slow, hang_while, log, pid, env, cwd, picture, order, write_note, toggle_extra, background_job)`
      )
    }), 30_000)

  it.live("after tools/list_changed, an override naming a tool no longer listed is refused as at the first listing, until it is listed again", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const mcp = yield* McpToolkit.make({
        transport: fixtureStdio({ env: { FIXTURE_VARIANT: "with-extra" } }),
        overrides: { extra: { needsApproval: true } }
      }).pipe(Effect.provide(logsInto(logs)))
      const before = yield* mcp.tools
      expect(before.find((tool) => tool.name === "extra")?.needsApproval).toBe(true)
      expect(yield* batch(before, [["toggle_extra", {}]])).toEqual(["extra removed"])
      const listed = "add, weather, fail, bad_weather, bad_result, protocol_error, slow, hang_while, log, pid, env, cwd, picture, order, write_note, toggle_extra, background_job"
      const message = `overrides name tools that MCP server "fixture" does not list: "extra" (it lists: ${listed})`
      const refused = yield* eventually(Effect.flip(mcp.tools), () => true)
      expect([refused._tag, refused.reason, refused.message]).toEqual(["McpToolkitError", "invalid-options", message])
      yield* eventually(Effect.sync(() => logs), (lines) => lines.length > 1)
      expect(logs).toEqual([
        taskOnlyWarning,
        `WARN: MCP server "fixture": the refreshed tool list is refused: ${message}`
      ])
      // listed again: the override applies again
      expect(yield* batch(before, [["toggle_extra", {}]])).toEqual(["extra added"])
      const again = yield* eventually(mcp.tools.pipe(Effect.orElseSucceed(() => [])), (list) => list.length > 0)
      expect(again.find((tool) => tool.name === "extra")?.needsApproval).toBe(true)
    }).pipe(Effect.scoped), 30_000)

  it.live("names that clash — two servers without a prefix, a prefix meeting a native tool, a prefix providers reject — are refused when the agent is assembled", () =>
    Effect.gen(function*() {
      const problems = (tools: ReadonlyArray<Tool.Any>) =>
        Result.match(Agent.validate({ tools }), { onFailure: (error) => [error._tag, ...error.problems], onSuccess: () => ["assembled"] })
      const listed = (options?: { readonly prefix: string }) => Effect.flatMap(McpToolkit.make({ transport: fixtureStdio(), ...options }), (mcp) => mcp.tools)
      const [first, second, prefixed, spaced] = yield* Effect.all([listed(), listed(), listed({ prefix: "fx_" }), listed({ prefix: "my files." })], {
        concurrency: "unbounded"
      })
      expect(problems([...first, ...second])).toEqual(["InvalidAgent", ...first.map((tool) => `tool name "${tool.name}" is used by 2 tools`)])

      const native = Tool.make("fx_add", {
        description: "Adds two numbers, natively",
        parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
        success: Schema.Number,
        handler: ({ a, b }) => Effect.succeed(a + b)
      })
      expect(problems([...prefixed, native])).toEqual(["InvalidAgent", `tool name "fx_add" is used by 2 tools`])
      // a prefix keeps one server's tools apart from another's
      expect(problems([...prefixed, ...first])).toEqual(["assembled"])
      expect(problems(spaced.slice(0, 2))).toEqual([
        "InvalidAgent",
        `tool "my files.add": the name must match ^[a-zA-Z0-9_-]{1,64}$ (what model providers accept)`,
        `tool "my files.weather": the name must match ^[a-zA-Z0-9_-]{1,64}$ (what model providers accept)`
      ])
    }).pipe(Effect.scoped), 60_000)

  it.live("a server that cannot start fails the layer with connect", () =>
    Effect.gen(function*() {
      const error = yield* Layer.build(McpToolkit.layer({ transport: McpTransport.stdio({ command: "/nonexistent/mcp-server", args: ["--x"] }) })).pipe(
        Effect.scoped,
        Effect.flip
      )
      expect([error._tag, error.reason, error.message]).toEqual([
        "McpToolkitError",
        "connect",
        "could not start /nonexistent/mcp-server --x: spawn /nonexistent/mcp-server ENOENT"
      ])
    }))

  it.live("a server whose tool list cannot be read fails the layer with ListTools, and is ended", () =>
    Effect.gen(function*() {
      const error = yield* McpToolkit.make({ transport: fixtureStdio({ env: { FIXTURE_VARIANT: "fail-list" } }) }).pipe(
        Effect.scoped,
        Effect.flip
      )
      expect([error.reason, error.message]).toEqual([
        "list-tools",
        `MCP server "fixture": MCP error -32603: the tool registry is offline`
      ])
      expect(childrenRunning("fixtures/stdio.ts")).toEqual([])
    }), 30_000)

  it.live("a tool whose input schema Ajv cannot compile is left out with a warning; the others work", () =>
    Effect.gen(function*() {
      const logs: Array<string> = []
      const mcp = yield* McpToolkit.make({ transport: fixtureStdio({ env: { FIXTURE_VARIANT: "broken-schema" } }) }).pipe(
        Effect.provide(logsInto(logs))
      )
      expect(logs).toEqual([
        `WARN: MCP server "fixture": tool "broken" is left out: its input schema cannot be compiled (can't resolve reference #/$defs/Missing from id #)`
      ])
      const all = yield* mcp.tools
      expect(all.map((tool) => tool.name)).toEqual(["add"])
      expect(yield* batch(all, [["add", { a: 1, b: 2 }], ["broken", { x: 1 }]])).toEqual(["3", `ToolError(semantic): Unknown tool "broken". Available tools: add`])
    }).pipe(Effect.scoped), 30_000)

  // `stderr: "ignore"` is pinned by examples/test/mcp.test.ts (no server banner on its stderr)
  it("stderr: inherit passes the server's stderr through", () => {
    const run = spawnSync(process.execPath, ["--conditions=@agentfx/source", "--import", "tsx", join(fixtureDir, "stderr.ts"), "inherit"], {
      cwd: packageDir,
      encoding: "utf8"
    })
    expect([run.status, run.stdout, run.stderr]).toEqual([0, "16 tools\n", "fixture: serving on stdio\n"])
  }, 30_000)

  it.live("a URL that does not parse fails the layer with connect", () =>
    Effect.gen(function*() {
      const error = yield* McpToolkit.make({ transport: McpTransport.http({ url: "not a url" }) }).pipe(Effect.scoped, Effect.flip)
      expect([error.reason, error.message]).toEqual(["connect", `"not a url" is not a URL`])
    }))
})

