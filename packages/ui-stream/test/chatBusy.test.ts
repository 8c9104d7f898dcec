/**
 * A second message while a chat's message runs (decision 173), read by the AI SDK's own client of
 * each major (`AbstractChat`, what `useChat` runs, and `DefaultChatTransport`): the agent's
 * `onConversationBusy` decides — steered into the running message, the next turn, or the running
 * run cancelled (and rolled back) — and a steer racing a pause is refused, nothing written.
 */
import type { Agent } from "@agentfx/core"
import type { UIMessage } from "ai"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { Chat } from "../src/index.js"
import { busyAgent, lines, startWatched, until } from "./busyFixtures.js"
import { chunks, type Client, clients, post, readThread } from "./fixtures.js"

let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  close = undefined
})

const user = (text: string, id: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] })
const texts = (message: UIMessage) => message.parts.filter((p) => p.type === "text").map((p: any) => p.text)

describe.each(clients)("Chat, a second message while a run works, read by $name", (client: Client) => {
  const serve = async (policy: Agent.OnConversationBusy) => {
    const busy = busyAgent(policy)
    const served = await startWatched((stores) => Chat.serve({ agent: busy.agent }).pipe(Layer.provide(busy.model), Layer.provide(stores)))
    close = served.close
    const transport = client.transport(`${served.origin}/api/chat`)
    const send = (chatId: string, messages: Array<UIMessage>) =>
      transport.sendMessages({ chatId, messages, trigger: "submit-message", messageId: undefined, abortSignal: undefined })
    /** A chat as `useChat` holds it, whose first message's tool works. */
    const working = async (chatId: string) => {
      const chat = new client.Chat({ id: chatId, transport })
      const first = chat.sendMessage({ text: "Report please" })
      await until(() => chat.messages.at(-1)?.parts.some((part) => part.type === "tool-slow_report") === true)
      return { chat, first }
    }
    const memory = (chatId: string) => Effect.runPromise(served.memory.get(chatId)).then(lines)
    return { ...busy, ...served, send, working, memory }
  }

  it("steer: the second message joins the running run before its next model call; its response is that run's message, which answers both", async () => {
    const served = await serve("steer")
    const { chat, first } = await served.working("c-steer")
    const runId = chat.messages[1]!.id
    // the page stops listening to the first response (the run goes on): only the second's shows the answer
    await chat.stop()
    await first
    const second = chat.sendMessage({ text: "Make it short" })
    await served.offered
    served.release()
    await second

    expect(chat.error).toBeUndefined()
    // the running message, continued in its place: the answer that took the second message in
    expect(chat.messages.map((m) => `${m.role}${m.id === runId ? " (the run)" : ""}`)).toEqual(["user", "assistant (the run)", "user"])
    expect(texts(chat.messages[1]!)).toEqual(["Answered: Report please + Make it short"])
    // the second message reached the model once, after the report's result
    expect(served.requests).toEqual([
      ["user:Report please"],
      ["user:Report please", "assistant:+calls", "result:report ready", "user:Make it short"]
    ])
    // the thread read again shows it in its place
    const thread = await readThread<{ messages: Array<UIMessage> }>(`${served.origin}/api/chat`, "c-steer")
    expect(thread.body.messages.map((m) => `${m.role}:${texts(m).join("")}`)).toEqual([
      "user:Report please",
      "assistant:",
      "user:Make it short",
      "assistant:Answered: Report please + Make it short"
    ])
  })

  it("steer racing a pause: the run paused before it took the message — 409 SteerRefused, nothing written, the pause stands", async () => {
    const served = await serve("steer")
    const reader = (await served.send("c-race", [user("Mail the report", "u1")])).getReader()
    const seen: Array<any> = []
    while (seen.at(-1)?.type !== "tool-input-available") seen.push((await reader.read()).value)
    const runId = seen[0].messageId
    const refused = post(served.origin, { id: "c-race", messages: [user("Mail the report", "u1"), user("To Ada too", "u2")] })
    await served.offered
    served.release()
    const { body, status } = await refused
    expect([status, JSON.parse(body)]).toEqual([409, {
      _tag: "SteerRefused",
      chatId: "c-race",
      runId,
      message: `Chat c-race waits for a person: its running run ${runId} paused before it took your message, and nothing was written; answer its approval requests, then send the message again`
    }])
    while (seen.at(-1)?.type !== "finish") seen.push((await reader.read()).value)
    expect(seen.at(-1)).toEqual({ type: "finish", finishReason: "tool-calls" })
    // nothing written, never shown to the model
    expect((await served.memory("c-race")).some((line) => line.includes("To Ada too"))).toBe(false)
    expect(served.requests.flat().some((line) => line.includes("To Ada too"))).toBe(false)
  })

  it("wait: the second message is the next turn, streamed once the first ended", async () => {
    const served = await serve("wait")
    const { chat, first } = await served.working("c-wait")
    let answered = false
    const second = served.send("c-wait", [...chat.messages, user("And then?", "u2")]).then((stream) => ((answered = true), chunks(stream)))
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(answered).toBe(false)
    served.release()
    await first
    const all = await second
    expect((all[0] as any).messageId).not.toBe(chat.messages[1]!.id)
    expect(all.filter((c: any) => c.type === "text-delta").map((c: any) => c.delta)).toEqual(["Answered: Report please + And then?"])
    expect(texts(chat.messages.at(-1)!)).toEqual(["Answered: Report please"])
  })

  it.each([["interrupt", false], ["rollback", true]] as const)(
    "%s: the running message ends interrupted (a data-interrupted part, finish other — no error), and the second message's turn streams",
    async (policy, rolledBack) => {
      const served = await serve(policy)
      const { chat, first } = await served.working(`c-${policy}`)
      const runId = chat.messages[1]!.id
      await Promise.all([first, chat.sendMessage({ text: "Cancel that" })])

      expect(chat.error).toBeUndefined()
      expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
      const interrupted = chat.messages[1]!
      expect(interrupted.id).toBe(runId)
      const by = chat.messages[3]!.id
      expect(interrupted.parts.at(-1)).toMatchObject({
        type: "data-interrupted",
        data: { runId, by, rolledBack, message: expect.stringContaining(`Run "${runId}" was cancelled: run "${by}" took conversation "c-${policy}" over`) }
      })
      expect(texts(chat.messages[3]!)).toEqual([rolledBack ? "Answered: Cancel that" : "Answered: Report please + Cancel that"])
      expect(await served.memory(`c-${policy}`)).toEqual(
        rolledBack
          ? ["user:Cancel that", "assistant:Answered: Cancel that"]
          : ["user:Report please", "assistant:+calls", expect.stringMatching(/^result:.*cancel/i), "user:Cancel that", "assistant:Answered: Report please + Cancel that"]
      )
    }
  )
})
