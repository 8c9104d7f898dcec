/**
 * `@agentfx/ui-stream` under plain `node`: the chat endpoint served on a free port of
 * 127.0.0.1 over the SQLite store; a user message (the run pauses on a transfer), its approval
 * (the run completes), the same approval again (refused: the sentence `useChat` shows, then
 * the typed refusal a JSON client asks for), read as `useChat` sends them. Prints
 * the line it logs once it listens, the status, the protocol header and each chunk's type. Then
 * the server stops.
 */
import { ScriptedChatModel } from "@agentfx/core"
import { Chat } from "@agentfx/ui-stream"
import { HttpServer } from "effect/http"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { payments, script } from "./payments.js"
import { PrintedLogs } from "./printedLogs.js"
import { TempStore } from "./tempStore.js"

const post = (origin: string, body: unknown, accept = "*/*") =>
  Effect.promise(async () => {
    const response = await fetch(`${origin}/api/chat`, { method: "POST", headers: { "content-type": "application/json", accept }, body: JSON.stringify(body) })
    const text = await response.text()
    const chunks = text.split("\n").filter((line) => line.startsWith("data: {")).map((line) => JSON.parse(line.slice(6)))
    return { status: response.status, header: response.headers.get("x-vercel-ai-ui-message-stream"), type: response.headers.get("content-type"), text, chunks }
  })

const program = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  if (server.address._tag === "UnixPathAddress") return yield* Effect.die(new Error("the chat endpoint is not on TCP"))
  const origin = `http://127.0.0.1:${server.address.port}`
  const ask = { id: "chat-1", messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "Pay ada 500." }] }] }
  const paused = yield* post(origin, ask)
  yield* Console.log(`a user message: ${paused.status} (${paused.header}) ${paused.chunks.map((c) => c.type).join(", ")}`)
  const request = paused.chunks.find((c) => c.type === "tool-approval-request")
  const runId = paused.chunks[0].messageId
  const answered = {
    id: "chat-1",
    messages: [...ask.messages, {
      id: runId,
      role: "assistant",
      parts: [{ type: "tool-transfer", toolCallId: request.toolCallId, state: "approval-responded", input: {}, approval: { id: request.approvalId, approved: true } }]
    }]
  }
  const done = yield* post(origin, answered)
  yield* Console.log(`its approval: ${done.status} ${done.chunks.map((c) => c.type === "text-delta" ? `text-delta "${c.delta}"` : c.type).join(", ")}`)
  const again = yield* post(origin, answered)
  yield* Console.log(`the same approval again: ${again.status} ${again.type} "${again.text.replace(runId, "<run>")}"`)
  const asJson = yield* post(origin, answered, "application/json")
  yield* Console.log(`the same approval, asking for JSON: ${asJson.status} ${JSON.parse(asJson.text)._tag}`)
  yield* Console.log("stopping the chat endpoint")
})

program.pipe(
  Effect.provide(Chat.serve({ agent: payments, port: 0 })),
  Effect.provide(ScriptedChatModel.layer(script)),
  Effect.provide(TempStore("chat")),
  Effect.provide(PrintedLogs),
  NodeRuntime.runMain
)
