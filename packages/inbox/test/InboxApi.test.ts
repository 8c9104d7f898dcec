/**
 * The inbox's HTTP API on a real server (127.0.0.1:0), spoken to with fetch: every endpoint,
 * every error with its status and body.
 */
import { Agent, ChatMemory, ChatModel, Gate, Message, RunStore, ScriptedChatModel, Tool, ToolError } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Deferred, Effect, Exit, Fiber, Layer, Logger, Option, Schema, Scope } from "effect"
import { createHash } from "node:crypto"
import * as Net from "node:net"
import { DecisionLog } from "../src/index.js"
import { balance, bank, decide, events, model, request, serve } from "./fixtures.js"

const runs = (origin: string) => `${origin}/inbox/api/runs`

/** Runs `body` with a logger that keeps each line (level, message, cause) in `logged`. */
const withLogs = <A, E, R>(body: (logged: ReadonlyArray<string>) => Effect.Effect<A, E, R>) => {
  const logged: Array<string> = []
  const logger = Logger.make(({ cause, logLevel, message }) => {
    logged.push(`${logLevel.toUpperCase()} ${String(message)} ${Cause.pretty(cause)}`)
  })
  return body(logged).pipe(Effect.provide(Logger.layer([logger])))
}

/** A POST whose answer may come before its body is sent (the server stops reading): the answer as read off the socket, whatever happens to the upload. */
const earlyAnswer = (url: string, body: string) =>
  Effect.callback<{ status: number; body: any }>((resume) => {
    const { hostname, pathname, port } = new URL(url)
    let received = ""
    const socket = Net.connect(Number(port), hostname, () => {
      socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`)
      socket.end(body)
    })
    socket.on("data", (chunk) => (received += chunk))
    socket.on("error", () => {}) // the upload is cut off once the server has answered
    socket.on("close", () => {
      const [head = "", text = ""] = received.split("\r\n\r\n")
      resume(Effect.succeed({ status: Number(head.split(" ")[1]), body: JSON.parse(text) }))
    })
  })

describe("GET /inbox/api/runs", () => {
  it.live("lists the paused runs of the inbox's agents, with their pending calls; a run of another agent is not listed", () =>
    Effect.gen(function*() {
      const one = bank("bank")
      const other = bank("other-bank")
      const inbox = yield* serve([one.agent])
      const first = yield* inbox.pause(one.agent, "pay Ada 250", "c-1")
      yield* inbox.pause(other.agent, "pay Ada 300", "c-2")
      const second = yield* inbox.pause(one.agent, "pay Ada 400")
      const reply = yield* request(runs(inbox.origin))
      expect(reply.status).toBe(200)
      expect(reply.body.map((r: any) => [r.runId, r.agent, r.conversationId, r.ephemeral, r.kind, r.pending])).toEqual([
        [second, "bank", `ephemeral-${second}`, true, "approval", [{ callId: "t1", toolName: "transfer", args: { to: "Ada", amount: 400 } }]],
        [first, "bank", "c-1", false, "approval", [{ callId: "t1", toolName: "transfer", args: { to: "Ada", amount: 250 } }]]
      ])
      for (const run of reply.body) {
        expect(run.ageMillis).toBeGreaterThanOrEqual(0)
        expect(run.ageMillis).toBeLessThan(60_000)
      }
      const limited = yield* request(`${runs(inbox.origin)}?limit=1`)
      expect(limited.body.map((r: any) => r.runId)).toEqual([second])
      const bad = yield* request(`${runs(inbox.origin)}?limit=0`)
      expect([bad.status, bad.body]).toEqual([400, { _tag: "InvalidQuery", message: "The query is not valid: limit: Expected a value between 1 and 500" }])
    }))

  it.live("a store that fails is a 503 with its message", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const inbox = yield* serve([agent], {
        storeView: (store) => ({ ...store, list: () => Effect.fail(new RunStore.StoreError({ message: "database is locked" })) })
      })
      const reply = yield* request(runs(inbox.origin))
      expect(reply.status).toBe(503)
      expect(reply.body).toEqual({ _tag: "Unavailable", message: "database is locked" })
    }))
})

describe("a record that cannot be read", () => {
  it.live("is left out of the list; asked for alone, it is a 503 naming the run and what is wrong", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const broken = (record: RunStore.RunRecord): RunStore.RunRecord => ({ ...record, checkpoint: { format: "agentfx/checkpoint", version: 2 } })
      const inbox = yield* serve([agent], {
        storeView: (store) => ({
          ...store,
          get: (runId) => Effect.map(store.get(runId), Option.map(broken)),
          list: (filter) => Effect.map(store.list(filter), (records) => records.map(broken))
        })
      })
      const runId = yield* inbox.pause(agent, "pay Ada 250")
      expect((yield* request(runs(inbox.origin))).body).toEqual([])
      const one = yield* request(`${runs(inbox.origin)}/${runId}`)
      expect(one.status).toBe(503)
      expect(one.body._tag).toBe("Unavailable")
      expect(one.body.message).toMatch(new RegExp(`^The record of run ${runId} cannot be read: `))
      expect(one.body.message).toContain(`["agent"]`)
    }))
})

describe("a record written by the previous version (checkpoint format 2)", () => {
  it.live("is read like one of today's: listed, and shown with its calls and conversation", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const older = (record: RunStore.RunRecord): RunStore.RunRecord => ({ ...record, checkpoint: { ...(record.checkpoint as object), version: 2 } })
      const inbox = yield* serve([agent], {
        storeView: (store) => ({
          ...store,
          get: (runId) => Effect.map(store.get(runId), Option.map(older)),
          list: (filter) => Effect.map(store.list(filter), (records) => records.map(older))
        })
      })
      const runId = yield* inbox.pause(agent, "pay Ada 250", "c-older")
      expect((yield* request(runs(inbox.origin))).body.map((r: any) => r.runId)).toEqual([runId])
      const one = yield* request(`${runs(inbox.origin)}/${runId}`)
      expect(one.status).toBe(200)
      expect(one.body).toMatchObject({ runId, pending: [{ callId: "t1", toolName: "transfer" }], messages: [{ _tag: "User", text: "pay Ada 250" }, {}] })
    }))
})

describe("GET /inbox/api/runs/:runId", () => {
  it.live("a paused run: its calls with their tool's description and JSON Schema, the arguments, the conversation, the decisions that fit", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const inbox = yield* serve([agent])
      const runId = yield* inbox.pause(agent, "pay Ada 250", "c-1")
      const reply = yield* request(`${runs(inbox.origin)}/${runId}`)
      expect(reply.status).toBe(200)
      const transfer = agent.toolkit.entries.get("transfer")!
      expect(reply.body).toMatchObject({
        runId,
        agent: "bank",
        conversationId: "c-1",
        kind: "approval",
        why: "its gate asked a person about 1 call: nothing of the batch runs before they are decided",
        pending: [{
          callId: "t1",
          toolName: "transfer",
          description: "Sends money to a person",
          parameters: JSON.parse(JSON.stringify(transfer.parametersJsonSchema)),
          args: { to: "Ada", amount: 250 },
          why: "transfer needs approval for every call (needsApproval: true)"
        }],
        messages: [
          { _tag: "User", text: "pay Ada 250" },
          { _tag: "Assistant", text: "", toolCalls: [{ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }] }
        ],
        accepts: ["ApproveAll", "RejectAll", "ByCall"]
      })
      expect(reply.body.pending[0].parameters.properties.amount).toMatchObject({ type: "number", exclusiveMinimum: 0, maximum: 10_000 })
    }))

  it.live("why each call waits: the reason its gate recorded, or that it gave none", () =>
    Effect.gen(function*() {
      const twoCalls = ScriptedChatModel.layer(() =>
        ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }, { id: "b1", name: "balance", args: {} })
      )
      const { agent: careful } = bank("careful", (input) =>
        input.name === "transfer" ? Gate.pause({ why: "transfers over 100 are checked by a person" }) : Gate.pause())
      const inbox = yield* serve([careful], { model: twoCalls })
      const paused = yield* inbox.inStores(Agent.run(careful, { input: "pay Ada 250" }).pipe(Effect.provide(twoCalls)))
      const reply = yield* request(`${runs(inbox.origin)}/${paused.runId}`)
      expect(reply.body.pending.map((p: any) => [p.callId, p.why])).toEqual([
        ["t1", "transfers over 100 are checked by a person"],
        ["b1", "the agent's gate paused it, and gave no reason"]
      ])
      expect(reply.body.why).toBe("its gate asked a person about 2 calls: nothing of the batch runs before they are decided")
    }))

  it.live("an unknown run is a 404; a run of an agent the inbox was not given is a 422", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const other = bank("other-bank")
      const inbox = yield* serve([agent])
      const missing = yield* request(`${runs(inbox.origin)}/no-such-run`)
      expect(missing.status).toBe(404)
      expect(missing.body).toEqual({ _tag: "RunNotFound", runId: "no-such-run", message: "No record of run no-such-run in the run store" })
      const runId = yield* inbox.pause(other.agent, "pay Ada 10")
      const foreign = yield* request(`${runs(inbox.origin)}/${runId}`)
      expect(foreign.status).toBe(422)
      expect(foreign.body).toEqual({
        _tag: "UnknownAgent",
        agent: "other-bank",
        message: `Run of agent "other-bank", which this inbox was not given (it has bank)`
      })
    }))
})

describe("an environment pause", () => {
  it.live("shows the failed call with its error and accepts Retry or Report; Retry runs the call again", () =>
    Effect.gen(function*() {
      let attempts = 0
      const upload = Tool.make("transfer", {
        description: "Uploads the report",
        parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
        success: Schema.String,
        handler: () => {
          attempts++
          return attempts === 1 ? Effect.fail(ToolError.environment("the disk is full")) : Effect.succeed("uploaded")
        }
      })
      const agent = Agent.make({ name: "uploader", tools: [upload], onEnvironmentError: "pause" })
      const inbox = yield* serve([agent])
      const runId = yield* inbox.pause(agent, "upload 1")
      const run = yield* request(`${runs(inbox.origin)}/${runId}`)
      expect(run.body).toMatchObject({
        kind: "environment",
        why: "1 call failed with an environment error: Retry runs it again once the cause is fixed, Report gives the error to the model",
        accepts: ["Retry", "Report"],
        pending: [{
          callId: "t1",
          toolName: "transfer",
          description: "Uploads the report",
          why: "it failed with an environment error: the disk is full",
          error: { reason: "environment", message: "the disk is full" }
        }]
      })
      const retried = yield* decide(inbox.origin, runId, { _tag: "Retry" })
      const stream = yield* events(`${inbox.origin}${retried.body.events}`)
      expect(stream.events.at(-1)!.data).toMatchObject({ _tag: "RunCompleted", text: `Done: "uploaded"` })
      expect(attempts).toBe(2)
    }))
})

describe("a run out of iterations", () => {
  it.live("is listed with reason max-iterations and accepts Continue; a run that stops again ends its stream with RunFailed", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ name: "looper", tools: [balance], maxIterations: 1 })
      const looping = ScriptedChatModel.layer(() => ScriptedChatModel.toolCalls({ id: "b1", name: "balance", args: {} }))
      const inbox = yield* serve([agent], { model: looping })
      const stopped = yield* inbox.inStores(Effect.flip(Agent.run(agent, { input: "check the balance" }).pipe(Effect.provide(looping))))
      expect(stopped._tag).toBe("MaxIterationsReached")
      const [listed] = (yield* request(runs(inbox.origin))).body
      const run = yield* request(`${runs(inbox.origin)}/${listed.runId}`)
      expect(run.body).toMatchObject({
        agent: "looper",
        kind: "max-iterations",
        why: "no answer after 1 iteration (the agent's maxIterations): Continue allows as many again",
        accepts: ["Continue"],
        pending: []
      })
      const continued = yield* decide(inbox.origin, listed.runId, { _tag: "Continue" })
      expect(continued.status).toBe(202)
      const stream = yield* events(`${inbox.origin}${continued.body.events}`)
      expect(stream.events.map((e) => e.data._tag)).toEqual([
        "RunResumed", "ModelCalled", "ModelResponded", "ToolStarted", "ToolSucceeded", "RunFailed"
      ])
      expect(stream.events.at(-1)!.data).toMatchObject({
        error: "MaxIterationsReached",
        message: "No answer after 1 iteration; resume the checkpoint with Decision.continue() to go on"
      })
      expect((yield* request(runs(inbox.origin))).body.map((r: any) => [r.runId, r.kind])).toEqual([[listed.runId, "max-iterations"]])
    }))
})

describe("a run out of budget", () => {
  it.live("is listed with reason budget and accepts Continue; without a raise it stops again at once; with one it completes; a bad raise is a 400", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ name: "metered", tools: [balance], budget: { modelCalls: 1 } })
      const asksOnce = ScriptedChatModel.layer((request) =>
        request.messages.at(-1)?._tag === "User"
          ? ScriptedChatModel.toolCalls({ id: "b1", name: "balance", args: {} })
          : ScriptedChatModel.text("The balance is 1000")
      )
      const inbox = yield* serve([agent], { model: asksOnce })
      const stopped = yield* inbox.inStores(Effect.flip(Agent.run(agent, { input: "check the balance", conversationId: "c-budget" }).pipe(Effect.provide(asksOnce))))
      expect(stopped._tag === "BudgetExceeded" && [stopped.limit, stopped.allowed, stopped.used]).toEqual(["modelCalls", 1, 1])
      const [listed] = (yield* request(runs(inbox.origin))).body
      expect([listed.agent, listed.kind, listed.pending]).toEqual(["metered", "budget", []])
      const run = yield* request(`${runs(inbox.origin)}/${listed.runId}`)
      expect(run.body).toMatchObject({
        kind: "budget",
        why: "it reached a limit of its budget (modelCalls 1): Continue with the limit raised",
        accepts: ["Continue"],
        pending: []
      })
      // a limit that is not a positive integer: the Schema of the decision refuses it, nothing runs
      const bad = yield* decide(inbox.origin, listed.runId, { _tag: "Continue", raise: { modelCalls: 0 } })
      expect([bad.status, bad.body._tag]).toEqual([400, "InvalidDecision"])
      expect(bad.body.message).toContain(`Expected a value greater than 0, got 0\n  at ["raise"]["modelCalls"]`)
      const unraised = yield* decide(inbox.origin, listed.runId, { _tag: "Continue" })
      expect(unraised.status).toBe(202)
      const again = yield* events(`${inbox.origin}${unraised.body.events}`)
      expect(again.events.map((e) => e.data._tag)).toEqual(["RunResumed", "RunFailed"])
      expect(again.events[1]!.data).toMatchObject({
        error: "BudgetExceeded",
        message: "Budget reached: modelCalls 1 of 1; resume the checkpoint with Decision.continue({ raise }) to go on"
      })
      expect((yield* request(runs(inbox.origin))).body.map((r: any) => [r.runId, r.kind])).toEqual([[listed.runId, "budget"]])
      const raised = yield* decide(inbox.origin, listed.runId, { _tag: "Continue", raise: { modelCalls: 2 } }, "Ada")
      expect([raised.status, raised.body.decidedBy]).toEqual([202, "Ada"])
      const done = yield* events(`${inbox.origin}${raised.body.events}`)
      expect(done.events.map((e) => e.data._tag)).toEqual(["RunResumed", "ModelCalled", "TextDelta", "ModelResponded", "RunCompleted"])
      expect(done.events[0]!.data).toMatchObject({ decision: "Continue", decidedBy: "Ada" })
      expect(done.events.at(-1)!.data.text).toBe("The balance is 1000")
      expect((yield* request(runs(inbox.origin))).body).toEqual([])
    }))
})

describe("POST /inbox/api/runs/:runId/decision", () => {
  it.live("approves: 202 with who decided and when; the run completes; the events stream to the end; the run is no longer listed", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const inbox = yield* serve([agent])
      const runId = yield* inbox.pause(agent, "pay Ada 250", "c-1")
      const before = Date.now()
      const { version } = Option.getOrThrow(yield* inbox.store.get(runId))
      const reply = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" }, "Zoë Ödegaard")
      expect(reply.status).toBe(202)
      // the pause decided: a reconnecting client that reaches another replica of the inbox is followed there
      expect(reply.body).toMatchObject({ runId, decidedBy: "Zoë Ödegaard", events: `/inbox/api/runs/${runId}/events?revision=${version}` })
      expect(reply.body.decidedAt).toBeGreaterThanOrEqual(before)
      const stream = yield* events(`${inbox.origin}${reply.body.events}`)
      expect(stream.status).toBe(200)
      expect(stream.contentType).toBe("text/event-stream")
      expect(stream.events.map((e) => [e.id, e.data._tag])).toEqual([
        ["1-0", "RunResumed"],
        ["1-1", "ToolStarted"],
        ["1-2", "ToolSucceeded"],
        ["1-3", "ModelCalled"],
        ["1-4", "TextDelta"],
        ["1-5", "ModelResponded"],
        ["1-6", "RunCompleted"]
      ])
      expect(stream.events[0]!.data).toMatchObject({ runId, conversationId: "c-1", agent: "bank", decision: "ApproveAll", decidedBy: "Zoë Ödegaard" })
      expect(stream.events[6]!.data.text).toBe(`Done: "sent 250 to Ada"`)
      expect(executed).toEqual(["t1 Ada 250"])
      expect((yield* request(runs(inbox.origin))).body).toEqual([])
      const later = yield* request(`${runs(inbox.origin)}/${runId}`)
      expect(later.status).toBe(409)
      expect(later.body).toEqual({
        _tag: "AlreadyDecided",
        runId,
        status: "completed",
        decidedBy: "Zoë Ödegaard",
        decidedAt: reply.body.decidedAt,
        message: `Run ${runId} was already decided by Zoë Ödegaard: it is completed now`
      })
    }))

  it.live("edited arguments that do not decode: 422 naming the call and the problem; the run stays paused; fixed, they run", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const inbox = yield* serve([agent])
      const runId = yield* inbox.pause(agent, "pay Ada 250", "c-1")
      const refused = yield* decide(inbox.origin, runId, { _tag: "ByCall", decisions: { t1: { _tag: "Approve", args: { to: "Ada", amount: -5 } } } })
      expect(refused.status).toBe(422)
      expect(refused.body._tag).toBe("DecisionRefused")
      expect(refused.body.error).toBe("InvalidEditedArguments")
      expect(refused.body.problems).toHaveLength(1)
      expect(refused.body.problems[0]).toMatchObject({ callId: "t1", toolName: "transfer" })
      expect(refused.body.problems[0].message).toContain("amount: Expected a value greater than 0, got -5")
      expect(refused.body.message).toBe(`Invalid edited arguments: t1 (transfer): ${refused.body.problems[0].message}`)
      expect((yield* request(runs(inbox.origin))).body.map((r: any) => r.runId)).toEqual([runId])
      const fixed = yield* decide(inbox.origin, runId, { _tag: "ByCall", decisions: { t1: { _tag: "Approve", args: { to: "Ada", amount: 5 } } } })
      expect(fixed.status).toBe(202)
      yield* events(`${inbox.origin}${fixed.body.events}`)
      expect(executed).toEqual(["t1 Ada 5"])
    }))

  it.live("a body nested thousands of levels deep, never a 500: in edited arguments or a reply, 422 naming the agent's limit; elsewhere (a raise, a reason, a tag, an unexpected field), 400 naming the inbox's; the run stays paused", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const inbox = yield* serve([agent])
      const runId = yield* inbox.pause(agent, "pay Ada 250", "c-1")
      const post = (body: string) =>
        request(`${runs(inbox.origin)}/${encodeURIComponent(runId)}/decision`, { method: "POST", headers: { "content-type": "application/json" }, body })
      const deep = "[".repeat(50_000) + "]".repeat(50_000)
      const refused = yield* post(`{"_tag":"ByCall","decisions":{"t1":{"_tag":"Approve","args":{"to":"Ada","amount":${deep}}}}}`)
      expect([refused.status, refused.body.error, refused.body.problems]).toEqual([422, "InvalidEditedArguments", [
        { callId: "t1", toolName: "transfer", message: "the edited arguments nest deeper than 64 levels (the agent's limit)" }
      ]])
      const shallower = "[".repeat(5_000) + "]".repeat(5_000)
      const bodies = [
        `{"_tag":"Continue","raise":{"tokens":${shallower}}}`,
        `{"_tag":"ByCall","decisions":{"t1":{"_tag":"Reject","message":${shallower}}}}`,
        `{"_tag":${shallower}}`,
        `{"_tag":"ApproveAll","args":${shallower}}`,
        `{"_tag":"ByCall","decisions":{"t1":{"_tag":"Approve","value":${shallower}}}}`,
        `{"_tag":"ByCall","decisions":[{"_tag":"Reply","value":${shallower}}]}`
      ]
      for (const body of bodies) {
        expect(yield* Effect.map(post(body), (refused) => [refused.status, refused.body])).toEqual([400, {
          _tag: "InvalidDecision",
          message: "The body nests deeper than 16 levels outside edited arguments and replies (a decision has 3)"
        }])
      }
      const replied = yield* post(`{"_tag":"ByCall","decisions":{"t1":{"_tag":"Reply","value":${shallower}}}}`)
      expect([replied.status, replied.body.problems]).toEqual([422, [
        { callId: "t1", toolName: "transfer", message: "the reply's values nest deeper than 64 levels (the agent's limit)" }
      ]])
      expect((yield* request(runs(inbox.origin))).body.map((r: any) => r.runId)).toEqual([runId])
      expect(executed).toEqual([])
    }))

  it.live("per call: approve one, reject one with a reason, answer one in its place; only the approved one runs, the model reads the reason and the reply", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const three = ScriptedChatModel.layer((request) => {
        if (request.messages.at(-1)?._tag === "User") {
          return ScriptedChatModel.toolCalls(
            { id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } },
            { id: "t2", name: "transfer", args: { to: "Bob", amount: 99 } },
            { id: "t3", name: "transfer", args: { to: "Cy", amount: 5 } }
          )
        }
        const results = request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult")
        return ScriptedChatModel.text(results.map((r) => `${r.callId}${r.isError ? " (error)" : ""}: ${JSON.stringify(r.content)}`).join("; "))
      })
      const inbox = yield* serve([agent], { model: three })
      const paused = yield* inbox.inStores(Agent.run(agent, { input: "pay all three", conversationId: "c-3" }).pipe(Effect.provide(three)))
      if (paused._tag !== "Paused") return yield* Effect.die(new Error("expected a pause"))
      const reply = yield* decide(inbox.origin, paused.runId, {
        _tag: "ByCall",
        decisions: {
          t1: { _tag: "Approve" },
          t2: { _tag: "Reject", message: "Bob was paid yesterday" },
          t3: { _tag: "Reply", value: { status: "queued", ticket: 7 } }
        }
      }, "Ada")
      expect(reply.status).toBe(202)
      const stream = yield* events(`${inbox.origin}${reply.body.events}`)
      expect(stream.events.map((e) => e.data._tag)).toEqual([
        "RunResumed", "ToolStarted", "ToolSucceeded", "ModelCalled", "TextDelta", "ModelResponded", "RunCompleted"
      ])
      expect(stream.events[1]!.data).toMatchObject({ callId: "t1", toolName: "transfer" })
      expect(stream.events.at(-1)!.data.text).toBe(
        `t1: "sent 250 to Ada"; t2 (error): "rejected: Bob was paid yesterday"; t3: {"status":"queued","ticket":7}`
      )
      expect(executed).toEqual(["t1 Ada 250"])
      const memory = yield* inbox.inStores(ChatMemory.ChatMemory)
      const results = (yield* inbox.inStores(memory.get("c-3"))).filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult")
      expect(results.map((r) => [r.callId, r.isError, r.content])).toEqual([
        ["t1", false, "sent 250 to Ada"],
        ["t2", true, "rejected: Bob was paid yesterday"],
        ["t3", false, { status: "queued", ticket: 7 }]
      ])
    }))

  it.live("decisions that do not fit the pending calls: 422 UnknownDecision, IncompleteDecisions, DecisionMismatch; nothing runs", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const inbox = yield* serve([agent])
      const runId = yield* inbox.pause(agent, "pay Ada 250")
      const unknown = yield* decide(inbox.origin, runId, { _tag: "ByCall", decisions: { t1: { _tag: "Approve" }, x9: { _tag: "Reject" } } })
      expect([unknown.status, unknown.body]).toEqual([422, {
        _tag: "DecisionRefused",
        error: "UnknownDecision",
        callIds: ["x9"],
        message: "Decisions for calls that are not pending: x9 (pending: t1)"
      }])
      const incomplete = yield* decide(inbox.origin, runId, { _tag: "ByCall", decisions: {} })
      expect([incomplete.status, incomplete.body]).toEqual([422, {
        _tag: "DecisionRefused",
        error: "IncompleteDecisions",
        callIds: ["t1"],
        message: "No decision for pending 1 call: t1"
      }])
      const mismatch = yield* decide(inbox.origin, runId, { _tag: "Retry" })
      expect([mismatch.status, mismatch.body]).toEqual([422, {
        _tag: "DecisionRefused",
        error: "DecisionMismatch",
        message: "Decision Retry cannot resume a run stopped for approval (use ApproveAll or RejectAll or ByCall)"
      }])
      expect(executed).toEqual([])
    }))

  it.live("a body that is not a decision: 400 for another content type (one that only starts like application/json too), bad JSON, a body over 4 MiB, or a value of another shape; application/json with parameters is accepted", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const inbox = yield* serve([agent])
      const runId = yield* inbox.pause(agent, "pay Ada 250")
      const url = `${runs(inbox.origin)}/${runId}/decision`
      // another type, and types that only start like application/json
      for (const type of ["text/plain", "application/json-foo", "application/jsonp", "application/json+x; charset=utf-8"]) {
        const refused = yield* request(url, { method: "POST", headers: { "content-type": type }, body: `{"_tag":"ApproveAll"}` })
        expect([refused.status, refused.body]).toEqual([400, {
          _tag: "InvalidDecision",
          message: `Send the decision as application/json (the request's content type is ${JSON.stringify(type)})`
        }])
      }
      const broken = yield* request(url, { method: "POST", headers: { "content-type": "application/json" }, body: `{"_tag":` })
      expect([broken.status, broken.body]).toEqual([400, { _tag: "InvalidDecision", message: "The body is not JSON: Unexpected end of JSON input" }])
      const huge = yield* earlyAnswer(url, `"${"x".repeat(4 * 1024 * 1024)}"`)
      expect([huge.status, huge.body]).toEqual([400, { _tag: "InvalidDecision", message: "The body could not be read: larger than 4194304 bytes, or cut off" }])
      const shape = yield* decide(inbox.origin, runId, { _tag: "ApproveEverything" })
      expect(shape.status).toBe(400)
      expect(shape.body._tag).toBe("InvalidDecision")
      expect(shape.body.message).toMatch(/^The body is not a Decision: /)
      expect(shape.body.message).toContain(`Expected "ApproveAll" | "RejectAll" | "ByCall" | "Retry" | "Report" | "Continue", got "ApproveEverything"`)
      const extra = yield* decide(inbox.origin, runId, { _tag: "ApproveAll", also: "reject" })
      expect(extra.status).toBe(400)
      expect(extra.body.message).toContain(`"also"`)
      expect(executed).toEqual([])
      // application/json with parameters, in any case, is JSON
      const accepted = yield* request(url, { method: "POST", headers: { "content-type": "Application/JSON; charset=utf-8" }, body: `{"_tag":"ApproveAll"}` })
      expect([accepted.status, accepted.body.runId]).toEqual([202, runId])
    }))

  it.live("an unknown run: 404; a run of an agent the inbox was not given: 422", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const other = bank("other-bank")
      const inbox = yield* serve([agent])
      const missing = yield* decide(inbox.origin, "no-such-run", { _tag: "ApproveAll" })
      expect([missing.status, missing.body._tag]).toEqual([404, "RunNotFound"])
      const runId = yield* inbox.pause(other.agent, "pay Ada 10")
      const foreign = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" })
      expect([foreign.status, foreign.body._tag]).toEqual([422, "UnknownAgent"])
      expect(other.executed).toEqual([])
    }))

  it.live("another holder of the conversation: 409 ConversationBusy, nothing consumed; once it lets go, the decision goes through", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const inbox = yield* serve([agent])
      const runId = yield* inbox.pause(agent, "pay Ada 250", "c-busy")
      const leased = yield* Deferred.make<boolean>()
      const held = yield* Effect.forkScoped(Effect.scoped(Effect.gen(function*() {
        yield* Deferred.succeed(leased, yield* inbox.store.lease("conversation:c-busy", { owner: "another-process", wait: false }))
        return yield* Effect.never
      })))
      expect(yield* Deferred.await(leased)).toBe(true)
      const busy = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" })
      expect([busy.status, busy.body]).toEqual([409, {
        _tag: "ConversationBusy",
        conversationId: "c-busy",
        message: `Conversation "c-busy" is busy: another turn or resume is running on it (start the run with onConversationBusy: "wait" to queue)`
      }])
      expect(executed).toEqual([])
      yield* Fiber.interrupt(held)
      const after = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" })
      expect(after.status).toBe(202)
    }))
})

describe("two people deciding one run", () => {
  for (const conversationId of ["c-shared", undefined]) {
    it.live(`eight decisions at once (${conversationId === undefined ? "ephemeral run" : "named conversation"}): one 202, seven 409 naming the winner; the transfer runs once`, () =>
      Effect.gen(function*() {
        const { agent, executed } = bank()
        const inbox = yield* serve([agent])
        const runId = yield* inbox.pause(agent, "pay Ada 250", conversationId)
        const names = Array.from({ length: 8 }, (_, i) => `reviewer-${i}`)
        const replies = yield* Effect.all(
          names.map((name, i) => decide(inbox.origin, runId, i % 2 === 0 ? { _tag: "ApproveAll" } : { _tag: "RejectAll", message: "no" }, name)),
          { concurrency: "unbounded" }
        )
        const won = replies.filter((r) => r.status === 202)
        expect(won).toHaveLength(1)
        const winner = won[0]!.body.decidedBy
        const lost = replies.filter((r) => r.status !== 202)
        expect(lost.map((r) => [r.status, r.body._tag, r.body.decidedBy])).toEqual(Array.from({ length: 7 }, () => [409, "AlreadyDecided", winner]))
        for (const r of lost) expect(r.body.message).toMatch(new RegExp(`^Run ${runId} was already decided by ${winner}: it is (running|completed) now$`))
        yield* events(`${inbox.origin}${won[0]!.body.events}`)
        expect(executed).toEqual(names.indexOf(winner) % 2 === 0 ? ["t1 Ada 250"] : [])
        const late = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" }, "late")
        expect(late.body).toMatchObject({ status: "completed", decidedBy: winner, decidedAt: won[0]!.body.decidedAt })
      }))
  }
})

describe("a decision made on what a person saw", () => {
  it.live("a tab still showing an earlier pause (the run was decided and paused again): 409 naming who decided, nothing runs; the run's new revision decides it", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      // the model asks for a second transfer after the first, reusing its call id (as scripted and some adapters' ids do):
      // the run renames the second t1_2, so no id is in the history twice
      const twice = ScriptedChatModel.layer((request) => {
        const results = request.messages.filter((m) => m._tag === "ToolResult").length
        if (results === 0) return ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } })
        if (results === 1) return ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Eve", amount: 9000 } })
        return ScriptedChatModel.text("Both sent")
      })
      const inbox = yield* serve([agent], { model: twice })
      const runId = yield* inbox.inStores(Agent.run(agent, { input: "pay Ada 250" }).pipe(
        Effect.provide(twice),
        Effect.flatMap((exit) => exit._tag === "Paused" ? Effect.succeed(exit.runId) : Effect.die(new Error("expected a pause")))
      ))
      // two people open the run: both see Ada's transfer, at one revision
      const seen = yield* request(`${runs(inbox.origin)}/${runId}`)
      expect(seen.body.pending.map((p: any) => p.args)).toEqual([{ to: "Ada", amount: 250 }])
      const { revision } = seen.body
      expect((yield* request(runs(inbox.origin))).body.map((r: any) => [r.runId, r.revision])).toEqual([[runId, revision]])
      const decideAt = (rev: number, name: string) =>
        request(`${runs(inbox.origin)}/${runId}/decision?revision=${rev}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-agentfx-reviewer": name },
          body: JSON.stringify({ _tag: "ApproveAll" })
        })
      const bob = yield* decideAt(revision, "Bob")
      expect(bob.status).toBe(202)
      expect((yield* events(`${inbox.origin}${bob.body.events}`)).events.at(-1)!.data._tag).toBe("RunPaused")
      // Alice's tab still shows Ada's transfer; "approve all" must not approve Eve's, which she never saw
      const alice = yield* decideAt(revision, "Alice")
      expect([alice.status, alice.body]).toEqual([409, {
        _tag: "AlreadyDecided",
        runId,
        status: "paused",
        decidedBy: "Bob",
        decidedAt: bob.body.decidedAt,
        message: `Run ${runId} was resumed already by Bob and paused again: decide on its current pause (resume it by run id)`
      }])
      expect(executed).toEqual(["t1 Ada 250"])
      const now = yield* request(`${runs(inbox.origin)}/${runId}`)
      expect(now.body.pending.map((p: any) => p.args)).toEqual([{ to: "Eve", amount: 9000 }])
      expect(now.body.revision).toBeGreaterThan(revision)
      const again = yield* decideAt(now.body.revision, "Alice")
      expect([again.status, again.body.decidedBy]).toEqual([202, "Alice"])
      yield* events(`${inbox.origin}${again.body.events}`)
      expect(executed).toEqual(["t1 Ada 250", "t1_2 Eve 9000"])
      const bad = yield* request(`${runs(inbox.origin)}/${runId}/decision?revision=x`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ _tag: "ApproveAll" })
      })
      expect([bad.status, bad.body]).toEqual([400, { _tag: "InvalidQuery", message: "The query is not valid: revision: Expected an integer" }])
    }))
})

describe("GET /inbox/api/runs/:runId/events", () => {
  it.live("a run this inbox did not resume: 404 NoLiveEvents", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const inbox = yield* serve([agent])
      const runId = yield* inbox.pause(agent, "pay Ada 250")
      const reply = yield* request(`${runs(inbox.origin)}/${runId}/events`)
      expect([reply.status, reply.body]).toEqual([404, {
        _tag: "NoLiveEvents",
        runId,
        message: `This inbox has not resumed run ${runId}: it has no events of it`
      }])
    }))

  it.live("Last-Event-ID: a reconnecting client gets the events after it; a run that pauses again ends its stream with RunPaused", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const twice = ScriptedChatModel.layer((request) => {
        const results = request.messages.filter((m) => m._tag === "ToolResult").length
        return results === 0
          ? ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Ada", amount: 10 } })
          : results === 1
          ? ScriptedChatModel.toolCalls({ id: "t2", name: "transfer", args: { to: "Bob", amount: 20 } })
          : ScriptedChatModel.text("both sent")
      })
      const inbox = yield* serve([agent], { model: twice })
      const runId = yield* inbox.pause(agent, "pay Ada 10, then Bob", "c-1")
      const reply = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" })
      const all = yield* events(`${inbox.origin}${reply.body.events}`)
      expect(all.events.at(-1)!.data).toMatchObject({ _tag: "RunPaused", kind: "approval", pending: [{ callId: "t2", toolName: "transfer", args: { to: "Bob", amount: 20 } }] })
      const rest = yield* events(`${inbox.origin}${reply.body.events}`, { headers: { "last-event-id": all.events[2]!.id } })
      expect(rest.events.map((e) => e.id)).toEqual(all.events.slice(3).map((e) => e.id))
      expect((yield* request(runs(inbox.origin))).body.map((r: any) => r.pending[0].callId)).toEqual(["t2"])
      const second = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" })
      const secondEvents = yield* events(`${inbox.origin}${second.body.events}`)
      expect(secondEvents.events[0]!.id).toBe("2-0")
      expect(secondEvents.events.at(-1)!.data).toMatchObject({ _tag: "RunCompleted", text: "both sent" })
      expect(executed).toEqual(["t1 Ada 10", "t2 Bob 20"])
    }))

  it.live("a run whose model fails after the claim ends its stream with RunFailed", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const failing = ScriptedChatModel.layer(() => Effect.fail(new ChatModel.ModelError({ reason: "invalid-request", message: "the provider answered 400" })))
      const inbox = yield* serve([agent], { model: failing })
      const runId = yield* inbox.pause(agent, "pay Ada 250")
      const reply = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" })
      expect(reply.status).toBe(202)
      const stream = yield* events(`${inbox.origin}${reply.body.events}`)
      expect(stream.events.at(-1)!.data).toMatchObject({ _tag: "RunFailed", runId, error: "ModelError", message: "the provider answered 400" })
    }))
})

describe("a run that dies after its claim", () => {
  it.live("its followers get RunFailed with a fixed message, never the defect's own; the cause goes to the log", () =>
    withLogs((logged) =>
      Effect.gen(function*() {
        const { agent, executed } = bank()
        const dying = ScriptedChatModel.layer(() => Effect.die(new Error("connect postgres://admin:hunter2@db.internal failed")))
        const inbox = yield* serve([agent], { model: dying })
        const runId = yield* inbox.pause(agent, "pay Ada 250")
        const reply = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" })
        expect(reply.status).toBe(202)
        const stream = yield* events(`${inbox.origin}${reply.body.events}`)
        expect(stream.events.at(-1)!.data).toEqual({
          _tag: "RunFailed",
          runId,
          conversationId: `ephemeral-${runId}`,
          timestamp: stream.events.at(-1)!.data.timestamp,
          error: "Defect",
          message: "The run failed unexpectedly"
        })
        expect(JSON.stringify(stream.events)).not.toContain("hunter2")
        expect(executed).toEqual(["t1 Ada 250"])
        const errors = logged.filter((line) => line.startsWith("ERROR"))
        expect(errors).toHaveLength(1)
        expect(errors[0]).toContain(`Run ${runId} failed unexpectedly after its claim`)
        expect(errors[0]).toContain("connect postgres://admin:hunter2@db.internal failed")
      })
    ))
})

describe("a decision log that fails", () => {
  it.live("a log whose record dies (its database is gone): the decision is still answered 202 and the run completes; the failure goes to the log", () =>
    withLogs((logged) =>
      Effect.gen(function*() {
        const { agent, executed } = bank()
        const decisionLog: DecisionLog.DecisionLog.Service = { ...DecisionLog.makeMemory(), record: () => Effect.die(new Error("the log's database is gone")) }
        const inbox = yield* serve([agent], { decisionLog })
        const runId = yield* inbox.pause(agent, "pay Ada 250")
        const reply = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" }, "Ada").pipe(
          Effect.timeoutOrElse({ duration: "3 seconds", orElse: () => Effect.fail(new Error("the decision was not answered within 3 s")) })
        )
        expect([reply.status, reply.body.decidedBy]).toEqual([202, "Ada"])
        const stream = yield* events(`${inbox.origin}${reply.body.events}`)
        expect(stream.events.at(-1)!.data).toMatchObject({ _tag: "RunCompleted", text: `Done: "sent 250 to Ada"` })
        expect(executed).toEqual(["t1 Ada 250"])
        expect(yield* inbox.store.finished(runId)).toEqual(Option.some({ status: "completed", decidedBy: "Ada", decidedAt: reply.body.decidedAt }))
        const errors = logged.filter((line) => line.startsWith("ERROR"))
        expect(errors).toHaveLength(1)
        expect(errors[0]).toContain(`The decision on run ${runId} could not be written to the decision log`)
        expect(errors[0]).toContain("the log's database is gone")
      })
    ))
})

describe("stopping the inbox", () => {
  it.live("interrupts the runs it resumed; a client following one gets RunFailed (Interrupted), and the server closes", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      let finalized = false
      const slow = Tool.make("transfer", {
        description: "Sends money, slowly",
        parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
        success: Schema.String,
        needsApproval: true,
        handler: () => Deferred.succeed(started, undefined).pipe(Effect.andThen(Effect.never), Effect.onInterrupt(() => Effect.sync(() => (finalized = true))))
      })
      const agent = Agent.make({ name: "slow-bank", tools: [slow] })
      const scope = yield* Scope.make()
      const inbox = yield* Scope.provide(serve([agent]), scope)
      const runId = yield* inbox.pause(agent, "pay Ada 250")
      const reply = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" })
      const response = yield* Effect.promise(() => fetch(`${inbox.origin}${reply.body.events}`))
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      let text = ""
      while (!text.includes(`"_tag":"ToolStarted"`)) text += decoder.decode((yield* Effect.promise(() => reader.read())).value)
      yield* Deferred.await(started)
      const closing = Date.now()
      const closed = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      for (;;) {
        const chunk = yield* Effect.promise(() => reader.read())
        if (chunk.done) break
        text += decoder.decode(chunk.value)
      }
      yield* Fiber.join(closed)
      expect(Date.now() - closing).toBeLessThan(5_000)
      expect(finalized).toBe(true)
      const last = JSON.parse(/data: (.*)\n\n$/.exec(text)![1]!)
      expect(last).toMatchObject({ _tag: "RunFailed", runId, error: "Interrupted", message: "The inbox stopped while the run was running" })
    }), { timeout: 20_000 })
})

describe("the page", () => {
  it.live("GET /inbox serves the page under a content security policy (its import map admitted by hash); its assets and @cfworker/json-schema's modules; an unknown asset is a 404; / redirects", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const inbox = yield* serve([agent])
      const page = yield* request(`${inbox.origin}/inbox`)
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
      const importMap = `{ "imports": { "@cfworker/json-schema": "/inbox/assets/json-schema/index.js" } }`
      expect(page.body).toContain(`<script type="importmap">${importMap}</script>`)
      const hash = createHash("sha256").update(importMap).digest("base64")
      expect(page.headers.get("content-security-policy")).toBe(
        `default-src 'self'; script-src 'self' 'sha256-${hash}'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`
      )
      expect(page.body).toContain(`<script type="module" src="/inbox/assets/inbox.js"></script>`)
      const files = [["inbox.js", "text/javascript"], ["check.js", "text/javascript"], ["diff.js", "text/javascript"], ["paths.js", "text/javascript"], [
        "inbox.css",
        "text/css"
      ], ["icon.svg", "image/svg+xml"], ["json-schema/index.js", "text/javascript"], ["json-schema/validator.js", "text/javascript"]]
      for (const [file, type] of files) {
        const asset = yield* request(`${inbox.origin}/inbox/assets/${file}`)
        expect([file, asset.status, asset.headers.get("content-type")?.split(";")[0]]).toEqual([file, 200, type])
      }
      const library = yield* request(`${inbox.origin}/inbox/assets/json-schema/index.js`)
      expect(library.body).toContain(`export * from './validator.js';`)
      const missing = yield* request(`${inbox.origin}/inbox/assets/..%2Fpackage.json`)
      expect(missing.status).toBe(404)
      for (const file of ["index.d.ts", "..%2F..%2Fpackage.json", "validate.js.map"]) {
        expect([file, (yield* request(`${inbox.origin}/inbox/assets/json-schema/${file}`)).status]).toEqual([file, 404])
      }
      const root = yield* request(`${inbox.origin}/`)
      expect([root.status, root.headers.get("location")]).toEqual([303, "/inbox"])
    }))
})

describe("Inbox.layer", () => {
  it("refuses no agents, and two agents of one name", async () => {
    const { Inbox } = await import("../src/index.js")
    expect(() => Inbox.layer({ agents: [] })).toThrow("Invalid inbox: agents: give at least one agent")
    expect(() => Inbox.layer({ agents: [bank("twin").agent, bank("twin").agent] })).toThrow(
      "Invalid inbox: agents: names used twice: twin (a run's record names its agent)"
    )
  })

  it.live("Inbox.routes mounts beside a server's own routes", () =>
    Effect.gen(function*() {
      const { HttpRouter, HttpServer, HttpServerResponse } = yield* Effect.promise(() => import("effect/http"))
      const { NodeHttpServer } = yield* Effect.promise(() => import("@effect/platform-node"))
      const { createServer } = yield* Effect.promise(() => import("node:http"))
      const { Inbox } = yield* Effect.promise(() => import("../src/index.js"))
      const { agent } = bank()
      const Health = HttpRouter.add("GET", "/health", HttpServerResponse.text("ok"))
      const context = yield* Layer.build(
        HttpRouter.serve(Layer.mergeAll(Inbox.routes({ agents: [agent] }), Health), { disableLogger: true, disableListenLog: true }).pipe(
          Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
          Layer.provide(model),
          Layer.provide(Layer.mergeAll(RunStore.layerMemory(), ChatMemory.layerMemory))
        )
      )
      const server = Context.get(context, HttpServer.HttpServer)
      const origin = server.address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${server.address.port}`
      expect((yield* request(`${origin}/health`)).body).toBe("ok")
      const listed = yield* request(`${origin}/inbox/api/runs`)
      expect([listed.status, listed.body]).toEqual([200, []])
    }))
})



describe("Inbox.serve", () => {
  const stores = Layer.mergeAll(RunStore.layerMemory(), ChatMemory.layerMemory, model)

  it.live("logs the page's address once it listens", () =>
    withLogs((logged) =>
      Effect.gen(function*() {
        const { HttpServer } = yield* Effect.promise(() => import("effect/http"))
        const { Inbox } = yield* Effect.promise(() => import("../src/index.js"))
        const context = yield* Layer.build(Inbox.serve({ agents: [bank().agent] }).pipe(Layer.provide(stores)))
        const address = Context.get(context, HttpServer.HttpServer).address
        const port = address._tag === "UnixPathAddress" ? 0 : address.port
        expect(logged.map((line) => line.split(" ").slice(0, 4).join(" "))).toEqual([`INFO Inbox at http://127.0.0.1:${port}/inbox`])
        expect((yield* request(`http://127.0.0.1:${port}/inbox/api/runs`)).status).toBe(200)
      })
    ))

  it.live("a port that is taken fails it with PortInUse, naming the port and what to do", () =>
    Effect.gen(function*() {
      const { Inbox } = yield* Effect.promise(() => import("../src/index.js"))
      const taken = yield* Effect.acquireRelease(
        Effect.callback<Net.Server>((resume) => {
          const server = Net.createServer().listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      const port = (taken.address() as Net.AddressInfo).port
      const error = yield* Effect.flip(Layer.build(Inbox.serve({ agents: [bank().agent], port }).pipe(Layer.provide(stores))))
      expect(error).toBeInstanceOf(Inbox.PortInUse)
      expect(error.message).toBe(`Port ${port} of 127.0.0.1 is in use: stop what listens there, or serve the inbox on another port (0 picks a free one)`)
    }))
})
