/**
 * A chat endpoint for the AI SDK's `useChat`, and what travels on the wire: `pnpm tsx
 * examples/chat.ts` starts `Chat.serve` on 127.0.0.1 with a payments agent (a scripted model,
 * offline), then plays the browser's part with plain `fetch` — the requests `useChat` makes
 * with its `DefaultChatTransport` — and prints each UI message stream event it gets back:
 * a user message, whose run pauses on a transfer; the chat's thread as a page opened again loads
 * it (`useChat`'s messages, the approval request last); the person's approval, which resumes it
 * to its end; the same approval again, refused (409, with the sentence `useChat` shows as its
 * error); and a reattach (`useChat`'s `resume`), which replays the whole message. Run ids are
 * printed as `<run>`.
 *
 * `pnpm tsx examples/chat.ts --cluster` serves the same endpoint with its runs driven on a
 * cluster (`ClusterChat.driver()`): an embedded runner (`ClusterSqlite`, on a file in a temporary
 * directory) drives each turn and each answer, and the endpoint streams its events as the runner
 * emits them. What travels on the wire is the same, but for the pause's revision in approval ids
 * (`<run>:2:t1`: a durable store records the run's start as revision 1).
 */
import { AgentCluster } from "@agentfx/cluster"
import * as ClusterChat from "@agentfx/cluster/ClusterChat"
import * as ClusterSqlite from "@agentfx/cluster/ClusterSqlite"
import { type Message, ScriptedChatModel } from "@agentfx/core"
import { Chat } from "@agentfx/ui-stream"
import { HttpServer } from "effect/http"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { payments } from "./payments.js"
import * as Wire from "./wire.js"

/** A user message asks for a transfer; once it has a result, the model reports it. */
const model = ScriptedChatModel.layer((request) => {
  const last = request.messages.at(-1)
  if (last?._tag === "User") {
    return { chunks: ["Sending ", "it now."], toolCalls: [{ id: "t1", name: "transfer", args: { to: "Ada", amount: Number(/\d+/.exec(last.text)?.[0] ?? 250) } }] }
  }
  const result = request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult").at(-1)
  return { chunks: ["Done: ", String(result?.content ?? "nothing"), "."] }
})

let runId = ""

/** One request, as `useChat`'s transport makes it; its status, its lines (the run's id written `<run>`) and its events. */
const request = (origin: string, method: "POST" | "GET", path: string, body?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${origin}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    })
    const received = await response.text()
    runId ||= /"messageId":"([^"]+)"/.exec(received)?.[1] ?? ""
    // a page of the thread: a message a line
    const text = path.endsWith("/messages") ? (JSON.parse(received).messages as Array<unknown>).map((message) => JSON.stringify(message)).join("\n") : received
    return Wire.reply(response.status, text, runId)
  })

const program = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  if (server.address._tag === "UnixPathAddress") return yield* Effect.die(new Error("the chat endpoint is not on TCP"))
  const origin = `http://127.0.0.1:${server.address.port}`
  yield* Console.log(`chat endpoint: POST ${origin}/api/chat, GET ${origin}/api/chat/:chatId/stream, GET ${origin}/api/chat/:chatId/messages\n`)

  const ask = { id: "demo", messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "Send 250 to Ada" }] }], trigger: "submit-message" }
  const paused = yield* request(origin, "POST", "/api/chat", ask)
  yield* Wire.show("POST /api/chat (a user message)", paused)
  // a page opened again: the thread, its pending approval request last (pass them as useChat's messages)
  yield* Wire.show("GET /api/chat/demo/messages (the thread)", yield* request(origin, "GET", "/api/chat/demo/messages"))

  // what useChat sends once the person approved: its messages, the tool part answered
  const asked = paused.events.find((event) => event.type === "tool-approval-request")
  const answered = {
    id: "demo",
    trigger: "submit-message",
    messageId: runId,
    messages: [...ask.messages, {
      id: runId,
      role: "assistant",
      parts: [
        { type: "step-start" },
        { type: "text", text: "Sending it now.", state: "done" },
        { type: "tool-transfer", toolCallId: "t1", state: "approval-responded", input: { to: "Ada", amount: 250 }, approval: { id: asked.approvalId, approved: true } }
      ]
    }]
  }
  yield* Wire.show("POST /api/chat (the approval)", yield* request(origin, "POST", "/api/chat", answered))
  yield* Wire.show("POST /api/chat (the same approval again)", yield* request(origin, "POST", "/api/chat", answered))
  yield* Wire.show("GET /api/chat/demo/stream (a reattach)", yield* request(origin, "GET", "/api/chat/demo/stream"))
})

/** The endpoint with its runs on a cluster: the payments agent's runner, embedded on a SQLite file of a temporary directory, removed at the end. */
const onCluster = Layer.unwrap(Effect.gen(function*() {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "agentfx-chat-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  const driver = ClusterChat.driver()
  return Layer.unwrap(Effect.map(driver, (driver) => Chat.serve({ agent: payments, driver, port: 0 }))).pipe(
    Layer.provideMerge(AgentCluster.runner(AgentCluster.make(payments)).pipe(Layer.provide(model))),
    Layer.provide(ClusterSqlite.layer({ filename: join(dir, "cluster.db") }))
  )
}))

const endpoint = process.argv.includes("--cluster") ? onCluster : Chat.serve({ agent: payments, port: 0 }).pipe(Layer.provide(model))

program.pipe(Effect.provide(endpoint), NodeRuntime.runMain)
