/**
 * A paused run's interrupts answered through AG-UI's `resume`, by `HttpAgent` and by hand:
 * approve with edited arguments, reject with a reason the model is told, reply in the call's
 * place, cancel; each pause resumed exactly once — a second answer, two clients racing, an
 * answer to a pause decided and paused again since, an answer from another thread are refused
 * and nothing runs twice; an answer the endpoint cannot take is a 400 that names it, and the
 * pause stays answerable. An environment pause: its failed calls are interrupts too.
 */
import { ScriptedChatModel } from "@agentfx/core"
import type { Interrupt } from "@ag-ui/client"
import { Effect, Option } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { answering, client, post, refusal, type Served, serve, warnings } from "./agUiFixtures.js"
import { mailer, payments, script } from "./fixtures.js"

let served: Served | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

const transfer = (id: string, to: string, amount: number) => ({ id, name: "transfer", args: { to, amount } })

/** A client of `threadId` whose run paused: its interrupts, and the paused run's id. */
const paused = async (server: Served, threadId: string, text = "Send money") => {
  const { agent, events } = client(server, threadId)
  agent.addMessage({ id: "u1", role: "user", content: text })
  await agent.runAgent()
  expect(agent.pendingInterrupts.length).toBeGreaterThan(0)
  const interrupts: ReadonlyArray<Interrupt> = agent.pendingInterrupts
  return { agent, events, interrupts, runId: interrupts[0]!.id.split(":")[0]! }
}

const resolved = (interrupt: Interrupt, payload: unknown) => ({ interruptId: interrupt.id, status: "resolved" as const, payload })

describe("AG-UI interrupts answered", () => {
  it("approve with edited arguments: the call runs with them, and the client's call shows them; arguments the tool refuses are a 400 naming the answer, the pause answerable", async () => {
    const { agent, executed } = payments()
    let told: unknown
    served = await serve(agent, script(ScriptedChatModel.toolCalls(transfer("t1", "Ada", 250)), (request) => {
      told = request.messages.at(-1)
      return ScriptedChatModel.text("Sent.")
    }))
    const { agent: ag, interrupts } = await paused(served, "t-edit")
    const bad = await refusal(ag.runAgent({ resume: [resolved(interrupts[0]!, { type: "approve", args: { to: "Ada", amount: "lots" } })] }))
    expect(bad.status).toBe(400)
    expect(bad.message).toMatch(new RegExp(`^HTTP 400: resume\\[0\\] \\(interrupt "${interrupts[0]!.id}"\\): transfer refuses it: .*amount`))
    expect(executed).toEqual([])

    await ag.runAgent({ resume: [resolved(interrupts[0]!, { type: "approve", args: { to: "Ada", amount: 200 } })] })
    expect(executed).toEqual(["Ada 200"])
    expect(told).toMatchObject({ _tag: "ToolResult", callId: "t1", content: "sent 200 to Ada" })
    const call = ag.messages.flatMap((m) => m.role === "assistant" ? m.toolCalls ?? [] : []).find((c) => c.id === "t1")
    expect(call?.function.arguments).toBe(`{"to":"Ada","amount":200}`)
    expect(warnings()).toEqual([])
  })

  it("reject with a reason: the call does not run, the model is told why, and the client shows the rejection as the call's result; cancelled rejects without one", async () => {
    const { agent, executed } = payments()
    const told: Array<unknown> = []
    const model = script(
      ScriptedChatModel.toolCalls(transfer("t1", "Mallory", 900)),
      (request) => {
        told.push(request.messages.at(-1))
        return ScriptedChatModel.toolCalls(transfer("t2", "Mallory", 901))
      },
      (request) => {
        told.push(request.messages.at(-1))
        return ScriptedChatModel.text("Not sent.")
      }
    )
    served = await serve(agent, model)
    const { agent: ag, events, interrupts } = await paused(served, "t-reject")
    events.length = 0
    await ag.runAgent({ resume: [resolved(interrupts[0]!, { type: "reject", reason: "not to Mallory" })] })
    expect(told[0]).toMatchObject({ _tag: "ToolResult", callId: "t1", content: "rejected: not to Mallory" })
    expect(events.slice(0, 6).map((e: any) => e.type)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "TOOL_CALL_RESULT"
    ])
    expect(ag.messages.find((m) => m.role === "tool" && m.toolCallId === "t1")?.content).toBe("rejected: not to Mallory")
    // paused again, on t2: cancelled
    const [second] = ag.pendingInterrupts
    expect(second).toMatchObject({ toolCallId: "t2" })
    await ag.runAgent({ resume: [{ interruptId: second!.id, status: "cancelled" }] })
    expect(told[1]).toMatchObject({ _tag: "ToolResult", callId: "t2", content: "rejected" })
    expect(executed).toEqual([])
    expect(ag.messages.at(-1)).toMatchObject({ role: "assistant", content: "Not sent." })
    expect(warnings()).toEqual([])
  })

  it("reply: the person's value is the call's result, as the model is shown it; the call does not run", async () => {
    const { agent, executed } = payments()
    let told: unknown
    served = await serve(agent, script(ScriptedChatModel.toolCalls(transfer("t1", "Ada", 250)), (request) => {
      told = request.messages.at(-1)
      return ScriptedChatModel.text("Noted: sent by hand.")
    }))
    const { agent: ag, interrupts } = await paused(served, "t-reply")
    await ag.runAgent({ resume: [resolved(interrupts[0]!, { type: "reply", value: { sent: "by hand" } })] })
    expect(executed).toEqual([])
    expect(told).toMatchObject({ _tag: "ToolResult", callId: "t1", content: { sent: "by hand" } })
    expect(ag.messages.find((m) => m.role === "tool")?.content).toBe(`{"sent":"by hand"}`)
    expect(warnings()).toEqual([])
  })

  it("a pause resumes once: two clients answering at once get one resume and one 409 naming who decided; a late answer is refused too, and the call ran once", async () => {
    const { agent, executed } = payments()
    served = await serve(agent, script(ScriptedChatModel.toolCalls(transfer("t1", "Ada", 250)), ScriptedChatModel.text("Sent.")))
    const { interrupts, runId } = await paused(served, "t-race")
    const answer = [resolved(interrupts[0]!, { type: "approve" })]
    const [first, second] = await Promise.all([
      client(served, "t-race").agent.runAgent({ resume: answer }).then(() => "resumed", (error: Error) => error.message),
      client(served, "t-race").agent.runAgent({ resume: answer }).then(() => "resumed", (error: Error) => error.message)
    ])
    expect([first, second].filter((r) => r === "resumed")).toHaveLength(1)
    expect([first, second].find((r) => r !== "resumed")).toMatch(new RegExp(`^HTTP 409: Run ${runId} was already decided by local: it is (running|completed) now$`))
    expect(executed).toEqual(["Ada 250"])

    const late = await post(served, answering("t-race", answer))
    expect(late.status).toBe(409)
    expect(JSON.parse(late.body)).toMatchObject({ _tag: "AlreadyDecided", runId, status: "completed", decidedBy: "local" })
    expect(executed).toEqual(["Ada 250"])
  })

  it("an answer names its pause: after the run paused again, the old answer is refused (409); from another thread it is not found (404), as is an unknown run", async () => {
    const { agent, executed } = payments()
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls(transfer("t1", "Ada", 250)),
      ScriptedChatModel.toolCalls(transfer("t1", "Mallory", 9000)),
      ScriptedChatModel.text("Both sent.")
    ))
    const { agent: ag, interrupts, runId } = await paused(served, "t-again")
    const first = [resolved(interrupts[0]!, { type: "approve" })]
    await ag.runAgent({ resume: first })
    expect(executed).toEqual(["Ada 250"])
    expect(ag.pendingInterrupts[0]).toMatchObject({ toolCallId: "t1_2" })

    const stale = await post(served, answering("t-again", first))
    expect(stale.status).toBe(409)
    expect(JSON.parse(stale.body)).toMatchObject({
      _tag: "AlreadyDecided",
      status: "paused",
      // the store keeps who decided until the run pauses again
      message: `Run ${runId} was already decided, and paused again since: answer its current interrupts`
    })
    const elsewhere = await post(served, answering("t-other", [resolved(ag.pendingInterrupts[0]!, { type: "approve" })]))
    expect([elsewhere.status, JSON.parse(elsewhere.body)]).toEqual([404, { _tag: "RunNotFound", runId, message: `Run ${runId} is not a run of thread t-other` }])
    const unknown = await post(served, answering("t-again", [{ interruptId: "no-such-run:1:t1", status: "resolved", payload: { type: "approve" } }]))
    expect([unknown.status, JSON.parse(unknown.body).message]).toEqual([404, "No record of run no-such-run in the run store"])
    expect(executed).toEqual(["Ada 250"])
  })

  it("answers the endpoint cannot take are 400s that say which and why; nothing runs, and the pause is then answered", async () => {
    const { agent, executed } = payments()
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls(transfer("t1", "Ada", 250), transfer("t2", "Bob", 300)),
      ScriptedChatModel.text("Both sent.")
    ))
    const { agent: ag, interrupts, runId } = await paused(served, "t-bad")
    const [one, two] = interrupts
    const ids = `"${one!.id}", "${two!.id}"`
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<unknown>, string]> = [
      ["an id the endpoint never sent", [{ interruptId: "approve-all", status: "resolved", payload: { type: "approve" } }, resolved(two!, { type: "approve" })], `resume[0]: the interrupt id "approve-all" is not one this endpoint sent`],
      ["an interrupt not of the pause", [resolved(one!, { type: "approve" }), { interruptId: `${runId}:1:t9`, status: "resolved", payload: { type: "approve" } }], `resume[1]: the interrupt "${runId}:1:t9" is not one of run ${runId}'s pause (its interrupts: ${ids})`],
      ["an interrupt left unanswered", [resolved(one!, { type: "approve" })], `The resume leaves 1 of run ${runId}'s interrupts unanswered (call t2): answer each of its interrupts (${ids}), resolved or cancelled`],
      ["one answered twice", [resolved(one!, { type: "approve" }), resolved(one!, { type: "reject" })], `resume[1] (interrupt "${one!.id}") answers the interrupt resume[0] answered: answer each interrupt once`],
      ["resolved without an answer", [{ interruptId: one!.id, status: "resolved" }, resolved(two!, { type: "approve" })], `resume[0] (interrupt "${one!.id}") is resolved without a payload: send { "type": "approve" }`],
      ["an answer of another kind", [resolved(one!, { type: "maybe" }), resolved(two!, { type: "approve" })], `resume[0] (interrupt "${one!.id}"): its payload is not an answer (`],
      ["a reply without its value", [resolved(one!, { type: "reply" }), resolved(two!, { type: "approve" })], `resume[0] (interrupt "${one!.id}"): its payload is not an answer (`],
      ["answers of two runs", [resolved(one!, { type: "approve" }), { interruptId: "other-run:1:t2", status: "resolved", payload: { type: "approve" } }], `The resume answers interrupts of 2 runs (${runId}, other-run): answer one pause at a time`]
    ]
    for (const [name, resume, problem] of cases) {
      const reply = await post(served, answering("t-bad", resume))
      expect([name, reply.status, JSON.parse(reply.body)._tag]).toEqual([name, 400, "InvalidRequest"])
      expect(JSON.parse(reply.body).message.startsWith(problem), `${name}: ${JSON.parse(reply.body).message}`).toBe(true)
    }
    expect(executed).toEqual([])
    await ag.runAgent({ resume: [resolved(one!, { type: "approve" }), resolved(two!, { type: "reject", reason: "not Bob" })] })
    expect(executed).toEqual(["Ada 250"])
    expect(ag.messages.at(-1)).toMatchObject({ role: "assistant", content: "Both sent." })
  })

  it("a malformed, oversized or misdirected body while a run is paused is refused with its typed error; the pause is as it was, and its answer then resumes it", async () => {
    const { agent, executed } = payments()
    served = await serve(agent, script(ScriptedChatModel.toolCalls(transfer("t1", "Ada", 250)), ScriptedChatModel.text("Sent.")))
    const { agent: ag, interrupts, runId } = await paused(served, "t-kept")
    const before = await Effect.runPromise(Effect.map(served.store.get(runId), Option.getOrUndefined))
    expect(before).toMatchObject({ status: "paused" })
    const answer = [resolved(interrupts[0]!, { type: "approve" })]
    const json = JSON.stringify(answering("t-kept", answer))
    const cases: ReadonlyArray<readonly [string, string, number, string, string]> = [
      ["cut off", json.slice(0, -3), 400, "InvalidRequest", "The body is not JSON: "],
      ["over 16 MiB", JSON.stringify({ ...answering("t-kept", answer), padding: "x".repeat(17 * 1024 * 1024) }), 400, "InvalidRequest", "The body could not be read: larger than 16777216 bytes"],
      ["without a thread", JSON.stringify({ runId: "r", messages: [], resume: answer }), 400, "InvalidRequest", "The body is not a RunAgentInput: "],
      ["to another thread", JSON.stringify(answering("t-elsewhere", answer)), 404, "RunNotFound", `Run ${runId} is not a run of thread t-elsewhere`],
      ["naming a run that does not exist", JSON.stringify(answering("t-kept", [{ ...answer[0]!, interruptId: `no-${runId}:1:t1` }])), 404, "RunNotFound", `No record of run no-${runId} in the run store`]
    ]
    for (const [name, body, status, tag, problem] of cases) {
      const reply = await post(served, body)
      const error = JSON.parse(reply.body)
      expect([name, reply.status, error._tag]).toEqual([name, status, tag])
      expect(error.message.startsWith(problem), `${name}: ${error.message}`).toBe(true)
    }
    expect(executed).toEqual([])
    expect(await Effect.runPromise(Effect.map(served.store.get(runId), Option.getOrUndefined))).toEqual(before)
    await ag.runAgent({ resume: answer })
    expect(executed).toEqual(["Ada 250"])
    expect(ag.messages.at(-1)).toMatchObject({ role: "assistant", content: "Sent." })
    expect(warnings()).toEqual([])
  })

  it("an environment pause: its failed calls are tool_failure interrupts; approved all, they run again; a mix, or an edit, is refused", async () => {
    const { agent, state } = mailer()
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls({ id: "m1", name: "send_mail", args: { to: "ada" } }, { id: "m2", name: "send_mail", args: { to: "bob" } }),
      (request) => ScriptedChatModel.text(`results: ${request.messages.filter((m) => m._tag === "ToolResult").length}`)
    ))
    const { agent: ag, interrupts, runId } = await paused(served, "t-env", "Mail Ada and Bob")
    expect(interrupts.map((i) => [i.toolCallId, i.reason, i.message])).toEqual([
      ["m1", "tool_failure", "send_mail failed: no SMTP credentials"],
      ["m2", "tool_failure", "send_mail failed: no SMTP credentials"]
    ])
    expect(ag.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["environment error: no SMTP credentials", "environment error: no SMTP credentials"])
    const mixed = await refusal(ag.runAgent({ resume: [resolved(interrupts[0]!, { type: "approve" }), resolved(interrupts[1]!, { type: "reject" })] }))
    expect(mixed).toEqual({
      status: 422,
      message: `HTTP 422: Run ${runId} paused for its environment: approve every failed call (they run again) or reject every one (the model is told they failed)`
    })
    const edited = await post(served, answering("t-env", [resolved(interrupts[0]!, { type: "approve", args: { to: "eve" } }), resolved(interrupts[1]!, { type: "approve" })]))
    expect([edited.status, JSON.parse(edited.body).message]).toEqual([
      400,
      `resume[0] (interrupt "${interrupts[0]!.id}"): a call that failed for its environment is approved (tried again) or rejected (the model is told it failed), not edited or replied to`
    ])
    expect(state.sent).toBe(0)
    state.fixed = true
    await ag.runAgent({ resume: interrupts.map((i) => resolved(i, { type: "approve" })) })
    expect(state.sent).toBe(2)
    expect(ag.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["mailed ada", "mailed bob"])
    expect(ag.messages.at(-1)).toMatchObject({ role: "assistant", content: "results: 2" })
    expect(warnings()).toEqual([])
  })
})
