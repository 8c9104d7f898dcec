import { ToolCallingManager } from "@agentfx/core"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { McpToolkit, McpTransport } from "../src/index.js"
import { httpFixture, httpProcess } from "./fixtures/http.js"
import { alive, batch, eventually, pausedThenRetried } from "./fixtures/run.js"

const lost = (tool: string) =>
  `ToolError(environment): MCP server "fixture", tool "${tool}": the connection was lost before the server answered; the next call reconnects`

const callsTo = (calls: ReadonlyArray<string>, tool: string) => calls.filter((call) => call === tool).length

describe("McpToolkit over Streamable HTTP (a server written with the SDK, on 127.0.0.1)", () => {
  it.live("lists the tools and calls one, sending the headers; closing the scope ends the session", () =>
    Effect.gen(function*() {
      const server = yield* httpFixture()
      const results = yield* Effect.gen(function*() {
        const mcp = yield* McpToolkit.make({
          transport: McpTransport.http({ url: server.url, headers: { authorization: "Bearer t0ken" } }),
          overrides: { slow: { timeout: "300 millis" } }
        })
        const tools = yield* mcp.tools
        expect([mcp.server.name, tools.length, server.sessions.size]).toEqual(["fixture", 16, 1])
        return yield* batch(tools, [["add", { a: 2, b: 3 }], ["weather", { city: "Oslo" }], ["fail", { message: "no" }]])
      }).pipe(Effect.scoped)
      expect(results).toEqual(["5", `{"city":"Oslo","tempC":21}`, "ToolError(semantic): no"])
      expect(server.sessions.size).toBe(0)
      expect(new Set(server.authorizations)).toEqual(new Set(["Bearer t0ken"]))
    }).pipe(Effect.scoped), 30_000)

  it.live("a redirect within the server's origin is followed; one to another origin is refused (the SDK's policy), and the headers never reach it", () =>
    Effect.gen(function*() {
      const server = yield* httpFixture()
      const headers = { authorization: "Bearer t0ken", "x-api-key": "s3cret" }
      const moved = yield* McpToolkit.make({ transport: McpTransport.http({ url: server.url.replace(/\/mcp$/, "/moved"), headers }) })
      expect(yield* batch(yield* moved.tools, [["add", { a: 2, b: 3 }]])).toEqual(["5"])

      // another origin (another port): it records what reaches it
      const reached: Array<Http.IncomingHttpHeaders> = []
      const elsewhere = Http.createServer((req, res) => {
        reached.push(req.headers)
        res.writeHead(500).end("no")
      })
      const redirector = Http.createServer((_req, res) =>
        void res.writeHead(307, { location: `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/mcp` }).end()
      )
      yield* Effect.acquireRelease(
        Effect.promise(() => Promise.all([elsewhere, redirector].map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))))),
        () => Effect.promise(() => Promise.all([elsewhere, redirector].map((s) => new Promise<void>((resolve) => s.close(() => resolve())))))
      )
      const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/mcp`
      const error = yield* McpToolkit.make({ transport: McpTransport.http({ url, headers, sseFallback: false }) }).pipe(Effect.flip)
      expect(reached).toEqual([])
      expect([error.reason, error.message]).toEqual([
        "connect",
        `could not connect to ${url}: Streamable HTTP error: Error POSTing to endpoint: Redirect to http://127.0.0.1:${
          (elsewhere.address() as AddressInfo).port
        }/mcp not followed (redirectPolicy: 'same-origin')`
      ])
    }).pipe(Effect.scoped), 30_000)

  it.live("credentials of the transport (the URL's userinfo, header values) are masked in every error, even when the server echoes them", () =>
    Effect.gen(function*() {
      const server = yield* httpFixture()
      const withUser = server.url.replace("http://", "http://user:pa55word@")
      const masked = server.url.replace("http://", "http://***@")
      const refused = yield* McpToolkit.make({ transport: McpTransport.http({ url: withUser, sseFallback: false }) }).pipe(Effect.flip)
      expect([refused.reason, refused.message]).toEqual([
        "connect",
        `could not connect to ${masked}: Request cannot be constructed from a URL that includes credentials: ${masked}`
      ])

      const mcp = yield* McpToolkit.make({
        transport: McpTransport.http({ url: server.url, headers: { authorization: "Bearer t0ken-123", "x-team-key": "s3cret-456" } })
      })
      const tools = yield* mcp.tools
      server.failCalls = 401
      server.failBody = "refused: Bearer t0ken-123 (t0ken-123), key s3cret-456"
      expect(yield* batch(tools, [["add", { a: 1, b: 1 }]])).toEqual([
        `ToolError(environment): MCP server "fixture", tool "add": the transport failed (Streamable HTTP error: Error POSTing to endpoint: refused: *** (***), key ***); the next call reconnects`
      ])
    }).pipe(Effect.scoped), 30_000)

  it.live("a timeout aborts the request: the server sees notifications/cancelled", () =>
    Effect.gen(function*() {
      const server = yield* httpFixture()
      const mcp = yield* McpToolkit.make({
        transport: McpTransport.http({ url: server.url }),
        overrides: { slow: { timeout: "300 millis" } }
      })
      const tools = yield* mcp.tools
      expect(yield* batch(tools, [["slow", { ms: 20_000 }]])).toEqual([`ToolTimeout(transient): Tool "slow" timed out after 300ms`])
      yield* eventually(Effect.sync(() => server.log.cancelled), (cancelled) => cancelled.length > 0)
      expect(server.log.cancelled).toEqual([{ tool: "slow", reason: "AbortError: This operation was aborted" }])
      expect(yield* batch(tools, [["add", { a: 1, b: 1 }]])).toEqual(["2"])
    }).pipe(Effect.scoped), 30_000)

  it.live("the server dying mid-call is an environment error at once, never a hang; the next call reconnects", () =>
    Effect.gen(function*() {
      const server = yield* httpFixture()
      const mcp = yield* McpToolkit.make({ transport: McpTransport.http({ url: server.url }) })
      const tools = yield* mcp.tools
      const fiber = yield* Effect.forkChild(
        batch(tools, [["slow", { ms: 60_000 }], ["add", { a: 1, b: 2 }], ["slow", { ms: 60_000 }]]).pipe(
          Effect.provide(ToolCallingManager.unbounded())
        )
      )
      yield* eventually(Effect.sync(() => callsTo(server.log.calls, "slow")), (n) => n === 2)
      const killedAt = Date.now()
      yield* Effect.promise(server.kill)
      expect(yield* Fiber.join(fiber).pipe(Effect.timeout("5 seconds"))).toEqual([lost("slow"), "3", lost("slow")])
      expect(Date.now() - killedAt).toBeLessThan(2_000)
      // still down: the reconnection fails, and says so
      expect((yield* batch(tools, [["add", { a: 1, b: 1 }]]))[0]).toMatch(
        /^ToolError\(environment\): MCP server "fixture" is not connected, and reconnecting failed: could not connect to http:\/\/127\.0\.0\.1:\d+\/mcp: fetch failed$/
      )
      yield* Effect.promise(server.restart)
      expect(yield* batch(tools, [["add", { a: 1, b: 1 }]])).toEqual(["2"])
      expect(server.sessions.size).toBe(1)
    }).pipe(Effect.scoped), 30_000)
})

/** A file the fixture's `hang_while` waits on. */
const blockerDir = mkdtempSync(join(tmpdir(), "agentfx-mcp-http-"))
const blocker = join(blockerDir, "blocker")
afterAll(() => rmSync(blockerDir, { recursive: true, force: true }))

describe("McpToolkit over Streamable HTTP (the server a process of its own)", () => {
  it.live("killed mid-run with onEnvironmentError: \"pause\", the run pauses; a new server on the same port, retried, completes", () =>
    Effect.gen(function*() {
      const first = yield* httpProcess()
      const mcp = yield* McpToolkit.make({ transport: McpTransport.http({ url: first.url }) })
      yield* pausedThenRetried({
        tools: yield* mcp.tools,
        blocker,
        kill: Effect.sync(() => process.kill(first.pid, "SIGKILL")),
        restart: Effect.gen(function*() {
          yield* eventually(Effect.sync(() => alive(first.pid)), (running) => !running)
          const second = yield* httpProcess(first.port)
          expect([second.url, second.pid === first.pid]).toEqual([first.url, false])
        })
      })
    }).pipe(Effect.scoped), 60_000)
})

describe("McpToolkit over Streamable HTTP: answers that are not results", () => {
  it.live("408, 429, 502, 503, 504 are transient and keep the session; 401 is environment and drops it", () =>
    Effect.gen(function*() {
      const server = yield* httpFixture()
      const mcp = yield* McpToolkit.make({ transport: McpTransport.http({ url: server.url }) })
      const tools = yield* mcp.tools
      const session = [...server.sessions.keys()]
      const failing = (status: number) =>
        Effect.acquireUseRelease(
          Effect.sync(() => server.failCalls = status),
          () => batch(tools, [["add", { a: 1, b: 1 }]]),
          () => Effect.sync(() => server.failCalls = undefined)
        )
      for (const status of [408, 429, 502, 503, 504]) {
        expect(yield* failing(status)).toEqual([
          `ToolError(transient): MCP server "fixture", tool "add": Streamable HTTP error: Error POSTing to endpoint: busy`
        ])
        expect([...server.sessions.keys()]).toEqual(session)
      }
      expect(yield* failing(401)).toEqual([
        `ToolError(environment): MCP server "fixture", tool "add": the transport failed (Streamable HTTP error: Error POSTing to endpoint: busy); the next call reconnects`
      ])
      expect(yield* batch(tools, [["add", { a: 1, b: 1 }]])).toEqual(["2"])
      expect(server.sessions.size).toBe(1)
      expect([...server.sessions.keys()]).not.toEqual(session)
    }).pipe(Effect.scoped), 30_000)

  it.live("an event stream that ends without the answer fails the call at once, never a hang", () =>
    Effect.gen(function*() {
      const server = yield* httpFixture()
      const mcp = yield* McpToolkit.make({ transport: McpTransport.http({ url: server.url }) })
      server.endStreams = true
      expect(yield* batch(yield* mcp.tools, [["add", { a: 1, b: 1 }]]).pipe(Effect.timeout("5 seconds"))).toEqual([lost("add")])
    }).pipe(Effect.scoped), 30_000)

  it.live("an answer that is not a tool result is semantic", () =>
    Effect.gen(function*() {
      const server = yield* httpFixture()
      const mcp = yield* McpToolkit.make({ transport: McpTransport.http({ url: server.url }) })
      server.rawResult = { content: "warm" }
      const [answer] = yield* batch(yield* mcp.tools, [["add", { a: 1, b: 1 }]])
      expect(answer).toMatch(
        /^ToolError\(semantic\): MCP server "fixture", tool "add": the server's answer is not a valid tool result: [\s\S]*"expected": "array"[\s\S]*"content"/
      )
    }).pipe(Effect.scoped), 30_000)
})

describe("McpToolkit over HTTP+SSE (the fallback)", () => {
  it.live("a server that refuses Streamable HTTP is spoken to over HTTP+SSE", () =>
    Effect.gen(function*() {
      const server = yield* httpFixture({ sseOnly: true })
      const mcp = yield* McpToolkit.make({ transport: McpTransport.http({ url: server.url }) })
      expect(yield* batch(yield* mcp.tools, [["add", { a: 2, b: 3 }]])).toEqual(["5"])
      expect(server.sessions.size).toBe(1)
    }).pipe(Effect.scoped), 30_000)

  it.live("without the fallback, the refusal fails the layer with connect", () =>
    Effect.gen(function*() {
      const server = yield* httpFixture({ sseOnly: true })
      const error = yield* McpToolkit.make({ transport: McpTransport.http({ url: server.url, sseFallback: false }) }).pipe(
        Effect.scoped,
        Effect.flip
      )
      expect([error.reason, error.message]).toEqual([
        "connect",
        `could not connect to ${server.url}: Streamable HTTP error: Error POSTing to endpoint: HTTP+SSE only`
      ])
    }).pipe(Effect.scoped), 30_000)

  it.live("the server dying mid-call is an environment error at once, never a hang", () =>
    Effect.gen(function*() {
      const server = yield* httpFixture({ sseOnly: true })
      const mcp = yield* McpToolkit.make({ transport: McpTransport.http({ url: server.url }) })
      const tools = yield* mcp.tools
      const fiber = yield* Effect.forkChild(batch(tools, [["slow", { ms: 60_000 }]]))
      yield* eventually(Effect.sync(() => callsTo(server.log.calls, "slow")), (n) => n === 1)
      yield* Effect.promise(server.kill)
      expect(yield* Fiber.join(fiber).pipe(Effect.timeout("5 seconds"))).toEqual([
        `ToolError(environment): MCP server "fixture", tool "slow": the connection was lost before the server answered; the next call reconnects`
      ])
    }).pipe(Effect.scoped), 30_000)
})
