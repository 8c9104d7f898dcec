/**
 * Every published entry point of @agentfx/ai loads under plain `node`, and an agent talks to a
 * Chat Completions server (a loopback one here, speaking the real wire format) through
 * `ChatCompletionsModel`. Prints what `run.sh` expects.
 */
import * as Ai from "@agentfx/ai"
import * as AiChatModel from "@agentfx/ai/AiChatModel"
import * as AiToolkit from "@agentfx/ai/AiToolkit"
import * as AnthropicChatModel from "@agentfx/ai/AnthropicChatModel"
import * as ChatCompletionsModel from "@agentfx/ai/ChatCompletionsModel"
import * as ModelRetry from "@agentfx/ai/ModelRetry"
import * as ModelTimeout from "@agentfx/ai/ModelTimeout"
import * as OpenAiChatModel from "@agentfx/ai/OpenAiChatModel"
import { Agent } from "@agentfx/core"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { getWeather } from "./index.js"

const subpaths = { AiChatModel, AiToolkit, AnthropicChatModel, ChatCompletionsModel, ModelRetry, ModelTimeout, OpenAiChatModel }

const completion = (message: object) => ({
  id: "c",
  object: "chat.completion",
  created: 1,
  model: "local",
  choices: [{ index: 0, finish_reason: "stop", message }]
})

/** Answers the first request with a tool call, the next with the tool's result. */
const server = Effect.acquireRelease(
  Effect.callback<Http.Server>((resume) => {
    let requests = 0
    const server = Http.createServer((req, res) => {
      let body = ""
      req.on("data", (chunk) => (body += chunk))
      req.on("end", () => {
        requests += 1
        const last = JSON.parse(body).messages.at(-1)
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify(completion(
          requests === 1
            ? { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: `{"city":"Lima"}` } }] }
            : { role: "assistant", content: `request ${requests}, the tool said ${last.content}` }
        )))
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) =>
    Effect.sync(() => {
      server.closeAllConnections()
      server.close()
    })
)

const program = Effect.gen(function*() {
  yield* Console.log(`@agentfx/ai exports: ${Object.keys(Ai).join(", ")}`)
  yield* Console.log(`subpaths agree: ${Object.entries(subpaths).every(([name, module]) => Ai[name as keyof typeof Ai] === module)}`)
  const internal = yield* Effect.promise(() => import("@agentfx/ai/internal/config" as string).then(() => "exported", (e) => e.code))
  yield* Console.log(`@agentfx/ai/internal/config: ${internal}`)
  const { port } = (yield* server).address() as AddressInfo
  const agent = Agent.make({ tools: [getWeather] })
  const exit = yield* Agent.run(agent, { input: "Weather in Lima?" }).pipe(
    Effect.provide(ChatCompletionsModel.layer({ baseUrl: `http://127.0.0.1:${port}/v1`, model: "local" }))
  )
  yield* Console.log(`${exit._tag}: ${exit._tag === "Completed" ? exit.text : exit.kind}`)
})

program.pipe(Effect.scoped, NodeRuntime.runMain)
