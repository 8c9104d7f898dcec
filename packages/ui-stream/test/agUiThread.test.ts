/**
 * An AG-UI thread read back (`GET /api/agui/:threadId/messages`) by AG-UI's own client: the
 * messages a page loads are those the live events built (`HttpAgent`'s own), the last run's with
 * the same ids, and the thread's pending interrupts beside them; an `HttpAgent` made with them
 * answers the interrupt, and the run resumes once.
 */
import type { Interrupt, Message } from "@ag-ui/client"
import { ScriptedChatModel } from "@agentfx/core"
import { afterEach, describe, expect, it } from "vitest"
import { AgentfxAgent, client, refusal, type Served, serve, warnings } from "./agUiFixtures.js"
import { payments, readThread } from "./fixtures.js"

/** A page of the thread; refusals as JSON. */
const read = (server: Served, threadId: string, query = "") =>
  readThread<{ readonly messages: Array<Message>; readonly interrupts: Array<Interrupt>; readonly before?: string }>(server.url, threadId, query)

let served: Served | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

const user = (text: string) => ({ id: `u-${text}`, role: "user" as const, content: text })

/** The messages without their ids: a user message's is the client's live, its position when read back. */
const anonymous = (messages: ReadonlyArray<Message>) => messages.map(({ id: _, ...message }) => message)

describe("an AG-UI thread, read back", () => {
  it("a reloaded HttpAgent gets the messages the live one built, and the pending interrupt; answering it resumes the run once", async () => {
    const { agent, executed } = payments()
    served = await serve(agent, ScriptedChatModel.layer([
      { text: "Let me look.", toolCalls: [{ id: "b1", name: "balance", args: {} }] },
      ScriptedChatModel.text("You have 1000."),
      { text: "Sending.", toolCalls: [{ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }] },
      ScriptedChatModel.text("Sent 250 to Ada.")
    ]))
    const { agent: live } = client(served, "t-thread")
    live.addMessage(user("What is my balance?"))
    await live.runAgent()
    live.addMessage(user("Send 250 to Ada"))
    await live.runAgent()
    expect(live.pendingInterrupts.length).toBe(1)

    const loaded = await read(served, "t-thread")
    expect(loaded.status).toBe(200)
    const { interrupts, messages } = loaded.body
    expect(anonymous(messages)).toEqual(anonymous(live.messages))
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant"])
    // the last run's messages have the ids its events gave them
    expect(messages.at(-1)!.id).toBe(live.messages.at(-1)!.id)
    expect(messages.at(-1)).toEqual({
      id: live.messages.at(-1)!.id,
      role: "assistant",
      content: "Sending.",
      toolCalls: [{ id: "t1", type: "function", function: { name: "transfer", arguments: `{"to":"Ada","amount":250}` } }]
    })
    expect(interrupts).toEqual(live.pendingInterrupts)

    // the reloaded page answers the interrupt: the run resumes once, into the messages it has
    const reloaded = new AgentfxAgent({ url: served.url, threadId: "t-thread", initialMessages: messages })
    reloaded.pendingInterrupts = interrupts
    await reloaded.runAgent({ resume: [{ interruptId: interrupts[0]!.id, status: "resolved", payload: { type: "approve" } }] })
    expect(executed).toEqual(["Ada 250"])
    expect(reloaded.pendingInterrupts).toEqual([])
    expect(anonymous(reloaded.messages.slice(-3))).toEqual([
      { role: "assistant", content: "Sending.", toolCalls: [{ id: "t1", type: "function", function: { name: "transfer", arguments: `{"to":"Ada","amount":250}` } }] },
      { role: "tool", toolCallId: "t1", content: "sent 250 to Ada" },
      { role: "assistant", content: "Sent 250 to Ada." }
    ])
    expect(new Set(reloaded.messages.map((m) => m.id)).size).toBe(reloaded.messages.length)

    // the page that was not reloaded answers too: refused, nothing runs again
    const late = await refusal(live.runAgent({ resume: [{ interruptId: interrupts[0]!.id, status: "resolved", payload: { type: "approve" } }] }))
    expect(late.status).toBe(409)
    expect(executed).toEqual(["Ada 250"])

    // read again: what the reloaded page shows, no interrupt left
    const after = await read(served, "t-thread")
    expect(anonymous(after.body.messages)).toEqual(anonymous(reloaded.messages))
    expect(after.body.interrupts).toEqual([])
    expect(warnings()).toEqual([])
  })

  it("pages: the newest first, the interrupts on each; a bad limit is refused with 400", async () => {
    const { agent } = payments()
    served = await serve(agent, ScriptedChatModel.layer([
      ScriptedChatModel.text("One."),
      ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } })
    ]))
    const { agent: live } = client(served, "t-pages")
    live.addMessage(user("1"))
    await live.runAgent()
    live.addMessage(user("Send 250 to Ada"))
    await live.runAgent()
    const whole = (await read(served, "t-pages")).body
    expect(whole.messages.length).toBe(4)
    const newest = (await read(served, "t-pages", "?limit=3")).body
    expect(newest.messages).toEqual(whole.messages.slice(1))
    expect(newest.interrupts).toEqual(live.pendingInterrupts)
    const older = (await read(served, "t-pages", `?limit=3&before=${encodeURIComponent(newest.before!)}`)).body
    expect(older).toEqual({ messages: whole.messages.slice(0, 1), interrupts: live.pendingInterrupts })
    const refused = await read(served, "t-pages", "?limit=1000")
    expect([refused.status, refused.body.message]).toEqual([
      400,
      "limit 1000 is more than 200, the most messages a page holds: ask for 200 or fewer, and for the page before with its cursor"
    ])
    expect(await read(served, "t-none")).toEqual({ status: 200, body: { messages: [], interrupts: [] } })
  })
})
