/**
 * Who may use the AG-UI endpoint, on every path — a run started, its interrupts answered, a
 * run reattached: the default (`ChatAuthorization.loopback()`) refusing a foreign `Host` (DNS
 * rebinding), another origin and a proxied request with 403, nothing started or decided; a hook
 * of one's own, told what each request asks (the thread is `access.chatId`), whose name decides —
 * and its refusal as `HttpAgent` reports it.
 */
import { ScriptedChatModel } from "@agentfx/core"
import { Effect, Option } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { ChatAuthorization } from "../src/index.js"
import { answering, client, refusal, said, type Served, serve } from "./agUiFixtures.js"
import { payments, raw, script, strangers } from "./fixtures.js"

let served: Served | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

const json = { "content-type": "application/json", accept: "application/json" }
const model = () => script(ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }), ScriptedChatModel.text("Sent."))

describe("the default: clients on this machine only (AgUi.serve on 127.0.0.1)", () => {
  it("a foreign Host (DNS rebinding), another origin or a proxied request cannot start a run, answer its interrupt or reattach: 403, nothing started or decided", async () => {
    const { agent, executed } = payments()
    served = await serve(agent, model())
    const port = new URL(served.origin).port
    const refusals = strangers(served.origin)
    for (const { headers, message } of refusals) {
      const refused = await raw(served.origin, "POST", "/api/agui", { ...json, ...headers }, said("t-guarded", "Send 250 to Ada"))
      expect([refused.status, JSON.parse(refused.body)]).toEqual([403, { _tag: "Forbidden", message }])
    }
    expect(await Effect.runPromise(served.store.list())).toEqual([])

    // from this machine: the run starts and pauses
    const { agent: ag } = client(served, "t-guarded")
    ag.addMessage({ id: "u1", role: "user", content: "Send 250 to Ada" })
    await ag.runAgent()
    const [interrupt] = ag.pendingInterrupts
    const runId = interrupt!.id.split(":")[0]!
    const before = await Effect.runPromise(Effect.map(served.store.get(runId), Option.getOrUndefined))
    expect(before).toMatchObject({ status: "paused" })
    const answer = answering("t-guarded", [{ interruptId: interrupt!.id, status: "resolved", payload: { type: "approve" } }])
    for (const { headers, message } of refusals) {
      const refused = await raw(served.origin, "POST", "/api/agui", { ...json, ...headers }, answer)
      expect([refused.status, JSON.parse(refused.body)]).toEqual([403, { _tag: "Forbidden", message }])
      const reattach = await raw(served.origin, "GET", "/api/agui/t-guarded/stream", { accept: "application/json", ...headers })
      expect([reattach.status, JSON.parse(reattach.body)]).toEqual([403, { _tag: "Forbidden", message }])
    }
    expect(executed).toEqual([])
    expect(await Effect.runPromise(Effect.map(served.store.get(runId), Option.getOrUndefined))).toEqual(before)

    // the answer from this machine resumes it
    const approved = await raw(served.origin, "POST", "/api/agui", { ...json, host: `localhost:${port}` }, answer)
    expect(approved.status).toBe(200)
    expect(executed).toEqual(["Ada 250"])
  })
})

describe("a hook of one's own", () => {
  it("is told what each request asks; refuses before anything is looked up or run; its name decides", async () => {
    const seen: Array<string> = []
    const authorize: ChatAuthorization.Authorize = (request, access) =>
      Effect.gen(function*() {
        const name = request.headers["x-user"]
        seen.push(`${name ?? "nobody"} ${access.action} ${access.chatId}${access.action === "decide" ? ` ${access.runId}` : ""}`)
        if (name === undefined) return yield* new ChatAuthorization.Unauthorized({ message: "Sign in first" })
        if (name !== "ada") return yield* new ChatAuthorization.Forbidden({ message: `Thread ${access.chatId} is ada's` })
        return name
      })
    const { agent, executed } = payments()
    served = await serve(agent, model(), authorize)
    const nobody = client(served, "t-hook")
    nobody.agent.addMessage({ id: "u1", role: "user", content: "Send 250 to Ada" })
    expect(await refusal(nobody.agent.runAgent())).toEqual({ status: 401, message: "HTTP 401: Sign in first" })
    expect(await Effect.runPromise(served.store.list())).toEqual([])

    const ada = client(served, "t-hook")
    ada.agent.headers = { "x-user": "ada" }
    ada.agent.addMessage({ id: "u1", role: "user", content: "Send 250 to Ada" })
    await ada.agent.runAgent()
    const [interrupt] = ada.agent.pendingInterrupts
    const runId = interrupt!.id.split(":")[0]!
    const resume = [{ interruptId: interrupt!.id, status: "resolved" as const, payload: { type: "approve" } }]

    const bob = client(served, "t-hook")
    bob.agent.headers = { "x-user": "bob" }
    expect(await refusal(bob.agent.runAgent({ resume }))).toEqual({ status: 403, message: "HTTP 403: Thread t-hook is ada's" })
    expect(await refusal(bob.agent.connectAgent())).toEqual({ status: 403, message: "HTTP 403: Thread t-hook is ada's" })
    expect(executed).toEqual([])

    await ada.agent.runAgent({ resume })
    expect(executed).toEqual(["Ada 250"])
    expect(await Effect.runPromise(served.store.finished(runId))).toMatchObject({ _tag: "Some", value: { status: "completed", decidedBy: "ada" } })
    expect(seen).toEqual([
      "nobody start t-hook",
      "ada start t-hook",
      `bob decide t-hook ${runId}`,
      "bob reattach t-hook",
      `ada decide t-hook ${runId}`
    ])
  })
})
