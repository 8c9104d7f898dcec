/**
 * The chat endpoints driving their runs on the embedded cluster (`ClusterChat.driver()`, decision
 * 172), read by the real clients: the AI SDK's `AbstractChat` (what `useChat` runs) over its
 * `DefaultChatTransport`, and `@ag-ui/client`'s `HttpAgent`. A turn streams its steps from the
 * runner; an answer to its pause resumes it once, on the runner; a second answer is refused
 * (`AlreadyDecided`), as is an answer naming a run that is not the conversation's; the thread is
 * read from the cluster's stores. (Real time: the engine polls its file.) On PostgreSQL, with two
 * runners and the endpoint on a client-only member: the runner driving an answered run stops
 * mid-call, the other takes the run over, and the clients are shown the events lost there (a
 * `data-events-lost` part; a `CUSTOM` `agentfx.eventsLost` event), then the rest of the run.
 */
import { type BaseEvent, HttpAgent } from "@ag-ui/client"
import { ChatMemory, ToolCallingManager } from "@agentfx/core"
import { AgUi, Chat, type ChatDriver } from "@agentfx/ui-stream"
import { describe, expect, it } from "@effect/vitest"
import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, DefaultChatTransport, type UIMessage } from "ai"
import { Context, Deferred, Effect, Layer, Option, Redacted, Schedule, Scope } from "effect"
import { HttpServer } from "effect/http"
import { join } from "node:path"
import * as ClusterChat from "../src/ClusterChat.js"
import * as ClusterPg from "../src/ClusterPg.js"
import { AgentCluster, RunLocation } from "../src/index.js"
import { Bank, bankAgent, bankModel, bankRunnerOn, executions, freePort, freshDatabase, gate, tempDir } from "./fixtures.js"

class PlainState implements ChatState<UIMessage> {
  status: ChatStatus = "ready"
  error: Error | undefined = undefined
  messages: Array<UIMessage> = []
  pushMessage = (message: UIMessage) => void (this.messages = [...this.messages, message])
  popMessage = () => void (this.messages = this.messages.slice(0, -1))
  replaceMessage = (index: number, message: UIMessage) => void (this.messages = this.messages.map((m, i) => (i === index ? message : m)))
  snapshot = <T>(thing: T): T => structuredClone(thing)
}

/** What `useChat` runs, without React. */
class NodeChat extends AbstractChat<UIMessage> {
  constructor(init: Omit<ChatInit<UIMessage>, "state">) {
    super({ ...init, state: new PlainState() })
  }
}

/** An endpoint on 127.0.0.1:0 whose runs `ClusterChat.driver()` drives, on the runner of this process: its origin. */
const serving = (endpoint: (driver: ChatDriver.ChatDriver) => Layer.Layer<HttpServer.HttpServer, unknown, any>) =>
  Effect.gen(function*() {
    const driver = yield* ClusterChat.driver({ claimPoll: "10 millis" })
    const server = yield* Layer.build(endpoint(driver))
    const address = Context.get(server, HttpServer.HttpServer).address
    return address._tag === "UnixPathAddress" ? yield* Effect.die(new Error("expected a TCP address")) : `http://127.0.0.1:${address.port}`
  })

/** Runs `body` with the embedded cluster's runner of the bank agent in this process (on ClusterSqlite, watches are served there). */
const onCluster = <A, E>(body: Effect.Effect<A, E, any>) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    return yield* body.pipe(Effect.provide(bankRunnerOn(join(dir, "cluster.db"))))
  }).pipe(Effect.scoped)

const postJson = (url: string, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(body) })
    return { status: response.status, body: JSON.parse(await response.text()) as { readonly _tag: string; readonly message: string } }
  })

describe("ClusterChat.driver", () => {
  it.live("useChat: a turn streams its steps from the runner; its approval resumes it once on the runner; a second approval is AlreadyDecided; another chat's run is RunNotFound; the thread is read from the cluster's memory", () =>
    onCluster(Effect.gen(function*() {
      const origin = yield* serving((driver) => Chat.serve({ agent: bankAgent, driver }))
      const chat = new NodeChat({ id: "c-chat", transport: new DefaultChatTransport({ api: `${origin}/api/chat` }) })
      yield* Effect.promise(() => chat.sendMessage({ text: "pay 21" }))
      expect(chat.error).toBeUndefined()
      const paused = chat.messages.at(-1)!
      expect(paused.parts.map((p) => p.type)).toEqual(["step-start", "tool-lookup", "step-start", "tool-transfer"])
      expect(paused.parts[1]).toMatchObject({ state: "output-available", output: "lookup done" })
      const part = paused.parts[3] as any
      expect(part).toMatchObject({ toolCallId: "transfer-21", state: "approval-requested" })
      expect(executions.get("transfer-21")).toBeUndefined()

      yield* Effect.promise(async () => chat.addToolApprovalResponse({ id: part.approval.id, approved: true }))
      const answered = structuredClone(chat.messages)
      yield* Effect.promise(() => chat.sendMessage())
      expect(chat.error).toBeUndefined()
      const done = chat.messages.at(-1)!
      expect(done.id).toBe(paused.id)
      expect(done.parts.map((p) => p.type)).toEqual(["step-start", "tool-lookup", "step-start", "tool-transfer", "step-start", "text"])
      expect(done.parts[3]).toMatchObject({ state: "output-available", output: "transfer done" })
      expect(done.parts[5]).toMatchObject({ text: "paid 21" })
      expect(executions.get("transfer-21")).toBe(1)

      // the same approval again: the run was decided (its claim on the runner), nothing runs again
      const again = yield* postJson(`${origin}/api/chat`, { id: "c-chat", messages: answered, trigger: "submit-message" })
      expect(again.status).toBe(409)
      expect(again.body).toMatchObject({ _tag: "AlreadyDecided", status: "completed", decidedBy: "local" })
      expect(executions.get("transfer-21")).toBe(1)

      // an approval of this run sent on another chat: not that chat's run
      const foreign = structuredClone(answered)
      const other = yield* postJson(`${origin}/api/chat`, { id: "c-other", messages: foreign, trigger: "submit-message" })
      expect(other.status).toBe(404)
      expect(other.body).toMatchObject({ _tag: "RunNotFound" })
      // an approval naming a run the store does not have
      const unknown = structuredClone(answered)
      const approval = (unknown.at(-1)!.parts[3] as any).approval
      approval.id = approval.id.replace(/^[^:]+/, "no-such-run")
      const missing = yield* postJson(`${origin}/api/chat`, { id: "c-chat", messages: unknown, trigger: "submit-message" })
      expect(missing.status).toBe(404)
      expect(missing.body).toMatchObject({ _tag: "RunNotFound", message: "No record of run no-such-run in the run store" })

      // a page opened again reads the thread from the cluster's ChatMemory
      const thread = yield* Effect.promise(async () => (await fetch(`${origin}/api/chat/c-chat/messages`)).json() as Promise<{ messages: Array<UIMessage> }>)
      expect(thread.messages.map((m) => m.role)).toEqual(["user", "assistant"])
      expect(thread.messages[1]!.parts.at(-1)).toMatchObject({ type: "text", text: "paid 21" })
      const memory = yield* ChatMemory.ChatMemory
      expect((yield* memory.get("c-chat")).length).toBeGreaterThan(0)
    })), 60_000)

  it.live("two answers to one pause at once, by the same person: one resumes the run on the runner, the other is AlreadyDecided before any event", () =>
    onCluster(Effect.gen(function*() {
      const origin = yield* serving((driver) => Chat.serve({ agent: bankAgent, driver }))
      const chat = new NodeChat({ id: "c-twice", transport: new DefaultChatTransport({ api: `${origin}/api/chat` }) })
      yield* Effect.promise(() => chat.sendMessage({ text: "pay 23" }))
      const part = chat.messages.at(-1)!.parts[3] as any
      yield* Effect.promise(async () => chat.addToolApprovalResponse({ id: part.approval.id, approved: true }))
      const answer = { id: "c-twice", messages: structuredClone(chat.messages), trigger: "submit-message" }
      const send = Effect.promise(async () => {
        const response = await fetch(`${origin}/api/chat`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(answer) })
        return { status: response.status, body: await response.text() }
      })
      const replies = yield* Effect.all([send, send], { concurrency: 2 })
      expect(replies.map((r) => r.status).sort()).toEqual([200, 409])
      const resumed = replies.find((r) => r.status === 200)!.body
      expect(resumed).toContain(`"output":"transfer done"`)
      expect(resumed).toContain(`"delta":"paid 23"`)
      expect(JSON.parse(replies.find((r) => r.status === 409)!.body)).toMatchObject({ _tag: "AlreadyDecided", decidedBy: "local" })
      expect(executions.get("transfer-23")).toBe(1)
    })), 60_000)

  it.live("AG-UI: a turn streams its steps from the runner, paused on an interrupt; the interrupt answered resumes it once on the runner; answered again, AlreadyDecided", () =>
    onCluster(Effect.gen(function*() {
      const origin = yield* serving((driver) => AgUi.serve({ agent: bankAgent, driver }))
      const agent = new HttpAgent({ url: `${origin}/api/agui`, threadId: "t-agui" })
      const events: Array<BaseEvent> = []
      agent.subscribe({ onEvent: ({ event }) => void events.push(event) })
      agent.addMessage({ id: "u1", role: "user", content: "pay 22" })
      yield* Effect.promise(() => agent.runAgent({ runId: "ag-1" }))
      expect(events.map((e) => e.type)).toEqual([
        "RUN_STARTED",
        "STEP_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STEP_FINISHED",
        "STEP_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "STEP_FINISHED",
        "RUN_FINISHED"
      ])
      const [interrupt] = agent.pendingInterrupts
      expect(interrupt).toMatchObject({ reason: "tool_approval", toolCallId: "transfer-22" })

      events.length = 0
      const answer = [{ interruptId: interrupt!.id, status: "resolved", payload: { type: "approve" } }] as const
      yield* Effect.promise(() => agent.runAgent({ runId: "ag-2", resume: answer as never }))
      expect(events.map((e) => e.type)).toEqual([
        "RUN_STARTED",
        "STEP_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STEP_FINISHED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "RUN_FINISHED"
      ])
      expect(events.find((e) => e.type === "TEXT_MESSAGE_CONTENT")).toMatchObject({ delta: "paid 22" })
      expect(executions.get("transfer-22")).toBe(1)

      const again = yield* postJson(`${origin}/api/agui`, { threadId: "t-agui", runId: "ag-3", messages: [], resume: answer })
      expect(again.status).toBe(409)
      expect(again.body).toMatchObject({ _tag: "AlreadyDecided", status: "completed" })
      expect(executions.get("transfer-22")).toBe(1)
    })), 60_000)
})

/**
 * Two runners of the bank agent on a new PostgreSQL database, each in a scope of its own (closed:
 * the runner shuts down, its runs interrupted at once), once they share the shards, and a
 * client-only member: its services, and how to stop the runner that drives a run.
 */
const twoRunners = Effect.gen(function*() {
  const database = yield* freshDatabase
  const url = Redacted.make(database.url)
  const runners = new Map<string, Scope.Closeable>()
  for (let i = 0; i < 2; i++) {
    const port = yield* freePort
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Effect.void as never))
    yield* Layer.build(AgentCluster.runner(Bank).pipe(
      Layer.provide([bankModel, ToolCallingManager.unbounded()]),
      Layer.provide(ClusterPg.layer({ url, runnerAddress: { host: "127.0.0.1", port }, pollInterval: "200 millis", shutdownTimeout: "100 millis" }))
    )).pipe(Scope.provide(scope))
    runners.set(`127.0.0.1:${port}`, scope)
  }
  // the shards moving from the first runner to both would move runs meanwhile (their events a gap, too)
  yield* database.locks.pipe(
    Effect.filterOrFail(({ locks, runners }) => locks === 300 && runners === 2, () => "not yet"),
    Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 300 }),
    Effect.orDie
  )
  const client = yield* Layer.build(ClusterPg.layerClient({ url }))
  /** Stops the runner that drives `runId` now. */
  const stopDriverOf = (runId: string) =>
    Effect.gen(function*() {
      const record = yield* AgentCluster.get(runId).pipe(Effect.map(Option.getOrThrow))
      const runner = Option.getOrThrow(yield* RunLocation.of(record)).runner
      yield* Scope.close(runners.get(runner)!, Effect.void as never)
      return runner
    }).pipe(Effect.provideContext(client), Effect.orDie)
  return { client, stopDriverOf }
})

/** Once `check` holds (polled every 20 ms, for up to 30 s). */
const until = (check: () => boolean) =>
  Effect.suspend(() => check() ? Effect.void : Effect.fail("not yet")).pipe(Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 1500 }), Effect.orDie)

describe("ClusterChat.driver on PostgreSQL, the runner driving a run stopped mid-call", () => {
  it.live("useChat: the answer's stream shows the events lost with that runner as a data-events-lost part, then the run as the other runner continues it, to its answer", () =>
    Effect.gen(function*() {
      const held = yield* Deferred.make<void>()
      gate.wait = Deferred.await(held)
      yield* Effect.addFinalizer(() => Effect.sync(() => void (gate.wait = Effect.void)))
      const { client, stopDriverOf } = yield* twoRunners
      const origin = yield* serving((driver) => Chat.serve({ agent: bankAgent, driver })).pipe(Effect.provideContext(client))
      const chat = new NodeChat({ id: "c-lost", transport: new DefaultChatTransport({ api: `${origin}/api/chat` }) })
      yield* Effect.promise(() => chat.sendMessage({ text: "guard 61" }))
      const paused = chat.messages.at(-1)!
      expect(paused.parts.map((p) => p.type)).toEqual(["step-start", "tool-guarded"])
      const part = paused.parts[1] as any
      expect(part).toMatchObject({ toolCallId: "guarded-61", state: "approval-requested" })
      const runId = part.approval.id.split(":")[0]

      yield* Effect.promise(async () => chat.addToolApprovalResponse({ id: part.approval.id, approved: true }))
      const answered = chat.sendMessage()
      // the call runs on the runner that holds the run, and holds there: that runner is stopped
      yield* until(() => executions.get("guarded-61") === 1)
      yield* stopDriverOf(runId)
      yield* Deferred.succeed(held, undefined)
      yield* Effect.promise(() => answered)
      expect(chat.error).toBeUndefined()
      const done = chat.messages.at(-1)!
      // where the stopped runner's events were, the gap; then the run as the other runner continues it, to its answer
      expect(done.parts.map((p) => p.type)).toEqual(["step-start", "tool-guarded", "data-events-lost", "step-start", "text"])
      expect(done.parts[2]).toEqual({
        type: "data-events-lost",
        data: { runId, message: `Events of run ${runId} were lost with the runner that drove it; it was taken over and continues from its records` }
      })
      expect(done.parts[4]).toMatchObject({ type: "text", text: "guarded 61" })
    }).pipe(Effect.scoped), 120_000)

  it.live("AG-UI: the answer's events show the events lost with that runner as a CUSTOM agentfx.eventsLost event, then the run as the other runner continues it, to its answer", () =>
    Effect.gen(function*() {
      const held = yield* Deferred.make<void>()
      gate.wait = Deferred.await(held)
      yield* Effect.addFinalizer(() => Effect.sync(() => void (gate.wait = Effect.void)))
      const { client, stopDriverOf } = yield* twoRunners
      const origin = yield* serving((driver) => AgUi.serve({ agent: bankAgent, driver })).pipe(Effect.provideContext(client))
      const agent = new HttpAgent({ url: `${origin}/api/agui`, threadId: "t-lost" })
      const events: Array<BaseEvent> = []
      agent.subscribe({ onEvent: ({ event }) => void events.push(event) })
      agent.addMessage({ id: "u1", role: "user", content: "guard 62" })
      yield* Effect.promise(() => agent.runAgent({ runId: "ag-1" }))
      const [interrupt] = agent.pendingInterrupts
      expect(interrupt).toMatchObject({ reason: "tool_approval", toolCallId: "guarded-62" })
      const runId = interrupt!.id.split(":")[0]!

      events.length = 0
      const answered = agent.runAgent({ runId: "ag-2", resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { type: "approve" } }] as never })
      yield* until(() => executions.get("guarded-62") === 1)
      yield* stopDriverOf(runId)
      yield* Deferred.succeed(held, undefined)
      yield* Effect.promise(() => answered)
      const types = events.map((e) => e.type === "CUSTOM" ? `CUSTOM ${(e as any).name}` : e.type)
      expect(types.slice(types.indexOf("CUSTOM agentfx.eventsLost"))).toEqual([
        "CUSTOM agentfx.eventsLost",
        "STEP_FINISHED", // the step the stopped runner began
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "RUN_FINISHED"
      ])
      expect(events.find((e) => e.type === "CUSTOM")).toMatchObject({
        name: "agentfx.eventsLost",
        value: { runId, message: `Events of run ${runId} were lost with the runner that drove it; it was taken over and continues from its records` }
      })
      expect(events.find((e) => e.type === "TEXT_MESSAGE_CONTENT")).toMatchObject({ delta: "guarded 62" })
    }).pipe(Effect.scoped), 120_000)
})
