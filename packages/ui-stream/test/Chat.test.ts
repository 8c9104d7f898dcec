/**
 * The chat endpoint read by the AI SDK's own client, of each major it supports (`ai` 6 and 7):
 * `DefaultChatTransport` and its parser, `readUIMessageStream`, and `AbstractChat` — what
 * `useChat` runs — on a real server on 127.0.0.1. Every test runs on both.
 */
import { Agent, ContextWindow, Message, Part, ScriptedChatModel, Tool } from "@agentfx/core"
import type { UIMessage } from "ai"
import { Effect, Schema } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { type Client, clients, chunks, latest, mailer, payments, post, script, serve as serveWith, type Served } from "./fixtures.js"

let served: Served | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

const user = (text: string, id = "u1"): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] })

const send = (server: Served, chatId: string, messages: Array<UIMessage>, abortSignal?: AbortSignal) =>
  server.transport.sendMessages({ chatId, messages, trigger: "submit-message", messageId: undefined, abortSignal })

describe.each(clients)("Chat, read by $name", (client: Client) => {
  const serve = (agent: Parameters<typeof serveWith>[0], model: Parameters<typeof serveWith>[1]) => serveWith(agent, model, client)
  const NodeChat = client.Chat

  /** The last state of the message a stream builds. */
  const lastMessage = async (stream: ReadableStream<any>, message?: UIMessage) => {
    let last: UIMessage | undefined
    for await (const m of client.readUIMessageStream({ stream, ...(message === undefined ? {} : { message }) })) last = m
    return last!
  }

  it("text deltas arrive as text parts in order; tool calls and their results appear, step by step", async () => {
    const { agent } = payments()
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls({ id: "b1", name: "balance", args: {} }),
      { chunks: ["You have ", "1000", " on the account."] }
    ))
    const response = await fetch(`${served.origin}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "c1", messages: [user("What is my balance?")], trigger: "submit-message" })
    })
    expect([response.status, response.status === 200 ? "" : await response.clone().text()]).toEqual([200, ""])
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1")
    const text = await response.text()
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true)

    const all = await chunks(await send(served, "c2", [user("What is my balance?")]))
    const runId = (all[0] as { messageId: string }).messageId
    expect(all).toEqual([
      { type: "start", messageId: runId },
      { type: "start-step" },
      { type: "tool-input-available", toolCallId: "b1", toolName: "balance", input: {} },
      { type: "tool-output-available", toolCallId: "b1", output: 1000 },
      { type: "finish-step" },
      { type: "start-step" },
      { type: "text-start", id: "text-2" },
      { type: "text-delta", id: "text-2", delta: "You have " },
      { type: "text-delta", id: "text-2", delta: "1000" },
      { type: "text-delta", id: "text-2", delta: " on the account." },
      { type: "text-end", id: "text-2" },
      { type: "finish-step" },
      { type: "finish", finishReason: "stop" }
    ])
    const message = await lastMessage(await send(served, "c3", [user("And now?")]))
    expect(message.role).toBe("assistant")
    expect(message.parts.map((p) => p.type)).toEqual(["step-start", "tool-balance", "step-start", "text"])
    expect(message.parts[1]).toMatchObject({ state: "output-available", input: {}, output: 1000 })
    expect(message.parts[3]).toMatchObject({ type: "text", text: "You have 1000 on the account.", state: "done" })
  })

  it("the model's readable reasoning arrives as a reasoning part once its answer is complete; encrypted reasoning is not sent", async () => {
    const { agent } = payments()
    served = await serve(agent, ScriptedChatModel.layer((request) =>
      request.messages.length === 1
        ? { text: "Sunny.", reasoning: [{ _tag: "Reasoning", provider: "anthropic", text: "Oslo in June: sunny.", data: { type: "thinking" } }] }
        : { text: "Still sunny.", reasoning: [{ _tag: "Reasoning", provider: "openai", text: "", data: { encrypted_content: "gAAAA" } }] }
    ))
    const first = await chunks(await send(served, "c-reasoning", [user("Weather in Oslo?")]))
    expect(first.slice(1)).toEqual([
      { type: "start-step" },
      { type: "text-start", id: "text-1" },
      { type: "text-delta", id: "text-1", delta: "Sunny." },
      { type: "text-end", id: "text-1" },
      { type: "reasoning-start", id: "reasoning-1" },
      { type: "reasoning-delta", id: "reasoning-1", delta: "Oslo in June: sunny." },
      { type: "reasoning-end", id: "reasoning-1" },
      { type: "finish-step" },
      { type: "finish", finishReason: "stop" }
    ])
    const message = await lastMessage(await send(served, "c-reasoning-2", [user("Weather in Oslo?")]))
    expect(message.parts.map((p) => p.type)).toEqual(["step-start", "text", "reasoning"])
    expect(message.parts[2]).toMatchObject({ type: "reasoning", text: "Oslo in June: sunny.", state: "done" })
    const later = await chunks(await send(served, "c-reasoning", [user("Weather in Oslo?"), user("And tomorrow?", "u2")]))
    expect(later.filter((c: any) => c.type.startsWith("reasoning"))).toEqual([])
  })

  it("a context policy's summary call opens no step and shows no text: the message holds the answer's steps only", async () => {
    const report = Tool.make("report", {
      description: "A long report",
      parameters: Schema.Struct({}),
      success: Schema.String,
      handler: () => Effect.succeed("figures ".repeat(150))
    })
    const agent = Agent.make({ name: "analyst", tools: [report], context: ContextWindow.summarize({ maxTokens: 600, keepLast: 0 }) })
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls({ id: "r1", name: "report", args: {} }),
      ScriptedChatModel.toolCalls({ id: "r2", name: "report", args: {} }),
      { chunks: ["The first ", "report was read."] }, // the summary call's answer
      { chunks: ["Both ", "reports read."] }
    ))
    const all = await chunks(await send(served, "c-compact", [user("Read the reports")]))
    expect(all.slice(1).map((chunk) => "delta" in chunk ? `${chunk.type} ${chunk.delta}` : chunk.type)).toEqual([
      "start-step",
      "tool-input-available",
      "tool-output-available",
      "finish-step",
      "start-step",
      "tool-input-available",
      "tool-output-available",
      "finish-step",
      "start-step",
      "text-start",
      "text-delta Both ",
      "text-delta reports read.",
      "text-end",
      "finish-step",
      "finish"
    ])
  })

  it("a pause arrives as an approval request; the client's approval resumes the run, and its message completes", async () => {
    const { agent, executed } = payments()
    served = await serve(agent, script(
      { text: "Sending.", toolCalls: [{ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }] },
      ScriptedChatModel.text("Sent 250 to Ada.")
    ))
    const chat = new NodeChat({ id: "c-approve", transport: served.transport })
    await chat.sendMessage({ text: "Send 250 to Ada" })
    expect(chat.status).toBe("ready")
    const paused = chat.messages.at(-1)!
    expect(paused.role).toBe("assistant")
    expect(paused.parts.map((p) => p.type)).toEqual(["step-start", "text", "tool-transfer"])
    const part = paused.parts[2] as any
    expect(part).toMatchObject({ toolCallId: "t1", state: "approval-requested", input: { to: "Ada", amount: 250 } })
    // why the gate asked: ai 7 keeps the request's reason, ai 6 reads past it
    expect(part.approval.requestReason).toBe(client === latest ? "the needsApproval rule of transfer asked for approval of these arguments" : undefined)
    expect(executed).toEqual([])

    await chat.addToolApprovalResponse({ id: part.approval.id, approved: true })
    await chat.sendMessage()
    expect(chat.error).toBeUndefined()
    expect(executed).toEqual(["Ada 250"])
    expect(chat.messages.length).toBe(2)
    const done = chat.messages.at(-1)!
    expect(done.id).toBe(paused.id)
    expect(done.parts.map((p) => p.type)).toEqual(["step-start", "text", "tool-transfer", "step-start", "text"])
    expect(done.parts[2]).toMatchObject({ state: "output-available", output: "sent 250 to Ada" })
    expect(done.parts[4]).toMatchObject({ text: "Sent 250 to Ada." })
    const record = await Effect.runPromise(served.store.finished(paused.id))
    expect(record).toMatchObject({ _tag: "Some", value: { status: "completed" } })
  })

  it("a second approval of one pause is refused with 409 AlreadyDecided, and runs nothing", async () => {
    const { agent, executed } = payments()
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }),
      ScriptedChatModel.text("Sent.")
    ))
    const chat = new NodeChat({ id: "c-twice", transport: served.transport })
    await chat.sendMessage({ text: "Send 250 to Ada" })
    const part = chat.messages.at(-1)!.parts.find((p) => p.type === "tool-transfer") as any
    await chat.addToolApprovalResponse({ id: part.approval.id, approved: true })
    const answered = structuredClone(chat.messages)
    // two tabs send the same approval at once: one resumes the run, the other is refused
    const [first, second] = await Promise.all([
      send(served, "c-twice", answered).then(chunks, (error: Error) => error),
      send(served, "c-twice", answered).then(chunks, (error: Error) => error)
    ])
    const refused = [first, second].filter((r): r is Error => r instanceof Error)
    expect(refused.length).toBe(1)
    // the transport's error is the refusal's sentence (its body as text), which useChat shows
    const runId = chat.messages.at(-1)!.id
    expect(refused[0]!.message).toMatch(new RegExp(`^Run ${runId} was already decided by local: it is (running|completed) now$`))
    expect(executed).toEqual(["Ada 250"])

    // later, the same approval again: the run completed
    const late = await post(served.origin, { id: "c-twice", messages: answered, trigger: "submit-message" })
    expect(late.status).toBe(409)
    expect(JSON.parse(late.body)).toMatchObject({ _tag: "AlreadyDecided", status: "completed" })
    expect(executed).toEqual(["Ada 250"])

    // and the AI SDK's chat shows the refusal as its error: a sentence, not JSON
    await chat.sendMessage()
    expect(chat.status).toBe("error")
    expect(chat.error!.message).toBe(`Run ${runId} was already decided by local: it is completed now`)
  })

  it("a denied call is not run: its part is output-denied, and the model is told why", async () => {
    const { agent, executed } = payments()
    let told: unknown
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Mallory", amount: 900 } }),
      (request) => {
        told = request.messages.at(-1)
        return ScriptedChatModel.text("Not sent.")
      }
    ))
    const chat = new NodeChat({ id: "c-deny", transport: served.transport })
    await chat.sendMessage({ text: "Send 900 to Mallory" })
    const part = chat.messages.at(-1)!.parts.find((p) => p.type === "tool-transfer") as any
    await chat.addToolApprovalResponse({ id: part.approval.id, approved: false, reason: "not to Mallory" })
    await chat.sendMessage()
    expect(chat.error).toBeUndefined()
    expect(executed).toEqual([])
    expect(told).toMatchObject({ _tag: "ToolResult", callId: "t1", content: "rejected: not to Mallory" })
    const done = chat.messages.at(-1)!
    expect(done.parts.find((p) => p.type === "tool-transfer")).toMatchObject({ state: "output-denied" })
    expect(done.parts.at(-1)).toMatchObject({ type: "text", text: "Not sent." })
  })

  it("a client that disconnects reattaches and gets the message from its start, then the rest live; after the end too", async () => {
    const { agent, executed, release } = payments()
    served = await serve(agent, script(
      { chunks: ["Let me ", "look."], toolCalls: [{ id: "r1", name: "slow_report", args: {} }] },
      { chunks: ["The report ", "is ready."] }
    ))
    const abort = new AbortController()
    const reader = (await send(served, "c-drop", [user("Report please")], abort.signal)).getReader()
    const seen: Array<any> = []
    while (seen.at(-1)?.type !== "tool-input-available") seen.push((await reader.read()).value)
    abort.abort() // the client goes away while the tool runs; the run goes on

    const replayed = await served.transport.reconnectToStream({ chatId: "c-drop" })
    // a second message while the run goes on: one turn at a time per conversation
    const busy = await post(served.origin, { id: "c-drop", messages: [user("Hello?")] })
    expect([busy.status, JSON.parse(busy.body)._tag]).toEqual([409, "ConversationBusy"])
    release()
    const all = await chunks(replayed!)
    expect(all.slice(0, seen.length)).toEqual(seen)
    expect(all.map((c: any) => c.type)).toEqual([
      "start", "start-step", "text-start", "text-delta", "text-delta", "text-end", "tool-input-available",
      "tool-output-available", "finish-step", "start-step", "text-start", "text-delta", "text-delta", "text-end", "finish-step", "finish"
    ])
    expect(all.at(-1)).toEqual({ type: "finish", finishReason: "stop" })

    // a page opened again on the chat: useChat's resume replays the whole message, which replaces its own
    const reopened = new NodeChat({ id: "c-drop", transport: served.transport })
    await reopened.resumeStream()
    expect(reopened.messages.length).toBe(1)
    expect(reopened.messages[0]!.id).toBe((all[0] as any).messageId)
    expect(reopened.messages[0]!.parts.filter((p) => p.type === "text").map((p: any) => p.text)).toEqual(["Let me look.", "The report is ready."])
    expect(reopened.messages[0]!.parts.find((p) => p.type === "tool-slow_report")).toMatchObject({ state: "output-available", output: "report ready" })
    expect(executed).toEqual([])

    // a chat with no message to resume: 204, and useChat stays ready
    expect(await served.transport.reconnectToStream({ chatId: "c-unknown" })).toBeNull()
  })

  it("a paused message is replayed to a reattach, ending with its approval request", async () => {
    const { agent } = payments()
    served = await serve(agent, script(ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } })))
    const first = await chunks(await send(served, "c-paused", [user("Send 250 to Ada")]))
    const replayed = await chunks((await served.transport.reconnectToStream({ chatId: "c-paused" }))!)
    expect(replayed).toEqual(first)
    expect(first.map((c: any) => c.type)).toEqual(["start", "start-step", "tool-input-available", "tool-approval-request", "finish-step", "finish"])
    expect(first.at(-1)).toEqual({ type: "finish", finishReason: "tool-calls" })
  })

  it("a run that fails after it started ends its message with an error chunk, which useChat shows", async () => {
    const { agent } = payments()
    served = await serve(agent, script(ScriptedChatModel.toolCalls({ id: "b1", name: "balance", args: {} })))
    const all = await chunks(await send(served, "c-fail", [user("Balance?")]))
    expect(all.slice(-3)).toEqual([
      { type: "finish-step" },
      { type: "error", errorText: "ScriptedChatModel received request #2, but its script has only 1 step(s)" },
      { type: "finish", finishReason: "error" }
    ])
    const chat = new NodeChat({ id: "c-fail-2", transport: served.transport })
    await chat.sendMessage({ text: "Balance?" })
    expect(chat.status).toBe("error")
    expect(chat.error?.message).toBe("ScriptedChatModel received request #2, but its script has only 1 step(s)")
  })

  it("an environment pause: its failed calls are approval requests; approving them all retries them, denying them all tells the model", async () => {
    const { agent, state } = mailer()
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls({ id: "m1", name: "send_mail", args: { to: "ada" } }, { id: "m2", name: "send_mail", args: { to: "bob" } }),
      (request) => ScriptedChatModel.text(`results: ${request.messages.filter((m) => m._tag === "ToolResult").length}`)
    ))
    const chat = new NodeChat({ id: "c-env", transport: served.transport })
    await chat.sendMessage({ text: "Mail Ada and Bob" })
    const parts = chat.messages.at(-1)!.parts.filter((p) => p.type === "tool-send_mail") as Array<any>
    expect(parts.map((p) => [p.toolCallId, p.state, p.errorText])).toEqual([
      ["m1", "approval-requested", "no SMTP credentials"],
      ["m2", "approval-requested", "no SMTP credentials"]
    ])
    // one approved, one denied: an environment pause is decided for all its calls at once
    await chat.addToolApprovalResponse({ id: parts[0].approval.id, approved: true })
    await chat.addToolApprovalResponse({ id: parts[1].approval.id, approved: false })
    await chat.sendMessage()
    expect(chat.status).toBe("error")
    const runId = chat.messages.at(-1)!.id
    expect(chat.error!.message).toBe(
      `Run ${runId} paused for its environment: approve every failed call (they run again) or deny every one (the model is told they failed)`
    )
    const mixed = await post(served.origin, { id: "c-env", messages: chat.messages })
    expect([mixed.status, JSON.parse(mixed.body)]).toMatchObject([422, { _tag: "DecisionRefused", error: "DecisionMismatch" }])
    expect(state.sent).toBe(0)

    // the environment fixed, both approved: both run again
    state.fixed = true
    const answered = structuredClone(chat.messages)
    for (const part of answered.at(-1)!.parts as Array<any>) if (part.state === "approval-responded") part.approval.approved = true
    const message = await lastMessage(await send(served, "c-env", answered), answered.at(-1))
    expect(state.sent).toBe(2)
    expect(message.parts.filter((p) => p.type === "tool-send_mail").map((p: any) => [p.state, p.output])).toEqual([
      ["output-available", "mailed ada"],
      ["output-available", "mailed bob"]
    ])
    expect(message.parts.at(-1)).toMatchObject({ type: "text", text: "results: 2" })
  })

  it("an answer names its pause: after the run paused again (a new call, its id the model reused renamed), the old answer is refused; another chat's answer is not found", async () => {
    const { agent, executed } = payments()
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }),
      ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Mallory", amount: 9000 } }),
      ScriptedChatModel.text("Both sent.")
    ))
    const chat = new NodeChat({ id: "c-again", transport: served.transport })
    await chat.sendMessage({ text: "Pay Ada, then Mallory" })
    const first = chat.messages.at(-1)!.parts.find((p) => p.type === "tool-transfer") as any
    await chat.addToolApprovalResponse({ id: first.approval.id, approved: true })
    const answeredFirst = structuredClone(chat.messages)
    await chat.sendMessage()
    expect(executed).toEqual(["Ada 250"])
    const second = chat.messages.at(-1)!.parts.filter((p) => p.type === "tool-transfer").at(-1) as any
    expect(second).toMatchObject({ toolCallId: "t1_2", state: "approval-requested", input: { to: "Mallory", amount: 9000 } })
    expect(second.approval.id).not.toBe(first.approval.id)

    // the answer to the first pause, sent again, does not approve the second
    const stale = await post(served.origin, { id: "c-again", messages: answeredFirst })
    expect(stale.status).toBe(409)
    expect(JSON.parse(stale.body)).toMatchObject({ _tag: "AlreadyDecided", status: "paused" })
    // nor does it from another chat
    const elsewhere = await post(served.origin, { id: "c-other", messages: answeredFirst })
    expect(elsewhere.status).toBe(404)
    expect(JSON.parse(elsewhere.body)).toMatchObject({ _tag: "RunNotFound", message: `Run ${chat.messages.at(-1)!.id} is not a run of chat c-other` })
    expect(executed).toEqual(["Ada 250"])
  })

  it("files both ways: useChat's file parts reach the model as files; a tool's files arrive as file parts of the message", async () => {
    const png = Part.image({ name: "dot.png", data: Buffer.from("89504e470d0a1a0a", "hex") })
    const snapshot = Tool.make("snapshot", {
      description: "Takes a snapshot",
      parameters: Schema.Struct({}),
      success: Schema.String,
      handler: () => Effect.succeed(Tool.output("a snapshot", { files: [png] }))
    })
    const seen: Array<unknown> = []
    served = await serve(Agent.make({ name: "viewer", tools: [snapshot] }), script(
      (request) => {
        seen.push(request.messages[0])
        return ScriptedChatModel.toolCalls({ id: "s1", name: "snapshot", args: {} })
      },
      ScriptedChatModel.text("Here it is.")
    ))
    const chat = new NodeChat({ id: "c-files", transport: served.transport })
    const dataUrl = Part.url(png)
    await chat.sendMessage({ text: "What is this?", files: [{ type: "file", mediaType: "image/png", filename: "dot.png", url: dataUrl }] })
    expect(chat.error).toBeUndefined()
    expect(seen).toEqual([Message.user([png, Part.text("What is this?")])])
    const answer = chat.messages.at(-1)!
    expect(answer.parts.map((p) => p.type)).toEqual(["step-start", "tool-snapshot", "file", "step-start", "text"])
    expect(answer.parts[2]).toEqual({ type: "file", mediaType: "image/png", url: dataUrl })
  })
})
