/**
 * An agent whose first message's turn works until released, served by a real endpoint over fresh
 * in-memory stores whose steering inbox tells when a second message was left in it: the setup of
 * the double-texting tests of both endpoints (decision 173).
 */
import { Agent, type ChatModel, type Message, RunStore, ScriptedChatModel, Tool, ToolError } from "@agentfx/core"
import { Effect, Layer, Schema } from "effect"
import type { HttpServer } from "effect/http"
import { start } from "./fixtures.js"

/** What the model was shown, one line per message (`user:<text>`, `assistant:<text>[+calls]`, `result:<content>`). */
export const lines = (messages: ReadonlyArray<Message.Message>) =>
  messages.map((m) =>
    m._tag === "User"
      ? `user:${m.text}`
      : m._tag === "Assistant"
      ? `assistant:${m.text}${m.toolCalls.length > 0 ? "+calls" : ""}`
      : m._tag === "ToolResult"
      ? `result:${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`
      : m._tag
  )

/**
 * An agent of policy `onConversationBusy`: a message starting "Report" calls `slow_report`, which
 * works until `release()`; one starting "Mail" calls `send_mail`, which fails for want of
 * credentials once released (the run pauses: `onEnvironmentError: "pause"`); any other message is
 * answered `Answered: <every user message so far, joined by " + ">`. `requests`: what each model
 * call was shown.
 */
export const busyAgent = (onConversationBusy: Agent.OnConversationBusy) => {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const requests: Array<ReadonlyArray<string>> = []
  const slowReport = Tool.make("slow_report", {
    description: "A report that takes a while",
    parameters: Schema.Struct({}),
    success: Schema.String,
    handler: () => Effect.promise(() => released).pipe(Effect.as("report ready"))
  })
  const sendMail = Tool.make("send_mail", {
    description: "Sends a mail",
    parameters: Schema.Struct({}),
    success: Schema.String,
    handler: () => Effect.promise(() => released).pipe(Effect.andThen(Effect.fail(ToolError.environment("no SMTP credentials"))))
  })
  const agent = Agent.make({ name: "busy", tools: [slowReport, sendMail], onConversationBusy, onEnvironmentError: "pause" })
  const model: Layer.Layer<ChatModel.ChatModel> = ScriptedChatModel.layer((request) => {
    const shown = lines(request.messages)
    requests.push(shown)
    const lastUser = shown.length - 1 - [...shown].reverse().findIndex((line) => line.startsWith("user:"))
    const asked = shown[lastUser]!.slice("user:".length)
    const answered = shown.slice(lastUser).some((line) => line.startsWith("result:"))
    if (!answered && asked.startsWith("Report")) return ScriptedChatModel.toolCalls({ id: `r${shown.length}`, name: "slow_report", args: {} })
    if (!answered && asked.startsWith("Mail")) return ScriptedChatModel.toolCalls({ id: `m${shown.length}`, name: "send_mail", args: {} })
    return ScriptedChatModel.text(`Answered: ${shown.filter((line) => line.startsWith("user:")).map((line) => line.slice(5)).join(" + ")}`)
  })
  return { agent, model, release, requests }
}

/**
 * A real endpoint (`endpoint`, given its stores) over fresh in-memory stores whose steering inbox
 * resolves `offered` when a message is left in it.
 */
export const startWatched = async (
  endpoint: (stores: Layer.Layer<never>) => Layer.Layer<HttpServer.HttpServer, unknown>
) => {
  let offer!: () => void
  const offered = new Promise<void>((resolve) => (offer = resolve))
  const watched = Layer.effect(
    RunStore.RunStore,
    Effect.map(RunStore.RunStore, (store): RunStore.RunStore.Service => ({
      ...store,
      steering: store.steering === undefined ? undefined : {
        ...store.steering,
        offer: (entry) => Effect.tap(store.steering!.offer(entry), () => Effect.sync(offer))
      }
    }))
  )
  const served = await start((stores) => endpoint(Layer.provideMerge(watched, stores) as Layer.Layer<never>))
  return { ...served, offered }
}

/** Waits (polling) until `ready()` holds. */
export const until = async (ready: () => boolean) => {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 5))
}
