/**
 * Environment errors: a tool fails because something outside needs fixing (here, a missing
 * directory). With `onEnvironmentError: "pause"` the run pauses instead of handing the
 * error to the model; once the environment is fixed, `Decision.retry()` re-runs only the
 * failed calls. Run: `pnpm tsx examples/environment.ts`.
 */
import { Agent, Decision, ScriptedChatModel, Tool, ToolError } from "@agentfx/core"
import type { Message } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Schema } from "effect"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { showExit, traced, tracedTool } from "./trace.js"
import { modelFromEnv } from "./model.js"

const script: ScriptedChatModel.Script = [
  ScriptedChatModel.toolCalls({ id: "call_1", name: "save_report", args: { name: "q3.txt", text: "Revenue up 12%." } }),
  (request) => {
    const result = request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult").at(-1)
    return ScriptedChatModel.text(`Report: ${result?.content}.`)
  }
]

const program = Effect.gen(function*() {
  const root = yield* Effect.acquireRelease(
    Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "agentfx-"))),
    (dir) => Effect.promise(() => Fs.rm(dir, { recursive: true, force: true }))
  )
  const reports = Path.join(root, "reports")
  const saveReport = Tool.make("save_report", {
    description: "Saves a report as a file in the reports directory",
    parameters: Schema.Struct({ name: Schema.String, text: Schema.String }),
    success: Schema.String,
    handler: ({ name, text }, context) =>
      tracedTool(
        context,
        Effect.tryPromise({
          try: () => Fs.writeFile(Path.join(reports, Path.basename(name)), text),
          catch: (error) =>
            (error as NodeJS.ErrnoException).code === "ENOENT"
              ? ToolError.environment("the reports directory does not exist; an operator must create it")
              : ToolError.transient(String(error))
        }).pipe(Effect.as(`saved ${Path.basename(name)} (${text.length} bytes)`))
      )
  })
  const agent = Agent.make({ tools: [saveReport], onEnvironmentError: "pause" })
  const input = "Save the Q3 report."
  yield* Console.log(`user: ${input}\n`)
  let exit = yield* Agent.run(agent, { input })
  while (exit._tag === "Paused") {
    yield* showExit(exit)
    yield* Console.log(`\noperator: creating ${Path.relative(root, reports)}/ and retrying the failed call\n`)
    yield* Effect.promise(() => Fs.mkdir(reports, { recursive: true }))
    exit = yield* Agent.resume(agent, exit.checkpoint, Decision.retry())
  }
  yield* showExit(exit)
  yield* Console.log(`\non disk: ${(yield* Effect.promise(() => Fs.readdir(reports))).join(", ")}`)
}).pipe(Effect.scoped, Effect.provide(traced(modelFromEnv(script))))

NodeRuntime.runMain(program)
