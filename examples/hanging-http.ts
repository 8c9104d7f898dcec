/**
 * A tool calling an HTTP service that never answers: its declared timeout interrupts the
 * handler, `fetch` is aborted through the `AbortSignal` of `Effect.tryPromise`, and the
 * service sees the connection close. The model is told the call timed out.
 * Run: `pnpm tsx examples/hanging-http.ts`.
 */
import { Agent, ScriptedChatModel, Tool, ToolError } from "@agentfx/core"
import type { Message } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Schema } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { log, showExit, traced, tracedTool } from "./trace.js"
import { modelFromEnv } from "./model.js"

/** A status service on 127.0.0.1 that accepts requests and never answers. */
const hangingService = Effect.acquireRelease(
  Effect.callback<{ readonly url: string; readonly server: Http.Server }>((resume) => {
    const server = Http.createServer((req) => {
      const began = performance.now()
      Effect.runFork(log(`  service: got ${req.method} ${req.url}; not answering`))
      req.socket.once("close", () => {
        Effect.runFork(log(`  service: the client closed the connection after ${Math.round(performance.now() - began)} ms`))
      })
    })
    server.listen(0, "127.0.0.1", () => {
      resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }))
    })
  }),
  ({ server }) => Effect.sync(() => server.closeAllConnections()).pipe(Effect.andThen(Effect.callback<void>((resume) => {
    server.close(() => resume(Effect.void))
  })))
)

const script: ScriptedChatModel.Script = [
  ScriptedChatModel.toolCalls({ id: "call_1", name: "check_status", args: { system: "billing" } }),
  (request) => {
    const result = request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult").at(-1)
    return ScriptedChatModel.text(`I could not check billing: ${result?.content}.`)
  }
]

const program = Effect.gen(function*() {
  const service = yield* hangingService
  const checkStatus = Tool.make("check_status", {
    description: "Checks whether a system is up",
    parameters: Schema.Struct({ system: Schema.String }),
    success: Schema.String,
    timeout: "300 millis",
    handler: ({ system }, context) =>
      tracedTool(
        context,
        Effect.tryPromise({
          // the signal is aborted when the fiber is interrupted (here: by the timeout)
          try: (signal) => fetch(`${service.url}/status/${encodeURIComponent(system)}`, { signal }).then((r) => r.text()),
          catch: (error) => ToolError.transient(`status service unreachable: ${String(error)}`)
        })
      )
  })
  const agent = Agent.make({ tools: [checkStatus] })
  const input = "Is billing up?"
  yield* Console.log(`user: ${input}\n`)
  const exit = yield* Agent.run(agent, { input })
  yield* Effect.sleep("50 millis") // let the service report the closed connection
  yield* showExit(exit)
}).pipe(Effect.scoped, Effect.provide(traced(modelFromEnv(script))))

NodeRuntime.runMain(program)
