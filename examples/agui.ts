/**
 * An AG-UI endpoint, and what travels on the wire: `pnpm tsx examples/agui.ts` starts
 * `AgUi.serve` on 127.0.0.1 with a payments agent (a scripted model, offline), then plays the
 * client's part with plain `fetch` — the requests `@ag-ui/client`'s `HttpAgent` makes — and
 * prints each AG-UI event it gets back: a user message, whose run pauses on a transfer (an
 * interrupt); the person's answer, approving it with an edited amount, which resumes the run to
 * its end; the same answer again, refused (409, with the sentence `HttpAgent` puts in its
 * error); and a reattach, which replays both AG-UI runs. The agentfx run's id is printed as `<run>`.
 */
import { type Message, ScriptedChatModel } from "@agentfx/core"
import { AgUi } from "@agentfx/ui-stream"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"
import { HttpServer } from "effect/http"
import { payments } from "./payments.js"
import * as Wire from "./wire.js"

/** A user message asks for a transfer; once it has a result, the model reports it. */
const model = ScriptedChatModel.layer((request) => {
  const last = request.messages.at(-1)
  if (last?._tag === "User") return { chunks: ["Sending ", "it now."], toolCalls: [{ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }] }
  const result = request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult").at(-1)
  return { chunks: ["Done: ", String(result?.content ?? "nothing"), "."] }
})

let runId = ""

/** One request, as `HttpAgent` makes it; its status, its lines (the agentfx run's id written `<run>`) and its events. */
const request = (origin: string, method: "POST" | "GET", path: string, body?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${origin}${path}`, {
      method,
      headers: { accept: "text/event-stream", ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    runId ||= /"parentMessageId":"(.+?)-1"/.exec(text)?.[1] ?? ""
    return Wire.reply(response.status, text, runId)
  })

const program = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  if (server.address._tag === "UnixPathAddress") return yield* Effect.die(new Error("the AG-UI endpoint is not on TCP"))
  const origin = `http://127.0.0.1:${server.address.port}`
  yield* Console.log(`AG-UI endpoint: POST ${origin}/api/agui, GET ${origin}/api/agui/:threadId/stream\n`)

  const ask = { threadId: "demo", runId: "run-1", messages: [{ id: "u1", role: "user", content: "Send 250 to Ada" }], tools: [], context: [], state: {} }
  const paused = yield* request(origin, "POST", "/api/agui", ask)
  yield* Wire.show("POST /api/agui (a user message)", paused)

  // what HttpAgent sends once the person answered: a new run of the thread, its resume answering the interrupt
  const [interrupt] = paused.events.at(-1).outcome.interrupts
  const answer = {
    ...ask,
    runId: "run-2",
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: { type: "approve", args: { to: "Ada", amount: 200 } } }]
  }
  yield* Wire.show("POST /api/agui (the answer: approved, for 200)", yield* request(origin, "POST", "/api/agui", answer))
  yield* Wire.show("POST /api/agui (the same answer again)", yield* request(origin, "POST", "/api/agui", { ...answer, runId: "run-3" }))
  yield* Wire.show("GET /api/agui/demo/stream (a reattach)", yield* request(origin, "GET", "/api/agui/demo/stream"))
})

program.pipe(Effect.provide(AgUi.serve({ agent: payments, port: 0 })), Effect.provide(model), NodeRuntime.runMain)
