/**
 * @agentfx/mcp under plain `node`: an MCP server's tool (`mcp-server.ts`, a child process over
 * stdio) becomes an agentfx tool, and an agent on the scripted model calls it. Prints what
 * `run.sh` expects.
 */
import { Agent, ScriptedChatModel } from "@agentfx/core"
import type { Message } from "@agentfx/core"
import { McpToolkit, McpTransport } from "@agentfx/mcp"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"

const Shouter = McpToolkit.layer({
  transport: McpTransport.stdio({ command: process.execPath, args: [fileURLToPath(new URL("./mcp-server.js", import.meta.url))] })
})

const script: ScriptedChatModel.Script = [
  ScriptedChatModel.toolCalls({ id: "call_1", name: "shout", args: { text: "hello" } }),
  (request) => ({
    text: request.messages
      .filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult")
      .map((m) => `${m.toolName}: ${JSON.stringify(m.content)}`)
      .join("; ")
  })
]

const program = Effect.gen(function*() {
  const shouter = yield* McpToolkit.McpToolkit
  const tools = yield* shouter.tools
  yield* Console.log(`${shouter.server.name} ${shouter.server.version}: ${tools.map((tool) => `${tool.name} (needs approval: ${tool.needsApproval})`).join(", ")}`)
  const exit = yield* Agent.run(Agent.make({ tools }), { input: "Shout hello." })
  yield* Console.log(`${exit._tag}: ${exit._tag === "Completed" ? exit.text : exit.kind}`)
})

program.pipe(Effect.provide(Layer.merge(Shouter, ScriptedChatModel.layer(script))), NodeRuntime.runMain)
