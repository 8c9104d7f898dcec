/**
 * The endpoints over a driver of their own (`Options.driver`, decision 172), read by the real
 * clients: what a driver says of events it lost (`EventsLost`) and of a stop whose events were
 * lost (`RunEnded`) — the chat's `data-events-lost` part and its `finish` or `error`, AG-UI's
 * `CUSTOM` `agentfx.eventsLost` and its `RUN_FINISHED` or `RUN_ERROR` — as `AbstractChat` and
 * `HttpAgent` apply them. The runs are real (`Agent.stream` over a scripted model); the driver
 * puts its elements among their events.
 */
import { HttpAgent } from "@ag-ui/client"
import { Agent, type AgentError, type AgentEvent, ScriptedChatModel } from "@agentfx/core"
import { Layer, Stream } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { AgUi, Chat, type ChatDriver } from "../src/index.js"
import { latest, payments, start } from "./fixtures.js"

let served: { readonly close: () => Promise<void> } | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

const model = ScriptedChatModel.layer([{ chunks: ["You have ", "1000."] }])

/** A driver of real runs that, after the run's first text, says what `after` makes of it. */
const driver = (after: (event: AgentEvent.AgentEvent) => ReadonlyArray<ChatDriver.Driven>): ChatDriver.ChatDriver => ({
  stream: (agent, options) => {
    let told = false
    return Agent.stream(agent, options).pipe(
      Stream.flatMap((event) => {
        if (told || event._tag !== "TextDelta") return Stream.make(event)
        told = true
        return Stream.fromIterable<ChatDriver.Driven>([event, ...after(event)])
      }),
      Stream.takeUntil((driven) => driven._tag === "RunEnded"),
      Stream.provide(model)
    ) as Stream.Stream<ChatDriver.Driven, AgentError.RunError> // the agent's requirements: none (`Agent.Any` says any)
  },
  resume: () => Stream.empty
})

const lost = (event: AgentEvent.AgentEvent): ChatDriver.EventsLost => ({ _tag: "EventsLost", runId: event.runId, message: "Events were lost with the runner" })

const lines = (body: string) => body.split("\n\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6))

describe("a driver's lost events", () => {
  it("useChat: a gap is a data-events-lost part where the events would have been, the text cut off ended there; the run goes on", async () => {
    const { agent } = payments()
    const server = await start((stores) => Chat.serve({ agent, driver: driver((event) => [lost(event)]) }).pipe(Layer.provide(stores)))
    served = server
    const chat = new latest.Chat({ id: "c-gap", transport: latest.transport(`${server.origin}/api/chat`) })
    await chat.sendMessage({ text: "Balance?" })
    expect(chat.error).toBeUndefined()
    const message = chat.messages.at(-1)!
    expect(message.parts.map((p) => p.type)).toEqual(["step-start", "text", "data-events-lost", "text"])
    expect(message.parts[1]).toMatchObject({ text: "You have ", state: "done" })
    expect(message.parts[2]).toEqual({ type: "data-events-lost", data: { runId: message.id, message: "Events were lost with the runner" } })
    expect(message.parts[3]).toMatchObject({ text: "1000.", state: "done" })
  })

  it("useChat: a stop whose events were lost ends the message — completed: finish; failed: the error's sentence", async () => {
    const { agent } = payments()
    const server = await start((stores) =>
      Chat.serve({ agent, driver: driver((event) => [lost(event), { _tag: "RunEnded", runId: event.runId }]) }).pipe(Layer.provide(stores))
    )
    served = server
    const post = (chatId: string) =>
      fetch(`${server.origin}/api/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: chatId, messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "Balance?" }] }], trigger: "submit-message" })
      }).then((response) => response.text())
    expect(lines(await post("c-ended")).slice(-5)).toEqual([
      `{"type":"text-end","id":"text-1"}`,
      expect.stringMatching(/^\{"type":"data-events-lost","data":\{"runId":"[^"]+","message":"Events were lost with the runner"\}\}$/),
      `{"type":"finish-step"}`,
      `{"type":"finish","finishReason":"stop"}`,
      "[DONE]"
    ])
    await served.close()
    const failing = await start((stores) =>
      Chat.serve({
        agent,
        driver: driver((event) => [lost(event), { _tag: "RunEnded", runId: event.runId, failure: { error: "Cancelled", message: "Run was cancelled by ada" } }])
      }).pipe(Layer.provide(stores))
    )
    served = failing
    const chat = new latest.Chat({ id: "c-failed", transport: latest.transport(`${failing.origin}/api/chat`) })
    await chat.sendMessage({ text: "Balance?" })
    expect(chat.status).toBe("error")
    expect(chat.error!.message).toBe("Run was cancelled by ada")
  })

  it("AG-UI: a gap is a CUSTOM event agentfx.eventsLost, which HttpAgent accepts; a failed stop is RUN_ERROR with the error's tag", async () => {
    const { agent } = payments()
    const server = await start((stores) => AgUi.serve({ agent, driver: driver((event) => [lost(event)]) }).pipe(Layer.provide(stores)))
    served = server
    const client = new HttpAgent({ url: `${server.origin}/api/agui`, threadId: "t-gap" })
    const events: Array<any> = []
    client.subscribe({ onEvent: ({ event }) => void events.push(event) })
    client.addMessage({ id: "u1", role: "user", content: "Balance?" })
    await client.runAgent({ runId: "ag-1" })
    expect(events.map((e) => e.type)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "CUSTOM",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "STEP_FINISHED",
      "RUN_FINISHED"
    ])
    expect(events[5]).toMatchObject({ type: "CUSTOM", name: "agentfx.eventsLost", value: { message: "Events were lost with the runner" } })
    await served.close()

    const failing = await start((stores) =>
      AgUi.serve({
        agent,
        driver: driver((event) => [lost(event), { _tag: "RunEnded", runId: event.runId, failure: { error: "Cancelled", message: "Run was cancelled by ada" } }])
      }).pipe(Layer.provide(stores))
    )
    served = failing
    const response = await fetch(`${failing.origin}/api/agui`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ threadId: "t-failed", runId: "ag-2", messages: [{ id: "u1", role: "user", content: "Balance?" }], tools: [], context: [], state: {} })
    })
    expect(lines(await response.text()).slice(-2)).toEqual([
      `{"type":"STEP_FINISHED","stepName":"step-1"}`,
      `{"type":"RUN_ERROR","message":"Run was cancelled by ada","code":"Cancelled"}`
    ])
  })
})
