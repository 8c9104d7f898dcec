/**
 * MCP tools in an agent: the reference filesystem server
 * (`@modelcontextprotocol/server-filesystem`) runs as a child process on a temporary
 * directory, and its tools become agentfx tools. Reads run freely; every write needs approval:
 * the server marks `write_file`, `edit_file` and `move_file` destructive but `create_directory`
 * not, so the overrides ask for approval on all four (an override naming a tool the server does
 * not list fails the layer, so a renamed tool cannot slip through). The server process ends
 * with the layer's scope. Run: `pnpm tsx examples/mcp.ts`.
 */
import { Agent, Decision, ScriptedChatModel } from "@agentfx/core"
import { McpToolkit, McpTransport } from "@agentfx/mcp"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { modelFromEnv } from "./model.js"
import { showExit, traced } from "./trace.js"

const dir = mkdtempSync(join(tmpdir(), "agentfx-mcp-"))
writeFileSync(join(dir, "notes.txt"), "Release 1.2 ships on Friday.\nThe migration guide is not written yet.\n")

const server = join(dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/package.json")), "dist/index.js")

const Files = McpToolkit.layer({
  transport: McpTransport.stdio({ command: process.execPath, args: [server, dir], stderr: "ignore" }),
  prefix: "fs_",
  overrides: {
    read_text_file: { timeout: "5 seconds" },
    create_directory: { needsApproval: true },
    write_file: { needsApproval: true },
    edit_file: { needsApproval: true },
    move_file: { needsApproval: true }
  }
})

const script: ScriptedChatModel.Script = [
  ScriptedChatModel.toolCalls(
    { id: "call_1", name: "fs_list_directory", args: { path: dir } },
    { id: "call_2", name: "fs_read_text_file", args: { path: join(dir, "notes.txt") } }
  ),
  ScriptedChatModel.toolCalls(
    { id: "call_3", name: "fs_create_directory", args: { path: join(dir, "drafts") } },
    { id: "call_4", name: "fs_write_file", args: { path: join(dir, "todo.txt"), content: "- write the migration guide\n" } }
  ),
  ScriptedChatModel.text("Release 1.2 ships on Friday; the migration guide is missing, so todo.txt now says to write it, and drafts/ is ready for it.")
]

const program = Effect.gen(function*() {
  const files = yield* McpToolkit.McpToolkit
  const tools = yield* files.tools
  yield* Console.log(`MCP server ${files.server.name} ${files.server.version}: ${tools.length} tools`)
  yield* Console.log(`  free: ${tools.filter((tool) => !tool.needsApproval).map((tool) => tool.name).join(", ")}`)
  yield* Console.log(`  need approval: ${tools.filter((tool) => tool.needsApproval).map((tool) => tool.name).join(", ")}\n`)
  const agent = Agent.make({
    tools,
    system: `You manage the files in ${dir}. Read before you write.`
  })
  const input = "What do my notes say? Add a todo for whatever is missing."
  yield* Console.log(`user: ${input}\n`)
  let exit = yield* Agent.run(agent, { input })
  while (exit._tag === "Paused") {
    yield* showExit(exit)
    // an app asks a person here (see approval.ts); this example approves
    yield* Console.log(`\noperator: approving ${exit.pending.map((p) => p.call.name).join(", ")}\n`)
    exit = yield* Agent.resume(agent, exit.checkpoint, Decision.approveAll())
  }
  yield* showExit(exit)
  yield* Console.log(`\non disk, todo.txt: ${JSON.stringify(readFileSync(join(dir, "todo.txt"), "utf8"))}; drafts/ ${existsSync(join(dir, "drafts")) ? "exists" : "missing"}`)
}).pipe(
  Effect.provide(Files),
  Effect.provide(traced(modelFromEnv(script))),
  Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
)

NodeRuntime.runMain(program)
