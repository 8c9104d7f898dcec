/**
 * A chat read back (`GET /api/chat/:chatId/messages`) by the AI SDK's own client, of each major it
 * supports: the messages a page loads are `useChat`'s own — the same parts the live stream built,
 * a pending approval as an `approval-requested` part — and a chat made with them (`messages`)
 * answers the approval, and the run resumes once; a run still running is read as far as it went,
 * and its reattach continues that very message. Pages: the newest first, a stable cursor to the
 * ones before, bad queries refused with 400 and a sentence.
 */
import { ScriptedChatModel } from "@agentfx/core"
import type { UIMessage } from "ai"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { type Client, clients, latest, mailer, payments, readThread, script, serve as serveWith, type Served } from "./fixtures.js"

/** Answers the model calls of every run with the steps in order, across the chat's turns. */
const turns = (...steps: ScriptedChatModel.Script & ReadonlyArray<unknown>) => ScriptedChatModel.layer(steps)

/** A page of the chat's thread; refusals as JSON. */
const read = (server: Served, chatId: string, query = "") =>
  readThread<{ readonly messages: Array<UIMessage>; readonly before?: string }>(`${server.origin}/api/chat`, chatId, query)

let served: Served | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

/** A message as JSON holds it (what the client kept without a value is not sent). */
const plain = <A>(value: A): A => JSON.parse(JSON.stringify(value))

describe.each(clients)("a chat's thread, read by $name", (client: Client) => {
  const serve = (agent: Parameters<typeof serveWith>[0], model: Parameters<typeof serveWith>[1]) => serveWith(agent, model, client)

  it("a reloaded page gets the whole thread — earlier turns, their tool calls and results, the pending approval — and answering it resumes the run once", async () => {
    const { agent, executed } = payments()
    served = await serve(agent, turns(
      { text: "Let me look.", toolCalls: [{ id: "b1", name: "balance", args: {} }] },
      ScriptedChatModel.text("You have 1000."),
      { text: "Sending.", toolCalls: [{ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }] },
      ScriptedChatModel.text("Sent 250 to Ada.")
    ))
    const live = new client.Chat({ id: "c-thread", transport: served.transport })
    await live.sendMessage({ text: "What is my balance?" })
    await live.sendMessage({ text: "Send 250 to Ada" })
    const paused = live.messages.at(-1)!
    expect(paused.parts.at(-1)).toMatchObject({ type: "tool-transfer", state: "approval-requested" })

    // the page reloads: what it loads is what it had
    const loaded = await read(served, "c-thread")
    expect(loaded.status).toBe(200)
    expect(loaded.body.before).toBeUndefined()
    const { messages } = loaded.body
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
    expect(messages.map((m) => m.id)).toEqual(["msg-0", "msg-1", "msg-4", paused.id])
    // every part the live stream built is there, in order (the loaded ones may say more: ai 6 keeps no requestReason)
    messages.forEach((message, i) => expect(plain(message.parts)).toMatchObject(plain(live.messages[i]!.parts)))
    expect(messages[1]!.parts).toEqual([
      { type: "step-start" },
      { type: "text", text: "Let me look.", state: "done" },
      { type: "tool-balance", toolCallId: "b1", state: "output-available", input: {}, output: 1000 },
      { type: "step-start" },
      { type: "text", text: "You have 1000.", state: "done" }
    ])
    const approvalId = (paused.parts.at(-1) as any).approval.id
    expect(messages[3]!.parts.at(-1)).toEqual({
      type: "tool-transfer",
      toolCallId: "t1",
      state: "approval-requested",
      input: { to: "Ada", amount: 250 },
      approval: { id: approvalId, requestReason: "the needsApproval rule of transfer asked for approval of these arguments" }
    })

    // the reloaded chat answers the approval: the run resumes once, in the message it continues
    const reloaded = new client.Chat({ id: "c-thread", messages, transport: served.transport })
    await reloaded.addToolApprovalResponse({ id: approvalId, approved: true })
    await reloaded.sendMessage()
    expect(reloaded.error).toBeUndefined()
    expect(executed).toEqual(["Ada 250"])
    expect(reloaded.messages.map((m) => m.id)).toEqual(["msg-0", "msg-1", "msg-4", paused.id])
    expect(reloaded.messages.at(-1)!.parts.map((p) => p.type)).toEqual(["step-start", "text", "tool-transfer", "step-start", "text"])
    expect(reloaded.messages.at(-1)!.parts[2]).toMatchObject({ state: "output-available", output: "sent 250 to Ada" })

    // the page that was not reloaded answers too: refused, nothing runs again
    await live.addToolApprovalResponse({ id: approvalId, approved: true })
    await live.sendMessage()
    expect(live.error?.message).toBe(`Run ${paused.id} was already decided by local: it is completed now`)
    expect(executed).toEqual(["Ada 250"])

    // read again: the turn completed, as the reloaded chat shows it (but for the answer it sent, which the run's record no longer holds)
    const after = await read(served, "c-thread")
    const shown = plain(reloaded.messages.at(-1)!.parts).map(({ approval: _, ...part }: any) => part)
    expect(plain(after.body.messages.at(-1)!.parts)).toMatchObject(shown)
    expect(after.body.messages.at(-1)!.id).toBe(paused.id)
  })

  it("an environment pause read back: its failed calls wait with their errors; approved from the reloaded chat, they run again once", async () => {
    const { agent, state } = mailer()
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls({ id: "m1", name: "send_mail", args: { to: "ada" } }, { id: "m2", name: "send_mail", args: { to: "bob" } }),
      ScriptedChatModel.text("Both mailed.")
    ))
    const live = new client.Chat({ id: "c-env-thread", transport: served.transport })
    await live.sendMessage({ text: "Mail Ada and Bob" })
    const { messages } = (await read(served, "c-env-thread")).body
    const waiting = messages.at(-1)!.parts.filter((p) => p.type === "tool-send_mail") as Array<any>
    expect(waiting.map((p) => [p.toolCallId, p.state, p.errorText])).toEqual([
      ["m1", "approval-requested", "no SMTP credentials"],
      ["m2", "approval-requested", "no SMTP credentials"]
    ])
    expect(plain(messages.at(-1)!.parts)).toMatchObject(plain(live.messages.at(-1)!.parts))

    state.fixed = true
    const reloaded = new client.Chat({ id: "c-env-thread", messages, transport: served.transport })
    for (const part of waiting) await reloaded.addToolApprovalResponse({ id: part.approval.id, approved: true })
    await reloaded.sendMessage()
    expect(reloaded.error).toBeUndefined()
    expect(state.sent).toBe(2)
    expect(reloaded.messages.at(-1)!.parts.at(-1)).toMatchObject({ type: "text", text: "Both mailed." })
  })

  it("a run still running is read as far as it went; the reattach continues that very message", async () => {
    const { agent, release } = payments()
    served = await serve(agent, script(
      { text: "Let me look.", toolCalls: [{ id: "r1", name: "slow_report", args: {} }] },
      ScriptedChatModel.text("The report is ready.")
    ))
    const abort = new AbortController()
    const stream = await served.transport.sendMessages({
      chatId: "c-running",
      messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "Report please" }] }],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: abort.signal
    })
    const reader = stream.getReader()
    let runId = ""
    for (let chunk = await reader.read(); chunk.value?.type !== "tool-input-available"; chunk = await reader.read()) {
      if (chunk.value?.type === "start") runId = chunk.value.messageId!
    }
    abort.abort() // the page goes away while the tool runs

    const { messages } = (await read(served, "c-running")).body
    expect(messages.map((m) => m.id)).toEqual(["msg-0", runId])
    expect(messages[1]!.parts.at(-1)).toEqual({ type: "tool-slow_report", toolCallId: "r1", state: "input-available", input: {} })

    const reloaded = new client.Chat({ id: "c-running", messages, transport: served.transport })
    const resumed = reloaded.resumeStream()
    release()
    await resumed
    expect(reloaded.messages.map((m) => m.id)).toEqual(["msg-0", runId])
    expect(reloaded.messages[1]!.parts.map((p) => p.type)).toEqual(["step-start", "text", "tool-slow_report", "step-start", "text"])
    expect(reloaded.messages[1]!.parts.at(-1)).toMatchObject({ text: "The report is ready." })
  })
})

describe("a chat's thread, page by page", () => {
  it("the newest page first, a stable cursor to the page before; every message once", async () => {
    const { agent } = payments()
    served = await serveWith(agent, turns(ScriptedChatModel.text("One."), ScriptedChatModel.text("Two."), ScriptedChatModel.text("Three."), ScriptedChatModel.text("Four.")))
    const chat = new latest.Chat({ id: "c-pages", transport: served.transport })
    for (const text of ["1", "2", "3"]) await chat.sendMessage({ text })
    const whole = (await read(served, "c-pages")).body.messages
    expect(whole.map((m) => m.parts.find((p) => p.type === "text")).map((p: any) => p.text)).toEqual(["1", "One.", "2", "Two.", "3", "Three."])

    const newest = (await read(served, "c-pages", "?limit=4")).body
    expect(newest.messages).toEqual(whole.slice(2))
    expect(typeof newest.before).toBe("string")
    const older = (await read(served, "c-pages", `?limit=4&before=${encodeURIComponent(newest.before!)}`)).body
    expect(older).toEqual({ messages: whole.slice(0, 2) })

    // the thread goes on: the cursor still names the same page
    await chat.sendMessage({ text: "4" })
    expect((await read(served, "c-pages", `?limit=4&before=${encodeURIComponent(newest.before!)}`)).body).toEqual({ messages: whole.slice(0, 2) })
    const latestPage = (await read(served, "c-pages", "?limit=2")).body
    // the last turn's message is its run's, as the live stream named it
    expect(latestPage.messages.map((m) => m.id)).toEqual(["msg-6", chat.messages.at(-1)!.id])
    const middle = (await read(served, "c-pages", `?limit=3&before=${encodeURIComponent(latestPage.before!)}`)).body
    // the same messages; "Three." is no longer the last turn's, and is named by its position now
    expect(middle.messages.map((m) => m.parts)).toEqual(whole.slice(3, 6).map((m) => m.parts))
    expect(middle.messages.map((m) => m.id)).toEqual(["msg-3", "msg-4", "msg-5"])
    // a chat not begun is a thread of no messages
    expect(await read(served, "c-none")).toEqual({ status: 200, body: { messages: [] } })
  })

  it("a bad limit or cursor, or another chat's cursor, is refused with 400 and says why — as a sentence unless JSON is asked for", async () => {
    const { agent } = payments()
    served = await serveWith(agent, turns(ScriptedChatModel.text("One."), ScriptedChatModel.text("Two.")))
    const chat = new latest.Chat({ id: "c-bad", transport: served.transport })
    await chat.sendMessage({ text: "1" })
    await chat.sendMessage({ text: "2" })
    const { before } = (await read(served, "c-bad", "?limit=1")).body
    const refused = async (chatId: string, query: string) => {
      const { body, status } = await read(served!, chatId, query)
      return [status, body._tag, body.message]
    }
    expect(await refused("c-bad", "?limit=0")).toEqual([400, "InvalidRequest", `limit must be a whole number from 1 to 200 (it is "0")`])
    expect(await refused("c-bad", "?limit=ten")).toEqual([400, "InvalidRequest", `limit must be a whole number from 1 to 200 (it is "ten")`])
    expect(await refused("c-bad", "?limit=201")).toEqual([
      400,
      "InvalidRequest",
      "limit 201 is more than 200, the most messages a page holds: ask for 200 or fewer, and for the page before with its cursor"
    ])
    expect(await refused("c-bad", "?before=%25%25")).toEqual([400, "InvalidRequest", `before must be a cursor this endpoint gave (a page's "before"); "%%" is not one`])
    expect(await refused("c-other", `?before=${encodeURIComponent(before!)}`)).toEqual([
      400,
      "InvalidRequest",
      `The cursor is one of chat "c-bad", not of chat "c-other": ask each chat's pages with its own cursors`
    ])
    // a cursor past the end: the chat was forgotten and begun again since
    await Effect.runPromise(served.memory.replace("c-bad", []))
    expect(await refused("c-bad", `?before=${encodeURIComponent(before!)}`)).toEqual([
      400,
      "InvalidRequest",
      `The cursor points past the end of chat "c-bad", which has 0 messages in its memory: it is a cursor of the conversation before it was forgotten`
    ])
    const text = await fetch(`${served.origin}/api/chat/c-bad/messages?limit=0`)
    expect([text.status, text.headers.get("content-type"), await text.text()]).toEqual([
      400,
      "text/plain; charset=utf-8",
      `limit must be a whole number from 1 to 200 (it is "0")`
    ])
  })
})
