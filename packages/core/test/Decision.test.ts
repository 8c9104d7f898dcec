import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema, SchemaGetter } from "effect"
import {
  Agent,
  ChatMemory,
  Decision,
  ScriptedChatModel,
  Tool
} from "../src/index.js"
import { deleteTool, diskTool, emailTool, Executions, lastToolResults, weatherTool } from "./agentFixtures.js"

const askUser = (executions: Executions) =>
  Tool.make("ask_user", {
    description: "Asks the user a question",
    parameters: Schema.Struct({ question: Schema.String }),
    success: Schema.String,
    needsApproval: true,
    handler: (args) => Effect.sync(() => executions.record("ask_user", args)).pipe(Effect.as("(unanswered)"))
  })

const buildAgent = (executions: Executions) =>
  Effect.gen(function*() {
    const tools = [
      weatherTool(executions),
      emailTool(executions),
      deleteTool(executions),
      askUser(executions)
    ]
    return Agent.make({ name: "assistant", tools })
  })

const firstBatch = ScriptedChatModel.toolCalls(
  { id: "m1", name: "send_email", args: { to: "boss@example.com", body: "I quit" } },
  { id: "d1", name: "delete_file", args: { path: "/etc/passwd" } },
  { id: "w1", name: "get_weather", args: { city: "Oslo" } }
)

/** Runs the first turn in its own runtime and returns the checkpoint as a string, as a store would keep it. */
const pauseInFirstRuntime = (executions: Executions) =>
  Effect.gen(function*() {
    const agent = yield* buildAgent(executions)
    const exit = yield* Agent.run(agent, { input: "mail my boss, clean up, and check the weather", conversationId: "conv-1" })
    if (exit._tag !== "Paused") throw new Error(`expected a pause, got ${exit._tag}`)
    return { exit, stored: JSON.stringify(exit.checkpoint) }
  }).pipe(Effect.provide(Layer.fresh(Layer.merge(ScriptedChatModel.layer([firstBatch]), ChatMemory.layerMemory))))

describe("Decision (Agent.resume)", () => {
  it.effect("end to end: 2 sensitive + 1 plain call pause before anything runs; resumed from JSON in fresh runtimes", () =>
    Effect.gen(function*() {
      const executions = new Executions()
      const { exit, stored } = yield* pauseInFirstRuntime(executions)
      expect(exit.kind).toBe("approval")
      expect(exit.pending.map((p) => p.call.id)).toEqual(["m1", "d1"])
      expect(executions.counts).toEqual({})

      // A second runtime: a new agent value, a new memory, the model's next answers.
      const second = yield* Effect.gen(function*() {
        const agent = yield* buildAgent(executions)
        const next = yield* Agent.resume(agent, JSON.parse(stored), Decision.byCall({
          m1: Decision.approve({ args: { to: "boss@example.com", body: "I love my job" } }),
          d1: Decision.reject({ message: "never touch /etc" })
        }))
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        return { next, requests }
      }).pipe(Effect.provide(Layer.merge(
        ScriptedChatModel.layer([ScriptedChatModel.toolCalls({ id: "q1", name: "ask_user", args: { question: "Favourite colour?" } })]),
        ChatMemory.layerMemory
      )))
      expect(second.next._tag).toBe("Paused")
      if (second.next._tag !== "Paused") return
      expect(lastToolResults(second.requests[0]!.messages)).toEqual([
        "m1: sent to boss@example.com",
        "d1: error rejected: never touch /etc",
        "w1: Sunny in Oslo"
      ])
      const assistantCalls = second.requests[0]!.messages.find((m) => m._tag === "Assistant")
      expect(assistantCalls?._tag === "Assistant" && assistantCalls.toolCalls[0]!.args).toEqual({
        to: "boss@example.com",
        body: "I love my job"
      })

      // A third runtime answers the question in the tool's place.
      const third = yield* Effect.gen(function*() {
        const agent = yield* buildAgent(executions)
        const done = yield* Agent.resume(
          agent,
          JSON.parse(JSON.stringify(second.next._tag === "Paused" ? second.next.checkpoint : null)),
          Decision.byCall({ q1: Decision.reply({ value: "Blue." }) })
        )
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        return { done, requests }
      }).pipe(Effect.provide(Layer.merge(
        ScriptedChatModel.layer([ScriptedChatModel.text("Mailed, kept /etc, sunny, and you like blue.")]),
        ChatMemory.layerMemory
      )))
      expect(third.done._tag === "Completed" && third.done.text).toBe("Mailed, kept /etc, sunny, and you like blue.")
      expect(lastToolResults(third.requests[0]!.messages)).toEqual([
        "m1: sent to boss@example.com",
        "d1: error rejected: never touch /etc",
        "w1: Sunny in Oslo",
        "q1: Blue."
      ])
      expect(executions.counts).toEqual({ send_email: 1, get_weather: 1 })
      expect(executions.args[0]).toEqual({ tool: "send_email", args: { to: "boss@example.com", body: "I love my job" } })
      expect(third.done._tag === "Completed" && third.done.toolCalls.map((o) => `${o.callId}:${o._tag}`)).toEqual([
        "m1:Succeeded",
        "d1:Rejected",
        "w1:Succeeded",
        "q1:Replied"
      ])
    }))

  it.effect("refused decisions consume nothing: the same checkpoint resumes afterwards", () =>
    Effect.gen(function*() {
      const executions = new Executions()
      const { stored } = yield* pauseInFirstRuntime(executions)
      const agent = yield* buildAgent(executions)
      const checkpoint = JSON.parse(stored)
      const resume = (decision: Decision.Decision) => Agent.resume(agent, checkpoint, decision).pipe(Effect.flip)

      const unknown = yield* resume(Decision.byCall({ m1: Decision.approve(), d1: Decision.approve(), zz: Decision.approve() }))
      expect(unknown._tag === "UnknownDecision" && unknown.message).toBe("Decisions for calls that are not pending: zz (pending: m1, d1)")
      const incomplete = yield* resume(Decision.byCall({ m1: Decision.approve() }))
      expect(incomplete._tag === "IncompleteDecisions" && incomplete.callIds).toEqual(["d1"])
      const badArgs = yield* resume(Decision.byCall({ m1: Decision.approve({ args: { to: 42 } }), d1: Decision.approve({ args: {} }) }))
      expect(badArgs._tag === "InvalidEditedArguments" && badArgs.problems).toEqual([
        { callId: "m1", toolName: "send_email", message: `Invalid arguments for tool "send_email": to: Expected string, got 42; body: Missing key` },
        { callId: "d1", toolName: "delete_file", message: `Invalid arguments for tool "delete_file": path: Missing key` }
      ])
      // from JavaScript a decision can hold what JSON cannot: refused, not run with one value and shown with another
      const notJson = yield* resume(Decision.byCall({
        m1: Decision.approve({ args: { to: "boss@example.com", body: "bye", sent: NaN } as never }),
        d1: Decision.reply({ value: { when: new Date(0) } as never })
      }))
      expect(notJson._tag === "InvalidEditedArguments" && notJson.problems).toEqual([
        { callId: "m1", toolName: "send_email", message: "the edited arguments are not JSON: sent: expected a JSON value, got NaN" },
        { callId: "d1", toolName: "delete_file", message: "the reply's values are not JSON: when: expected a JSON value, got an instance of Date" }
      ])
      const mismatch = yield* resume(Decision.retry())
      expect(mismatch._tag === "DecisionMismatch" && mismatch.message).toBe(
        "Decision Retry cannot resume a run stopped for approval (use ApproveAll or RejectAll or ByCall)"
      )
      expect(executions.counts).toEqual({})

      const exit = yield* Agent.resume(agent, checkpoint, Decision.rejectAll({ message: "changed my mind" }))
      expect(exit._tag === "Completed" && exit.toolCalls.map((o) => o._tag)).toEqual(["Rejected", "Rejected", "Succeeded"])
      expect(executions.counts).toEqual({ get_weather: 1 })
    }).pipe(Effect.provide(Layer.merge(ScriptedChatModel.layer([ScriptedChatModel.text("ok")]), ChatMemory.layerMemory))))

  it.effect("an approved call never runs twice: a second resume of a consumed checkpoint is refused, by the run store", () =>
    Effect.gen(function*() {
      const executions = new Executions()
      const agent = yield* buildAgent(executions)
      const exit = yield* Agent.run(agent, { input: "go", conversationId: "conv-2" })
      if (exit._tag !== "Paused") throw new Error("expected a pause")
      const first = yield* Agent.resume(agent, exit.checkpoint, Decision.approveAll())
      expect(first._tag).toBe("Completed")
      const second = yield* Agent.resume(agent, exit.checkpoint, Decision.approveAll()).pipe(Effect.flip)
      expect(second._tag === "RunAlreadyResumed" && second.message).toBe(`Run ${exit.runId} was already decided: it is completed now`)
      expect(executions.counts).toEqual({ send_email: 1, delete_file: 1, get_weather: 1 })
    }).pipe(Effect.provide(Layer.merge(
      ScriptedChatModel.layer([firstBatch, ScriptedChatModel.text("done")]),
      ChatMemory.layerMemory
    ))))

  it.effect("edited arguments are decoded as the executor decodes them: a tool whose parameters check asynchronously (an MCP tool's) takes an edit", () =>
    Effect.gen(function*() {
      const executions = new Executions()
      const post = Tool.make("post", {
        description: "Posts a message",
        // checked off the fiber's thread of control, as McpToolkit checks a server's schema
        parameters: Schema.Struct({ text: Schema.String }).pipe(Schema.decode({
          decode: SchemaGetter.checkEffect(({ text }) => Effect.promise(() => Promise.resolve(text.length > 0 || "text must not be empty"))),
          encode: SchemaGetter.passthrough()
        })),
        success: Schema.String,
        needsApproval: true,
        handler: (args) => Effect.sync(() => executions.record("post", args)).pipe(Effect.as(`posted ${args.text}`))
      })
      const agent = Agent.make({ tools: [post] })
      const exit = yield* Agent.run(agent, { input: "post it" })
      if (exit._tag !== "Paused") throw new Error(`expected a pause, got ${exit._tag}`)
      const refused = yield* Agent.resume(agent, exit.checkpoint, Decision.byCall({ p1: Decision.approve({ args: { text: "" } }) })).pipe(Effect.flip)
      expect(refused._tag === "InvalidEditedArguments" && refused.problems).toEqual([
        { callId: "p1", toolName: "post", message: `Invalid arguments for tool "post": text must not be empty` }
      ])
      const done = yield* Agent.resume(agent, exit.checkpoint, Decision.byCall({ p1: Decision.approve({ args: { text: "hello" } }) }))
      expect(done._tag === "Completed" && done.text).toBe("posted")
      expect(executions.args).toEqual([{ tool: "post", args: { text: "hello" } }])
    }).pipe(Effect.provide(Layer.merge(
      ScriptedChatModel.layer([ScriptedChatModel.toolCalls({ id: "p1", name: "post", args: { text: "hi" } }), ScriptedChatModel.text("posted")]),
      ChatMemory.layerMemory
    ))))

  describe("environment pause", () => {
    const script = ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls(
        { id: "k1", name: "write_disk", args: { data: "a" } },
        { id: "w1", name: "get_weather", args: { city: "Oslo" } },
        { id: "k2", name: "write_disk", args: { data: "b" } }
      ),
      ScriptedChatModel.text("all written")
    ])

    it.effect("pauses after the batch; retry() re-runs only the failed calls, until they pass", () =>
      Effect.gen(function*() {
        const executions = new Executions()
        const environment = { fixed: false }
        const agent = Agent.make({
          tools: [diskTool(executions, environment), weatherTool(executions)],
          onEnvironmentError: "pause"
        })
        const paused = yield* Agent.run(agent, { input: "write" })
        if (paused._tag !== "Paused") throw new Error("expected a pause")
        expect(paused.kind).toBe("environment")
        expect(paused.pending.map((p) => `${p.call.id}: ${p.error?.message}`)).toEqual(["k1: disk full", "k2: disk full"])
        expect(executions.counts).toEqual({ write_disk: 2, get_weather: 1 })

        const still = yield* Agent.resume(agent, paused.checkpoint, Decision.retry())
        expect(still._tag === "Paused" && still.kind).toBe("environment")
        expect(executions.counts).toEqual({ write_disk: 4, get_weather: 1 })

        environment.fixed = true
        const done = yield* Agent.resume(agent, still._tag === "Paused" ? still.checkpoint : null, Decision.retry())
        expect(done._tag === "Completed" && done.text).toBe("all written")
        expect(executions.counts).toEqual({ write_disk: 6, get_weather: 1 })
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(lastToolResults(requests[1]!.messages)).toEqual(["k1: wrote a", "w1: Sunny in Oslo", "k2: wrote b"])
      }).pipe(Effect.provide(script)))

    it.effect("report() hands the errors to the model", () =>
      Effect.gen(function*() {
        const executions = new Executions()
        const agent = Agent.make({
          tools: [diskTool(executions, { fixed: false }), weatherTool(executions)],
          onEnvironmentError: "pause"
        })
        const paused = yield* Agent.run(agent, { input: "write" })
        const done = yield* Agent.resume(agent, paused._tag === "Paused" ? paused.checkpoint : null, Decision.report())
        expect(done._tag).toBe("Completed")
        expect(executions.counts).toEqual({ write_disk: 2, get_weather: 1 })
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(lastToolResults(requests[1]!.messages)).toEqual([
          "k1: error environment error: disk full",
          "w1: Sunny in Oslo",
          "k2: error environment error: disk full"
        ])
      }).pipe(Effect.provide(script)))

    it.effect(`by default ("report") environment errors go to the model without pausing`, () =>
      Effect.gen(function*() {
        const executions = new Executions()
        const agent = Agent.make({
          tools: [diskTool(executions, { fixed: false }), weatherTool(executions)]
        })
        const done = yield* Agent.run(agent, { input: "write" })
        expect(done._tag).toBe("Completed")
      }).pipe(Effect.provide(script)))
  })
})

describe("Decision schema", () => {
  const decode = Schema.decodeUnknownEffect(Decision.Decision)

  it.effect("an HTTP body decodes into a decision; ByCall's object becomes a Map that keeps any call id", () =>
    Effect.gen(function*() {
      const body = JSON.parse(`{
        "_tag": "ByCall",
        "decisions": {
          "call_1": { "_tag": "Approve", "args": { "amount": 10 } },
          "__proto__": { "_tag": "Reject", "message": "no" },
          "constructor": { "_tag": "Reply", "value": "Blue." }
        }
      }`)
      const decision = yield* decode(body)
      expect(Decision.is("ByCall")(decision)).toBe(true)
      if (decision._tag !== "ByCall") return
      expect([...decision.decisions]).toEqual([
        ["call_1", { _tag: "Approve", args: { amount: 10 } }],
        ["__proto__", { _tag: "Reject", message: "no" }],
        ["constructor", { _tag: "Reply", value: "Blue." }]
      ])
      const encoded = yield* Schema.encodeEffect(Decision.Decision)(decision)
      expect(JSON.parse(JSON.stringify(encoded))).toEqual(body)
      expect(Object.keys((encoded as { decisions: object }).decisions)).toEqual(["call_1", "__proto__", "constructor"])
    }))

  it.effect("a malformed body is a typed SchemaError naming what is wrong", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(decode({ _tag: "ByCall", decisions: { c1: { _tag: "Approve" }, c2: { _tag: "Maybe" } } }))
      expect(error._tag).toBe("SchemaError")
      expect(error.message).toContain(`["c2"]`)
      expect(error.message).toContain(`"Maybe"`)
      expect((yield* Effect.flip(decode({ _tag: "ApproveSome" })))._tag).toBe("SchemaError")
      expect((yield* Effect.flip(decode({ _tag: "ByCall", decisions: [] })))._tag).toBe("SchemaError")
    }))

  it("constructors build what the schema decodes; match covers every tag", () => {
    const all: Array<Decision.Decision> = [
      Decision.approveAll(),
      Decision.rejectAll({ message: "no" }),
      Decision.byCall(new Map([["__proto__", Decision.approve()]])),
      Decision.retry(),
      Decision.report(),
      Decision.continue()
    ]
    for (const decision of all) expect(Schema.decodeUnknownSync(Decision.Decision)(Schema.encodeSync(Decision.Decision)(decision))).toEqual(decision)
    const label = Decision.match({
      ApproveAll: () => "all",
      RejectAll: ({ message }) => `none: ${message}`,
      ByCall: ({ decisions }) => [...decisions.keys()].join(","),
      Retry: () => "retry",
      Report: () => "report",
      Continue: () => "continue"
    })
    expect(all.map(label)).toEqual(["all", "none: no", "__proto__", "retry", "report", "continue"])
    const fromObject = Decision.byCall({ a: Decision.approve(), b: Decision.reply({ value: 1 }) })
    expect(fromObject._tag === "ByCall" && [...fromObject.decisions.keys()]).toEqual(["a", "b"])
  })
})
