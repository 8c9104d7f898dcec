/**
 * Context-window management: a conversation kept under a token limit. The agent reads a long
 * report two pages at a time; under `ContextWindow.summarize`, once a model call would pass
 * 1,200 tokens its older messages are summarized by a model call of their own (the last
 * messages are kept, a tool call always with its results); a second run trims instead
 * (`RunOptions.context`). The conversation in memory keeps every message, with a `Compaction`
 * entry where the view changed: `ContextWindow.view` reads back what the model was last sent.
 * Run: `pnpm tsx examples/context.ts`.
 */
import type { AgentEvent, ChatModel, Message } from "@agentfx/core"
import { Agent, ChatMemory, ContextWindow, ScriptedChatModel, Tool } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Schema, Stream } from "effect"
import { modelFromEnv } from "./model.js"

const pages = 10

const readPage = Tool.make("read_page", {
  description: `Reads one page of the quarterly report (pages 0 to ${pages - 1})`,
  parameters: Schema.Struct({ page: Schema.Number }),
  success: Schema.String,
  handler: ({ page }) =>
    Effect.succeed(`Page ${page}: revenue by region, ${"with a table of figures and the notes under it, ".repeat(8)}and one change: item ${page} moved.`)
})

/** Offline: a summary when asked for one; else the next two pages, then the answer. */
const script: ScriptedChatModel.Script = (request) => {
  if (request.system === ContextWindow.defaultInstructions) {
    const transcript = (request.messages[0] as Message.UserMessage).text
    const read = [...transcript.matchAll(/\[result of read_page \(page(\d+)\)\]/g)].map((match) => match[1])
    return ScriptedChatModel.text(`The user asked what changed in the quarterly report. Pages ${read.join(", ")} were read: one item moved per page.`)
  }
  const asked = request.messages.flatMap((m) => m._tag === "Assistant" ? m.toolCalls.map((call) => (call.args as { page: number }).page) : [])
  const next = asked.length === 0 ? 0 : Math.max(...asked) + 1
  return next >= pages
    ? ScriptedChatModel.text(`Ten items moved, one per page; nothing else changed.`)
    : ScriptedChatModel.toolCalls({ id: `page${next}`, name: "read_page", args: { page: next } }, { id: `page${next + 1}`, name: "read_page", args: { page: next + 1 } })
}

const agent = Agent.make({
  tools: [readPage],
  system: "You read reports page by page with read_page, two pages at a time, then say what changed in one sentence.",
  context: ContextWindow.summarize({ maxTokens: 1_200, keepLast: 2 })
})

const line = (event: AgentEvent.AgentEvent): string | undefined => {
  switch (event._tag) {
    case "ModelCalled":
      return event.purpose === "compaction"
        ? `  summary call: the older messages, as one transcript`
        : `model call #${event.iteration}: sent ${event.messages} message${event.messages === 1 ? "" : "s"}`
    case "ContextCompacted":
      return `  compacted: the first ${event.replaces} entries ${event.summarized ? "replaced by the summary" : "left out"} (about ${event.tokensBefore} → ${event.tokensAfter} tokens)`
    case "ToolStarted":
      return `  → ${event.toolName}(${JSON.stringify(event.args)})`
    default:
      return undefined
  }
}

const show = (messages: ReadonlyArray<ChatModel.ModelMessage>) =>
  Effect.forEach(messages, (m) => {
    const text = m._tag === "User" || m._tag === "System" ? m.text
      : m._tag === "Assistant" ? [m.text, ...m.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.args)})`)].filter((t) => t !== "").join(" · ")
      : `result of ${m.toolName} ${m.callId}`
    const line = text.replace(/\s*\n+\s*/g, " / ")
    return Console.log(`  [${m._tag}] ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`)
  })

const turn = (input: string, conversationId: string, context?: ContextWindow.Policy) =>
  Effect.gen(function*() {
    yield* Console.log(`\nuser: ${input}`)
    const events = yield* Agent.stream(agent, { input, conversationId, ...(context === undefined ? {} : { context }) }).pipe(
      Stream.tap((event) => {
        const text = line(event)
        return text === undefined ? Effect.void : Console.log(text)
      }),
      Stream.runCollect
    )
    const last = [...events].at(-1)
    if (last?._tag === "RunCompleted") yield* Console.log(`answer: ${last.exit.text}`)
    const memory = yield* Effect.flatMap(ChatMemory.ChatMemory, (m) => m.get(conversationId))
    const entries = memory.filter((m) => m._tag === "Compaction").length
    yield* Console.log(`memory: ${memory.length} entries kept (${entries} compaction ${entries === 1 ? "entry" : "entries"}); what the model was last sent, read back with ContextWindow.view:`)
    yield* show(ContextWindow.view(memory.slice(0, memory.length - 1)))
  })

const program = Effect.gen(function*() {
  yield* Console.log("agent: summarize above 1,200 tokens, keep the last 2 messages (with their tool call)")
  yield* turn("What changed in the quarterly report?", "report-1")
  yield* Console.log("\nthe same question, this run trimming instead (RunOptions.context)")
  yield* turn("What changed in the quarterly report?", "report-2", ContextWindow.trim({ maxTokens: 1_200 }))
}).pipe(Effect.provide(modelFromEnv(script)))

NodeRuntime.runMain(program)
