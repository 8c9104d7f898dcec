/**
 * Images and files: a person sends text with an image and a document (`Agent.run({ input })`
 * takes parts), a tool returns a chart beside its value (`Tool.output(value, { files })`), and
 * each reaches the model in its API's own shape — or, offline, the scripted model reads them
 * from its requests. A file beyond the agent's `limits.fileBytes` is refused before anything
 * runs. Run: `pnpm tsx examples/files.ts` (a real model with `OPENAI_API_KEY`,
 * `ANTHROPIC_API_KEY` or `AGENTFX_BASE_URL` + `AGENTFX_MODEL`).
 */
import { Agent, type ChatModel, type Message, Part, ScriptedChatModel, Tool } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Schema } from "effect"
import { modelFromEnv } from "./model.js"
import { showExit, traced } from "./trace.js"

/** A 1×1 PNG, as a photo from the person's camera would come: bytes. */
const photo = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64")

const chart = Tool.make("sales_chart", {
  description: "Draws the sales of a quarter as a PNG chart",
  parameters: Schema.Struct({ quarter: Schema.String }),
  success: Schema.String,
  handler: ({ quarter }) =>
    Effect.succeed(Tool.output(`the sales chart of ${quarter}`, { files: [Part.image({ name: `sales-${quarter}.png`, data: photo })] }))
})

/** The names of the files a request's messages hold: what the model was sent. */
const filesIn = (request: ChatModel.ChatRequest) =>
  request.messages.flatMap((message: Message.Message) =>
    (message._tag === "User" ? message.parts ?? [] : message._tag === "ToolResult" ? message.files ?? [] : [])
      .flatMap((part) => (part._tag === "File" ? [part.name ?? part.mediaType] : []))
  )

/** Offline: the model says which files it was sent, asks for the chart, then looks at it. */
const script: ScriptedChatModel.Script = [
  (request) => ({ text: `I was sent: ${filesIn(request).join("; ")}.`, toolCalls: [{ id: "call_1", name: "sales_chart", args: { quarter: "Q3" } }] }),
  (request) => ScriptedChatModel.text(`Now I also have ${filesIn(request).at(-1)}: the photo matches the chart's trend.`)
]

const agent = Agent.make({ tools: [chart], system: "You compare pictures and documents.", limits: { fileBytes: 1_000_000 } })

const program = Effect.gen(function*() {
  const input: ReadonlyArray<Part.InputPart> = [
    Part.text("Does this photo match our sales report?"),
    Part.image({ name: "whiteboard.png", data: photo }),
    Part.file({ mediaType: "application/pdf", name: "report.pdf", url: "https://example.com/q3-report.pdf" })
  ]
  yield* Console.log(`user: ${Part.textOf(input)}`)
  for (const part of input) if (part._tag === "File") yield* Console.log(`  with ${Part.describe(part)}`)
  yield* Console.log("")
  yield* showExit(yield* Agent.run(agent, { input }))

  yield* Console.log("\nA photo larger than the agent's limits.fileBytes (1000000):")
  const refused = yield* Effect.flip(Agent.run(agent, { input: [Part.image({ name: "huge.png", data: Buffer.alloc(2_000_000) })] }))
  yield* Console.log(`  ${refused._tag}: ${refused.message}`)
}).pipe(Effect.provide(traced(modelFromEnv(script))))

NodeRuntime.runMain(program)
