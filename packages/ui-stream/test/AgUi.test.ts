/**
 * The AG-UI endpoint read by AG-UI's own client (`HttpAgent` of `@ag-ui/client` 1.0, which
 * validates every event and reduces them to its messages and state), on a real server on
 * 127.0.0.1: streamed text, tool calls and their results, the slots as state, a pause as an
 * interrupt answered by `resume` — approve, edit, reject, reply — exactly once.
 */
import { Agent, Part, ScriptedChatModel, Slot, Tool, ToolError } from "@agentfx/core"
import { NodeHttpServer } from "@effect/platform-node"
import { DefaultChatTransport } from "ai"
import { Effect, Layer, Schema } from "effect"
import { HttpRouter } from "effect/http"
import { createServer } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import { AgUi, Chat } from "../src/index.js"
import { client, post, said, type Served, serve, warnings } from "./agUiFixtures.js"
import { NodeChat, payments, script, start } from "./fixtures.js"

let served: Served | undefined
afterEach(async () => {
  await served?.close()
  served = undefined
})

/** The event types, with the detail that tells them apart. */
const summary = (events: ReadonlyArray<any>) =>
  events.map((e) =>
    e.type === "TEXT_MESSAGE_CONTENT" || e.type === "TOOL_CALL_ARGS" || e.type === "REASONING_MESSAGE_CONTENT"
      ? `${e.type} ${e.delta}`
      : e.type === "STEP_STARTED" || e.type === "STEP_FINISHED"
      ? `${e.type} ${e.stepName}`
      : e.type === "TOOL_CALL_START"
      ? `${e.type} ${e.toolCallName}`
      : e.type === "TOOL_CALL_RESULT"
      ? `${e.type} ${typeof e.content === "string" ? e.content : JSON.stringify(e.content)}`
      : e.type === "RUN_FINISHED"
      ? `${e.type} ${e.outcome?.type}`
      : e.type
  )

const user = (text: string) => ({ id: `u-${text}`, role: "user" as const, content: text })

describe("AgUi", () => {
  it("the model's readable reasoning arrives as a reasoning message once its answer is complete; encrypted reasoning is not sent", async () => {
    const { agent } = payments()
    served = await serve(agent, ScriptedChatModel.layer((request) =>
      request.messages.length === 1
        ? { text: "Sunny.", reasoning: [{ _tag: "Reasoning", provider: "anthropic", text: "Oslo in June: sunny.", data: { type: "thinking" } }] }
        : { text: "Still sunny.", reasoning: [{ _tag: "Reasoning", provider: "openai", text: "", data: { encrypted_content: "gAAAA" } }] }
    ))
    const { agent: ag, events } = client(served, "t-reasoning")
    ag.addMessage(user("Weather in Oslo?"))
    await ag.runAgent({ runId: "run-r1" })
    expect(summary(events)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED step-1",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT Sunny.",
      "TEXT_MESSAGE_END",
      "REASONING_START",
      "REASONING_MESSAGE_START",
      "REASONING_MESSAGE_CONTENT Oslo in June: sunny.",
      "REASONING_MESSAGE_END",
      "REASONING_END",
      "STEP_FINISHED step-1",
      "RUN_FINISHED success"
    ])
    const textId = (events[2] as any).messageId
    expect(ag.messages.slice(1)).toEqual([
      { id: textId, role: "assistant", content: "Sunny." },
      { id: `${textId}-reasoning`, role: "reasoning", content: "Oslo in June: sunny." }
    ])
    events.length = 0
    ag.addMessage(user("And tomorrow?"))
    await ag.runAgent({ runId: "run-r2" })
    expect(summary(events).filter((type) => type.startsWith("REASONING"))).toEqual([])
  })

  it("text streams as a text message; tool calls, with their results, join the step's assistant message", async () => {
    const { agent } = payments()
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls({ id: "b1", name: "balance", args: {} }),
      { chunks: ["You have ", "1000", " on the account."] }
    ))
    const { agent: ag, events } = client(served, "t-text")
    ag.addMessage(user("What is my balance?"))
    await ag.runAgent({ runId: "run-a" })
    expect(summary(events)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED step-1",
      "TOOL_CALL_START balance",
      "TOOL_CALL_ARGS {}",
      "TOOL_CALL_END",
      "TOOL_CALL_RESULT 1000",
      "STEP_FINISHED step-1",
      "STEP_STARTED step-2",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT You have ",
      "TEXT_MESSAGE_CONTENT 1000",
      "TEXT_MESSAGE_CONTENT  on the account.",
      "TEXT_MESSAGE_END",
      "STEP_FINISHED step-2",
      "RUN_FINISHED success"
    ])
    expect(events[0]).toEqual({ type: "RUN_STARTED", threadId: "t-text", runId: "run-a" })
    const agentfxRun = (events[2] as any).parentMessageId.replace(/-1$/, "")
    expect(ag.messages).toEqual([
      user("What is my balance?"),
      { id: `${agentfxRun}-1`, role: "assistant", toolCalls: [{ id: "b1", type: "function", function: { name: "balance", arguments: "{}" } }] },
      { id: `${agentfxRun}-result-b1`, role: "tool", toolCallId: "b1", content: "1000" },
      { id: `${agentfxRun}-2`, role: "assistant", content: "You have 1000 on the account." }
    ])
    expect(events.at(-1)).toEqual({
      type: "RUN_FINISHED",
      threadId: "t-text",
      runId: "run-a",
      outcome: { type: "success" },
      usage: [{ inputTokens: 0, outputTokens: 0, totalTokens: 0 }]
    })
    expect(warnings()).toEqual([])
  })

  it("the slots are the state: a snapshot as the run starts, a JSON Patch of what changed as it completes", async () => {
    const note = Tool.make("note", {
      description: "Remembers a note",
      parameters: Schema.Struct({ note: Schema.String }),
      success: Schema.String,
      handler: ({ note }) => Effect.succeed(Tool.output("noted", { writes: { notes: [note], cost: 0.25 } }))
    })
    const agent = Agent.make({ name: "notes", tools: [note], slots: { notes: Slot.append(Schema.String), cost: Slot.sum(), city: Slot.last(Schema.String, "Oslo") } })
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls({ id: "n1", name: "note", args: { note: "call Ada" } }, { id: "n2", name: "note", args: { note: "pay Bob" } }),
      ScriptedChatModel.text("Noted.")
    ))
    const { agent: ag, events } = client(served, "t-state")
    ag.setState({ stale: true })
    ag.addMessage(user("Remember these"))
    await ag.runAgent()
    expect(events.filter((e) => e.type.startsWith("STATE"))).toEqual([
      { type: "STATE_SNAPSHOT", snapshot: { notes: [], cost: 0, city: "Oslo" } },
      {
        type: "STATE_DELTA",
        delta: [
          { op: "add", path: "/notes/-", value: "call Ada" },
          { op: "add", path: "/notes/-", value: "pay Bob" },
          { op: "replace", path: "/cost", value: 0.5 }
        ]
      }
    ])
    expect(ag.state).toEqual({ notes: ["call Ada", "pay Bob"], cost: 0.5, city: "Oslo" })
    expect(warnings()).toEqual([])
  })

  it("a pause is an interrupt per pending call; approving it resumes the run, whose call runs once", async () => {
    const { agent, executed } = payments()
    served = await serve(agent, script(
      { text: "Sending.", toolCalls: [{ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }] },
      ScriptedChatModel.text("Sent 250 to Ada.")
    ))
    const { agent: ag, events } = client(served, "t-approve")
    ag.addMessage(user("Send 250 to Ada"))
    await ag.runAgent({ runId: "run-a" })
    expect(summary(events)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED step-1",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT Sending.",
      "TEXT_MESSAGE_END",
      "TOOL_CALL_START transfer",
      `TOOL_CALL_ARGS {"to":"Ada","amount":250}`,
      "TOOL_CALL_END",
      "STEP_FINISHED step-1",
      "RUN_FINISHED interrupt"
    ])
    expect(executed).toEqual([])
    expect(ag.pendingInterrupts).toHaveLength(1)
    const [interrupt] = ag.pendingInterrupts
    const runId = (events[2] as any).messageId.replace(/-1$/, "")
    expect(interrupt).toMatchObject({ id: `${runId}:1:t1`, reason: "tool_approval", toolCallId: "t1" })
    expect(interrupt!.message).toBe("the needsApproval rule of transfer asked for approval of these arguments")
    expect(interrupt!.responseSchema).toEqual({
      oneOf: [
        {
          type: "object",
          properties: { type: { const: "approve" }, args: agent.toolDefinitions.find((tool) => tool.name === "transfer")!.parameters },
          required: ["type"],
          additionalProperties: false
        },
        { type: "object", properties: { type: { const: "reject" }, reason: { type: "string" } }, required: ["type"], additionalProperties: false },
        { type: "object", properties: { type: { const: "reply" }, value: {} }, required: ["type", "value"], additionalProperties: false }
      ]
    })

    events.length = 0
    await ag.runAgent({ runId: "run-b", resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { type: "approve" } }] })
    expect(summary(events)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED step-1",
      "TOOL_CALL_START transfer",
      `TOOL_CALL_ARGS {"to":"Ada","amount":250}`,
      "TOOL_CALL_END",
      "TOOL_CALL_RESULT sent 250 to Ada",
      "STEP_FINISHED step-1",
      "STEP_STARTED step-2",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT Sent 250 to Ada.",
      "TEXT_MESSAGE_END",
      "STEP_FINISHED step-2",
      "RUN_FINISHED success"
    ])
    expect(events[0]).toEqual({ type: "RUN_STARTED", threadId: "t-approve", runId: "run-b" })
    expect(executed).toEqual(["Ada 250"])
    expect(ag.pendingInterrupts).toEqual([])
    expect(ag.messages.map((m) => [m.role, m.content ?? null])).toEqual([
      ["user", "Send 250 to Ada"],
      ["assistant", "Sending."],
      ["tool", "sent 250 to Ada"],
      ["assistant", "Sent 250 to Ada."]
    ])
    expect(await Effect.runPromise(served.store.finished(runId))).toMatchObject({ _tag: "Some", value: { status: "completed", decidedBy: "local" } })
    expect(warnings()).toEqual([])
  })

  it("a tool's failure, its timeout and its files are its call's result, as the model is shown them; the run goes on", async () => {
    const png = Part.image({ name: "dot.png", data: Buffer.from("89504e470d0a1a0a", "hex") })
    const tools = [
      Tool.make("lookup", {
        description: "Looks a customer up",
        parameters: Schema.Struct({}),
        success: Schema.String,
        handler: () => Effect.fail(ToolError.semantic("no customer named Zed"))
      }),
      Tool.make("hang", { description: "Never answers", parameters: Schema.Struct({}), success: Schema.String, timeout: "20 millis", handler: () => Effect.never }),
      Tool.make("snapshot", {
        description: "Takes a snapshot",
        parameters: Schema.Struct({}),
        success: Schema.String,
        handler: () => Effect.succeed(Tool.output("a snapshot", { files: [png] }))
      })
    ]
    served = await serve(Agent.make({ name: "tools", tools }), script(
      ScriptedChatModel.toolCalls({ id: "l1", name: "lookup", args: {} }, { id: "h1", name: "hang", args: {} }, { id: "s1", name: "snapshot", args: {} }),
      ScriptedChatModel.text("Done.")
    ))
    const { agent: ag, events } = client(served, "t-results")
    ag.addMessage(user("Try them all"))
    await ag.runAgent()
    const results = events.filter((e) => e.type === "TOOL_CALL_RESULT").map((e: any) => [e.toolCallId, e.content])
    expect(results).toEqual([
      ["l1", "semantic error: no customer named Zed"],
      ["h1", `transient error: Tool "hang" timed out after 20ms`],
      ["s1", [{ type: "text", text: "a snapshot" }, { type: "image", source: { type: "data", value: png.source._tag === "Base64" ? png.source.data : "", mimeType: "image/png" } }]]
    ])
    expect(ag.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(results.map(([, content]) => content))
    expect(summary(events).at(-1)).toBe("RUN_FINISHED success")
    expect(ag.messages.at(-1)).toMatchObject({ role: "assistant", content: "Done." })
    expect(warnings()).toEqual([])
  })

  it("the slots through a pause: the interrupted run's delta, the resumed run's snapshot of the paused state and its own delta", async () => {
    const pay = Tool.make("pay", {
      description: "Pays an invoice",
      parameters: Schema.Struct({ invoice: Schema.String, amount: Schema.Number }),
      success: Schema.String,
      needsApproval: ({ amount }) => Effect.succeed(amount > 100),
      handler: ({ amount, invoice }) => Effect.succeed(Tool.output(`paid ${invoice}`, { writes: { paid: [invoice], total: amount } }))
    })
    const agent = Agent.make({ name: "invoices", tools: [pay], slots: { paid: Slot.append(Schema.String), total: Slot.sum() } })
    served = await serve(agent, script(
      ScriptedChatModel.toolCalls({ id: "p1", name: "pay", args: { invoice: "A-1", amount: 40 } }),
      ScriptedChatModel.toolCalls({ id: "p2", name: "pay", args: { invoice: "B-2", amount: 400 } }),
      ScriptedChatModel.text("Both paid.")
    ))
    const { agent: ag, events } = client(served, "t-slots")
    ag.addMessage(user("Pay A-1 and B-2"))
    await ag.runAgent()
    const states = () => events.filter((e) => e.type.startsWith("STATE"))
    expect(states()).toEqual([
      { type: "STATE_SNAPSHOT", snapshot: { paid: [], total: 0 } },
      { type: "STATE_DELTA", delta: [{ op: "add", path: "/paid/-", value: "A-1" }, { op: "replace", path: "/total", value: 40 }] }
    ])
    expect(ag.state).toEqual({ paid: ["A-1"], total: 40 })
    expect(ag.pendingInterrupts.map((i) => i.toolCallId)).toEqual(["p2"])

    events.length = 0
    await ag.runAgent({ resume: [{ interruptId: ag.pendingInterrupts[0]!.id, status: "resolved", payload: { type: "approve" } }] })
    expect(states()).toEqual([
      { type: "STATE_SNAPSHOT", snapshot: { paid: ["A-1"], total: 40 } },
      { type: "STATE_DELTA", delta: [{ op: "add", path: "/paid/-", value: "B-2" }, { op: "replace", path: "/total", value: 440 }] }
    ])
    expect(ag.state).toEqual({ paid: ["A-1", "B-2"], total: 440 })
    expect(warnings()).toEqual([])
  })

  it("a run that fails after it started ends with RUN_ERROR, its code the failure's tag", async () => {
    const { agent } = payments()
    served = await serve(agent, script(ScriptedChatModel.toolCalls({ id: "b1", name: "balance", args: {} })))
    const { agent: ag, events } = client(served, "t-fail")
    ag.addMessage(user("Balance?"))
    await ag.runAgent()
    expect(summary(events).slice(-4)).toEqual(["STEP_FINISHED step-1", "STEP_STARTED step-2", "STEP_FINISHED step-2", "RUN_ERROR"])
    expect(events.at(-1)).toEqual({
      type: "RUN_ERROR",
      message: "ScriptedChatModel received request #2, but its script has only 1 step(s)",
      code: "ModelError"
    })
    expect(warnings()).toEqual([])
  })

  it("a client that lost its connection reattaches (connectAgent): the run from its start, then the rest live; a new message meanwhile is refused", async () => {
    const { agent, executed, release } = payments()
    served = await serve(agent, script(
      { chunks: ["Let me ", "look."], toolCalls: [{ id: "r1", name: "slow_report", args: {} }] },
      { chunks: ["The report ", "is ready."] }
    ))
    const first = client(served, "t-drop")
    first.agent.addMessage(user("Report please"))
    const started = new Promise<void>((resolve) =>
      first.agent.subscribe({ onToolCallEndEvent: () => resolve() })
    )
    const running = first.agent.runAgent({ runId: "run-a" })
    await started
    first.agent.abortRun() // the client goes away while the tool runs; the run goes on
    await running.catch(() => undefined)

    const second = client(served, "t-drop")
    const reattached = second.agent.connectAgent()
    const busy = await post(served, said("t-drop", "Hello?"))
    expect([busy.status, JSON.parse(busy.body)]).toEqual([409, {
      _tag: "ConversationBusy",
      chatId: "t-drop",
      message: `Thread "t-drop" is busy: its last run is still running; send again once it has ended (or reattach to it)`
    }])
    release()
    await reattached
    expect(summary(second.events)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED step-1",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT Let me ",
      "TEXT_MESSAGE_CONTENT look.",
      "TEXT_MESSAGE_END",
      "TOOL_CALL_START slow_report",
      "TOOL_CALL_ARGS {}",
      "TOOL_CALL_END",
      "TOOL_CALL_RESULT report ready",
      "STEP_FINISHED step-1",
      "STEP_STARTED step-2",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT The report ",
      "TEXT_MESSAGE_CONTENT is ready.",
      "TEXT_MESSAGE_END",
      "STEP_FINISHED step-2",
      "RUN_FINISHED success"
    ])
    expect(second.events[0]).toEqual({ type: "RUN_STARTED", threadId: "t-drop", runId: "run-a" })
    expect(second.agent.messages.map((m) => [m.role, m.content ?? null])).toEqual([
      ["assistant", "Let me look."],
      ["tool", "report ready"],
      ["assistant", "The report is ready."]
    ])
    expect(executed).toEqual([])

    // a thread with nothing to replay: no events
    const none = client(served, "t-unknown")
    await none.agent.connectAgent()
    expect(none.events).toEqual([])
    expect(warnings()).toEqual([])
  })

  it("a paused run is replayed to a reattach, ending with its interrupt, which that client can answer; after the resume, both AG-UI runs are replayed", async () => {
    const { agent, executed } = payments()
    served = await serve(agent, script(ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }), ScriptedChatModel.text("Sent.")))
    const first = client(served, "t-tabs")
    first.agent.addMessage(user("Send 250 to Ada"))
    await first.agent.runAgent({ runId: "run-a" })

    const second = client(served, "t-tabs")
    await second.agent.connectAgent()
    expect(second.events).toEqual(first.events)
    expect(second.agent.pendingInterrupts).toEqual(first.agent.pendingInterrupts)
    await second.agent.runAgent({ runId: "run-b", resume: [{ interruptId: second.agent.pendingInterrupts[0]!.id, status: "resolved", payload: { type: "approve" } }] })
    expect(executed).toEqual(["Ada 250"])

    const third = client(served, "t-tabs")
    await third.agent.connectAgent()
    expect(summary(third.events).filter((e) => e.startsWith("RUN_"))).toEqual(["RUN_STARTED", "RUN_FINISHED interrupt", "RUN_STARTED", "RUN_FINISHED success"])
    expect(third.events.filter((e) => e.type === "RUN_STARTED").map((e: any) => e.runId)).toEqual(["run-a", "run-b"])
    expect(third.agent.pendingInterrupts).toEqual([])
    expect(third.agent.messages.map((m) => [m.role, m.content ?? null])).toEqual([["assistant", null], ["tool", "sent 250 to Ada"], ["assistant", "Sent."]])
    expect(warnings()).toEqual([])
  })

  it("beside the chat endpoint on one server: a thread and a chat each run, over the same stores", async () => {
    const { agent } = payments()
    const both = await start((stores) =>
      HttpRouter.serve(Layer.mergeAll(AgUi.routes({ agent }), Chat.routes({ agent })), { disableLogger: true, disableListenLog: true }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provide(ScriptedChatModel.layer([ScriptedChatModel.text("Hello from AG-UI."), ScriptedChatModel.text("Hello from useChat.")])),
        Layer.provide(stores)
      )
    )
    served = { ...both, url: `${both.origin}/api/agui` }
    const { agent: ag } = client(served, "t-both")
    ag.addMessage(user("Hi"))
    await ag.runAgent()
    const chat = new NodeChat({ id: "c-both", transport: new DefaultChatTransport({ api: `${both.origin}/api/chat` }) })
    await chat.sendMessage({ text: "Hi" })
    expect(ag.messages.at(-1)).toMatchObject({ role: "assistant", content: "Hello from AG-UI." })
    expect(chat.messages.at(-1)?.parts.at(-1)).toMatchObject({ type: "text", text: "Hello from useChat." })
    const kept = (conversation: string) => Effect.runPromise(Effect.map(both.memory.get(conversation), (messages) => messages.map((m) => m._tag)))
    expect([await kept("t-both"), await kept("c-both")]).toEqual([["User", "Assistant"], ["User", "Assistant"]])
  })
})
