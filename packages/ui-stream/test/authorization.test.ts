/**
 * Who may use the chat endpoint, on every path — a run started, a pause answered, a message
 * reattached: the default (`ChatAuthorization.loopback()`) through `Chat.serve`, refusing a
 * foreign `Host` (DNS rebinding), another origin and a proxied request with 403, nothing started
 * or decided; a hook of one's own through `Chat.routes`, told what each request asks, whose name
 * decides; and each refusal as `useChat` shows it — a sentence, not JSON — with the AI SDK's own
 * client.
 */
import { Agent, ChatMemory, type ChatModel, RunStore, ScriptedChatModel } from "@agentfx/core"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { DefaultChatTransport } from "ai"
import { Context, Data, Effect, Exit, Layer, Option, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import * as Http from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import { Chat, ChatAuthorization } from "../src/index.js"
import { NodeChat, payments, post, raw, serve, type Served, strangers } from "./fixtures.js"

let closing: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closing) await close()
  closing = []
})

const json = { "content-type": "application/json", accept: "application/json" }
const user = (text: string) => ({ id: "u1", role: "user", parts: [{ type: "text", text }] })

/** A model that counts its calls: the first asks for a transfer of 250 (which waits for approval), the next answers. */
const counted = () => {
  const calls = { count: 0 }
  const model = ScriptedChatModel.layer(() =>
    Effect.sync(() => {
      calls.count += 1
      return calls.count === 1
        ? ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } })
        : ScriptedChatModel.text("Sent.")
    })
  )
  return { calls, model }
}

/** The approval of the chat's pause, as `useChat` posts it: the answered message of the paused stream's events. */
const approvalOf = (chatId: string, stream: string, approved = true) => {
  const events = stream.split("\n").filter((line) => line.startsWith("data: {")).map((line) => JSON.parse(line.slice(6)))
  const runId = events[0].messageId as string
  const asked = events.find((event) => event.type === "tool-approval-request")
  return {
    runId,
    body: {
      id: chatId,
      messages: [user("Send 250 to Ada"), {
        id: runId,
        role: "assistant",
        parts: [{ type: "tool-transfer", toolCallId: "t1", state: "approval-responded", input: { to: "Ada", amount: 250 }, approval: { id: asked.approvalId, approved } }]
      }]
    }
  }
}

const record = (served: { readonly store: RunStore.RunStore.Service }, runId: string) =>
  Effect.runPromise(Effect.map(served.store.get(runId), Option.getOrUndefined))

describe("the default: clients on this machine only (Chat.serve on 127.0.0.1)", () => {
  it("a foreign Host (DNS rebinding), another origin or a proxied request cannot start a run, answer its pause, reattach or read the thread: 403, nothing started or decided", async () => {
    const { agent, executed } = payments()
    const { calls, model } = counted()
    const served = await serve(agent, model)
    closing.push(served.close)
    const port = new URL(served.origin).port
    const own = `127.0.0.1:${port}`
    const refusals = strangers(served.origin)

    // start
    for (const { headers, message } of refusals) {
      const refused = await raw(served.origin, "POST", "/api/chat", { ...json, ...headers }, { id: "c-guarded", messages: [user("Send 250 to Ada")] })
      expect([refused.status, JSON.parse(refused.body)]).toEqual([403, { _tag: "Forbidden", message }])
    }
    expect(calls.count).toBe(0)
    expect(await Effect.runPromise(served.store.list())).toEqual([])
    expect((await raw(served.origin, "GET", "/api/chat/c-guarded/stream", { host: own })).status).toBe(204)

    // the same, from this machine: the run starts and pauses
    const paused = await raw(served.origin, "POST", "/api/chat", { ...json, host: own, origin: `http://${own}` }, { id: "c-guarded", messages: [user("Send 250 to Ada")] })
    expect(paused.status).toBe(200)
    const { body: approval, runId } = approvalOf("c-guarded", paused.body)
    const before = await record(served, runId)
    expect(before).toMatchObject({ status: "paused" })

    // its approval, from a stranger: refused, the run stays paused at its pause
    for (const { headers, message } of refusals) {
      const refused = await raw(served.origin, "POST", "/api/chat", { ...json, ...headers }, approval)
      expect([refused.status, JSON.parse(refused.body)]).toEqual([403, { _tag: "Forbidden", message }])
    }
    expect(executed).toEqual([])
    expect(calls.count).toBe(1)
    expect(await record(served, runId)).toEqual(before)

    // a reattach, from a stranger: refused; from this machine: the paused message
    for (const { headers, message } of refusals) {
      const refused = await raw(served.origin, "GET", "/api/chat/c-guarded/stream", { accept: "application/json", ...headers })
      expect([refused.status, JSON.parse(refused.body)]).toEqual([403, { _tag: "Forbidden", message }])
    }
    const replayed = await raw(served.origin, "GET", "/api/chat/c-guarded/stream", { host: `localhost:${port}` })
    expect([replayed.status, replayed.body]).toEqual([200, paused.body])
    // the thread, read by a stranger: refused; from this machine: its messages, the approval request last
    for (const { headers, message } of refusals) {
      const refused = await raw(served.origin, "GET", "/api/chat/c-guarded/messages", { accept: "application/json", ...headers })
      expect([refused.status, JSON.parse(refused.body)]).toEqual([403, { _tag: "Forbidden", message }])
    }
    const thread = await raw(served.origin, "GET", "/api/chat/c-guarded/messages", { host: own })
    expect(JSON.parse(thread.body).messages.at(-1).parts.at(-1)).toMatchObject({ type: "tool-transfer", state: "approval-requested" })

    // the approval from this machine resumes the run: decided by "local"
    const approved = await raw(served.origin, "POST", "/api/chat", { ...json, host: `localhost:${port}` }, approval)
    expect(approved.status).toBe(200)
    expect(executed).toEqual(["Ada 250"])
    const finished = await Effect.runPromise(served.store.finished(runId))
    expect(finished).toMatchObject({ _tag: "Some", value: { status: "completed", decidedBy: "local" } })
  })

  it("a refusal is the sentence useChat shows: text/plain by default, JSON to a client that asks for it", async () => {
    const { agent } = payments()
    const served = await serve(agent, counted().model)
    closing.push(served.close)
    const port = new URL(served.origin).port
    const body = { id: "c-text", messages: [user("hi")] }
    const text = await raw(served.origin, "POST", "/api/chat", { "content-type": "application/json", host: `evil.example:${port}` }, body)
    expect([text.status, text.type, text.body]).toEqual([
      403,
      "text/plain; charset=utf-8",
      `Host "evil.example:${port}" is not a loopback name: open the chat at 127.0.0.1 or localhost`
    ])
    const asked = await raw(served.origin, "POST", "/api/chat", { "content-type": "application/json", accept: "text/html, application/json;q=0.9", host: `evil.example:${port}` }, body)
    expect([asked.status, asked.type, JSON.parse(asked.body)._tag]).toEqual([403, "application/json", "Forbidden"])
    const notJson = await raw(served.origin, "POST", "/api/chat", { "content-type": "application/json", accept: "application/json;q=0", host: `evil.example:${port}` }, body)
    expect([notJson.status, notJson.type]).toEqual([403, "text/plain; charset=utf-8"])
  })
})

/** `Chat.routes` with `authorize`, beside nothing else, on a server of its own on 127.0.0.1. */
const routes = async (authorize: ChatAuthorization.Authorize, model: Layer.Layer<ChatModel.ChatModel>) => {
  const { agent, executed } = payments()
  const scope = Effect.runSync(Scope.make())
  const served = await Effect.runPromise(Scope.provide(
    Effect.gen(function*() {
      const stores = yield* Layer.build(Layer.mergeAll(RunStore.layerMemory(), ChatMemory.layerMemory))
      const server = yield* Layer.build(
        HttpRouter.serve(Chat.routes({ agent, authorize }), { disableLogger: true, disableListenLog: true }).pipe(
          Layer.provideMerge(NodeHttpServer.layer(Http.createServer, { port: 0, host: "127.0.0.1" })),
          Layer.provide(model),
          Layer.provide(Layer.succeedContext(stores))
        )
      )
      const address = Context.get(server, HttpServer.HttpServer).address
      if (address._tag === "UnixPathAddress") return yield* Effect.die(new Error("expected a TCP address"))
      return { origin: `http://127.0.0.1:${address.port}`, store: Context.get(stores, RunStore.RunStore) }
    }).pipe(Effect.orDie),
    scope
  ))
  closing.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  return { ...served, executed }
}

/** A request of the hook's owner: `x-user` names who asks. */
const as = (name: string | undefined) => (name === undefined ? {} : { "x-user": name })

describe("a hook of one's own (Chat.routes)", () => {
  it("is told what each request asks; refuses before anything is looked up or run; its name decides", async () => {
    const seen: Array<string> = []
    /** Each chat is its first user's: others are forbidden it; no x-user is unauthorized. */
    const owners = new Map<string, string>()
    const authorize: ChatAuthorization.Authorize = (request, access) =>
      Effect.gen(function*() {
        const name = request.headers["x-user"]
        seen.push(`${name ?? "nobody"} ${access.action} ${access.chatId}${access.action === "decide" ? ` ${access.runId}` : ""}`)
        if (name === undefined) return yield* new ChatAuthorization.Unauthorized({ message: "Sign in to use this chat" })
        const owner = owners.get(access.chatId) ?? name
        if (owner !== name) return yield* new ChatAuthorization.Forbidden({ message: `Chat ${access.chatId} is ${owner}'s` })
        owners.set(access.chatId, owner)
        return name
      })
    const { calls, model } = counted()
    const served = await routes(authorize, model)
    const send = (name: string | undefined, body: unknown) => post(served.origin, body, as(name))

    // start: nobody is unauthorized, nothing runs
    const nobody = await send(undefined, { id: "c-ada", messages: [user("Send 250 to Ada")] })
    expect([nobody.status, JSON.parse(nobody.body)]).toEqual([401, { _tag: "Unauthorized", message: "Sign in to use this chat" }])
    expect(calls.count).toBe(0)
    const started = await send("ada", { id: "c-ada", messages: [user("Send 250 to Ada")] })
    expect(started.status).toBe(200)
    const { body: approval, runId } = approvalOf("c-ada", started.body)
    // start in another's chat: forbidden, nothing runs
    const intruder = await send("bob", { id: "c-ada", messages: [user("Send 9000 to Bob")] })
    expect([intruder.status, JSON.parse(intruder.body)]).toEqual([403, { _tag: "Forbidden", message: "Chat c-ada is ada's" }])
    expect(calls.count).toBe(1)

    // decide: Bob's approval of Ada's pause is forbidden, and decides nothing
    const before = await record(served, runId)
    const bobs = await send("bob", approval)
    expect([bobs.status, JSON.parse(bobs.body)]).toEqual([403, { _tag: "Forbidden", message: "Chat c-ada is ada's" }])
    expect(await record(served, runId)).toEqual(before)
    expect(served.executed).toEqual([])
    // the hook comes before the store is read: a refused client cannot tell a run that is not there
    const ghost = {
      id: "c-ada",
      messages: [{ id: "x", role: "assistant", parts: [{ type: "tool-transfer", toolCallId: "t1", state: "approval-responded", input: {}, approval: { id: "ghost:1:t1", approved: true } }] }]
    }
    expect((await send("bob", ghost)).status).toBe(403)
    expect((await send("ada", ghost)).status).toBe(404)

    // reattach: forbidden to Bob, the paused message to Ada
    const bobsReplay = await fetch(`${served.origin}/api/chat/c-ada/stream`, { headers: { ...as("bob"), accept: "application/json" } })
    expect([bobsReplay.status, await bobsReplay.json()]).toEqual([403, { _tag: "Forbidden", message: "Chat c-ada is ada's" }])
    const adasReplay = await fetch(`${served.origin}/api/chat/c-ada/stream`, { headers: as("ada") })
    expect([adasReplay.status, await adasReplay.text()]).toEqual([200, started.body])

    // read: the thread forbidden to Bob, Ada's own to her
    const bobsRead = await fetch(`${served.origin}/api/chat/c-ada/messages`, { headers: { ...as("bob"), accept: "application/json" } })
    expect([bobsRead.status, await bobsRead.json()]).toEqual([403, { _tag: "Forbidden", message: "Chat c-ada is ada's" }])
    const adasRead = await fetch(`${served.origin}/api/chat/c-ada/messages`, { headers: as("ada") })
    expect((await adasRead.json()).messages.map((message: { role: string }) => message.role)).toEqual(["user", "assistant"])

    // Ada's approval resumes the run: the hook's name is who decided, and a late approval names her
    const adas = await send("ada", approval)
    expect(adas.status).toBe(200)
    expect(served.executed).toEqual(["Ada 250"])
    expect(await Effect.runPromise(served.store.finished(runId))).toMatchObject({ _tag: "Some", value: { status: "completed", decidedBy: "ada" } })
    const late = await send("ada", approval)
    expect([late.status, JSON.parse(late.body)]).toEqual([
      409,
      { _tag: "AlreadyDecided", runId, status: "completed", decidedBy: "ada", message: `Run ${runId} was already decided by ada: it is completed now` }
    ])

    expect(seen).toEqual([
      "nobody start c-ada",
      "ada start c-ada",
      "bob start c-ada",
      `bob decide c-ada ${runId}`,
      "bob decide c-ada ghost",
      "ada decide c-ada ghost",
      "bob reattach c-ada",
      "ada reattach c-ada",
      "bob read c-ada",
      "ada read c-ada",
      `ada decide c-ada ${runId}`,
      `ada decide c-ada ${runId}`
    ])
  })

  it("takes a hook of the inbox's shape — one parameter, failing with another package's errors of the same tags — and useChat shows its refusal as a sentence", async () => {
    // as @agentfx/inbox's Authorization.Unauthorized would be: an error class of its own, tag "Unauthorized"
    class Unauthorized extends Data.TaggedError("Unauthorized")<{ readonly message: string }> {}
    const inboxShaped = (request: { readonly headers: Readonly<Record<string, string | undefined>> }) =>
      request.headers["authorization"] === "Bearer s3cret"
        ? Effect.succeed("token holder")
        : Effect.fail(new Unauthorized({ message: "A token is required: send Authorization: Bearer <token>" }))
    const served = await routes(inboxShaped, counted().model)

    const tokenless = new DefaultChatTransport({ api: `${served.origin}/api/chat` })
    const withToken = new DefaultChatTransport({ api: `${served.origin}/api/chat`, headers: { authorization: "Bearer s3cret" } })
    const chat = new NodeChat({ id: "c-token", transport: tokenless })
    await chat.sendMessage({ text: "Send 250 to Ada" })
    expect(chat.status).toBe("error")
    expect(chat.error!.message).toBe("A token is required: send Authorization: Bearer <token>")
    expect(chat.messages.map((m) => m.role)).toEqual(["user"])

    const admitted = new NodeChat({ id: "c-token", transport: withToken })
    await admitted.sendMessage({ text: "Send 250 to Ada" })
    expect(admitted.error).toBeUndefined()
    const part = admitted.messages.at(-1)!.parts.find((p) => p.type === "tool-transfer") as any
    expect(part).toMatchObject({ state: "approval-requested" })

    // the approval from a client without the token: refused, shown as the sentence; with it: decided by "token holder"
    const stranger = new NodeChat({ id: "c-token", transport: tokenless })
    stranger.messages = structuredClone(admitted.messages)
    await stranger.addToolApprovalResponse({ id: part.approval.id, approved: true })
    await stranger.sendMessage()
    expect([stranger.status, stranger.error?.message]).toEqual(["error", "A token is required: send Authorization: Bearer <token>"])
    expect(served.executed).toEqual([])
    await admitted.addToolApprovalResponse({ id: part.approval.id, approved: true })
    await admitted.sendMessage()
    expect(admitted.error).toBeUndefined()
    expect(served.executed).toEqual(["Ada 250"])
    const runId = admitted.messages.at(-1)!.id
    expect(await Effect.runPromise(served.store.finished(runId))).toMatchObject({ _tag: "Some", value: { decidedBy: "token holder" } })

    // a late approval: useChat shows who decided, in a sentence
    await stranger.sendMessage()
    expect(stranger.error?.message).toBe("A token is required: send Authorization: Bearer <token>")
    const late = new NodeChat({ id: "c-token", transport: withToken })
    late.messages = structuredClone(stranger.messages)
    await late.sendMessage()
    expect([late.status, late.error?.message]).toEqual(["error", `Run ${runId} was already decided by token holder: it is completed now`])
  })
})

describe("readable errors in useChat (the AI SDK's own client)", () => {
  let served: Served
  afterEach(() => served?.close())

  it("a file the endpoint refuses: the error names the part and the problem, not JSON", async () => {
    served = await serve(payments().agent, counted().model)
    const chat = new NodeChat({ id: "c-file", transport: served.transport })
    await chat.sendMessage({ text: "What is this?", files: [{ type: "file", mediaType: "image/png", filename: "dot.png", url: "data:image/png;base64,iVBO@@@=" }] })
    expect(chat.status).toBe("error")
    expect(chat.error!.message).toBe("messages[0].parts[0] (\"dot.png\"): the data of its data: URL is not base64 (A–Z, a–z, 0–9, + and /, then = padding)")
  })

  it("a file over the agent's limits.fileBytes: named, with its size and the limit", async () => {
    served = await serve(Agent.make({ name: "reader", limits: { fileBytes: 5 } }), counted().model)
    const chat = new NodeChat({ id: "c-big", transport: served.transport })
    await chat.sendMessage({ text: "Read this", files: [{ type: "file", mediaType: "text/plain", filename: "notes.txt", url: `data:text/plain;base64,${Buffer.from("hello world").toString("base64")}` }] })
    expect(chat.error?.message).toBe("messages[0].parts[0] (\"notes.txt\") is 11 bytes, more than the 5 this agent takes (limits.fileBytes)")
  })

  it("a second message while the first runs: the chat is busy, in a sentence", async () => {
    const { agent, release } = payments()
    served = await serve(agent, ScriptedChatModel.layer([ScriptedChatModel.toolCalls({ id: "r1", name: "slow_report", args: {} }), ScriptedChatModel.text("Ready.")], { index: "run" }))
    const reader = (await served.transport.sendMessages({ chatId: "c-busy", messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "Report" }] }], trigger: "submit-message", messageId: undefined, abortSignal: undefined })).getReader()
    for (let read = await reader.read(); !read.done && read.value.type !== "tool-input-available"; read = await reader.read());
    const chat = new NodeChat({ id: "c-busy", transport: served.transport })
    await chat.sendMessage({ text: "Hello?" })
    expect(chat.error?.message).toBe("Chat \"c-busy\" is busy: its last message is still running; send again once it has ended")
    release()
    while (!(await reader.read()).done);
  })
})
