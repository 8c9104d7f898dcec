/**
 * The chat and AG-UI endpoints served alone, as the inbox is: the address logged once they
 * listen, and a taken port one sentence (`Listening.PortInUse`), not a stack trace.
 */
import { ChatMemory, Listening, RunStore, ScriptedChatModel } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Effect, Layer, Logger } from "effect"
import { HttpServer } from "effect/http"
import * as Net from "node:net"
import { AgUi, Chat } from "../src/index.js"
import { payments } from "./fixtures.js"

const stores = Layer.mergeAll(RunStore.layerMemory(), ChatMemory.layerMemory, ScriptedChatModel.layer([ScriptedChatModel.text("hi")]))

const endpoints = [
  { name: "Chat endpoint", server: "the chat endpoint", path: "/api/chat", serve: (port?: number) => Chat.serve({ agent: payments().agent, ...(port === undefined ? {} : { port }) }) },
  { name: "AG-UI endpoint", server: "the AG-UI endpoint", path: "/api/agui", serve: (port?: number) => AgUi.serve({ agent: payments().agent, ...(port === undefined ? {} : { port }) }) }
]

/** `body` with what it logs collected, as `LEVEL message`. */
const withLogs = <A, E, R>(body: (logged: ReadonlyArray<string>) => Effect.Effect<A, E, R>) => {
  const logged: Array<string> = []
  const logger = Logger.make(({ cause, logLevel, message }) => {
    logged.push(`${logLevel.toUpperCase()} ${String(message)}${cause.reasons.length === 0 ? "" : ` ${Cause.pretty(cause)}`}`)
  })
  return body(logged).pipe(Effect.provide(Logger.layer([logger])))
}

const takenPort = Effect.acquireRelease(
  Effect.callback<Net.Server>((resume) => {
    const server = Net.createServer().listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
).pipe(Effect.map((server) => (server.address() as Net.AddressInfo).port))

describe.each(endpoints)("$name served alone", (endpoint) => {
  it.live("logs its URL once it listens, and nothing else", () =>
    withLogs((logged) =>
      Effect.gen(function*() {
        const context = yield* Layer.build(endpoint.serve().pipe(Layer.provide(stores)))
        const address = Context.get(context, HttpServer.HttpServer).address
        const port = address._tag === "UnixPathAddress" ? 0 : address.port
        expect(logged).toEqual([`INFO ${endpoint.name} at http://127.0.0.1:${port}${endpoint.path}`])
      })
    ).pipe(Effect.scoped))

  it.live("a port that is taken fails it with PortInUse, naming the port and what to do", () =>
    Effect.gen(function*() {
      const port = yield* takenPort
      const error = yield* Effect.flip(Layer.build(endpoint.serve(port).pipe(Layer.provide(stores))))
      expect(error).toBeInstanceOf(Listening.PortInUse)
      expect(error.message).toBe(`Port ${port} of 127.0.0.1 is in use: stop what listens there, or serve ${endpoint.server} on another port (0 picks a free one)`)
    }).pipe(Effect.scoped))
})

describe("Listening.url", () => {
  it("a server on every address is reached on loopback; IPv6 is bracketed; a Unix socket is http+unix", () => {
    expect(Listening.url("0.0.0.0", { _tag: "InetAddressV4", port: 80 }, "/inbox")).toBe("http://127.0.0.1:80/inbox")
    expect(Listening.url("::", { _tag: "InetAddressV6", port: 81 }, "/api/chat")).toBe("http://[::1]:81/api/chat")
    expect(Listening.url("localhost", { _tag: "InetAddressV4", port: 82 }, "/api/agui")).toBe("http://localhost:82/api/agui")
    expect(Listening.url("127.0.0.1", { _tag: "UnixPathAddress", path: "/tmp/a b.sock" }, "/inbox")).toBe("http+unix://%2Ftmp%2Fa%20b.sock/inbox")
  })
})
