/**
 * The chat endpoint read by the AI SDK's own client (`ai` 6): `DefaultChatTransport` and its
 * parser, `readUIMessageStream`, and `AbstractChat` — what `useChat` runs — on a real server on
 * 127.0.0.1.
 */
import { ScriptedChatModel } from "@agentfx/core"
import { readUIMessageStream, type UIMessage } from "ai"
import { afterEach, describe, expect, it } from "vitest"
import { chunks, NodeChat, payments, post, script, serve, type Served } from "./fixtures.js"

let served: Served | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

const user = (text: string, id = "u1"): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] })

const send = (server: Served, chatId: string, messages: Array<UIMessage>, abortSignal?: AbortSignal) =>
  server.transport.sendMessages({ chatId, messages, trigger: "submit-message", messageId: undefined, abortSignal })

/** The last state of the message a stream builds. */
const lastMessage = async (stream: ReadableStream<any>, message?: UIMessage) => {
  let last: UIMessage | undefined
  for await (const m of readUIMessageStream({ stream, ...(message === undefined ? {} : { message }) })) last = m
  return last!
}

describe("Chat", () => {
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
})
