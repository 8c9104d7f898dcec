/**
 * What a hostile or broken model can send, and what the run does with it (issue 13): never a
 * defect, never a conversation that later turns cannot use.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Result, Redacted, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Agent, AgentEvent, ChatMemory, Decision, Json, RunStore, ScriptedChatModel, Tool } from "../src/index.js"
import { lastToolResults } from "./agentFixtures.js"

/** A value nested `depth` levels deep: `{ a: { a: … } }`. */
const nested = (depth: number): Json.JsonValue => {
  let value: Json.JsonValue = "bottom"
  for (let i = 0; i < depth; i++) value = { a: value }
  return value
}

const anything = Tool.make("store", {
  description: "Stores anything",
  parameters: Schema.Struct({ data: Json.JsonValue }),
  success: Schema.String,
  needsApproval: true,
  handler: () => Effect.succeed("stored")
})

const never = Tool.make("wait", {
  description: "Never returns",
  parameters: Schema.Struct({}),
  success: Schema.String,
  handler: () => Effect.never
})

const echo = Tool.make("echo", {
  description: "Echoes",
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.String,
  handler: ({ text }) => Effect.succeed(text)
})

/** Answers the first user message with `calls`, any later one with its text. */
const scriptWith = (...calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: Json.JsonValue }>) =>
  ScriptedChatModel.layer((request) => {
    const last = request.messages.at(-1)!
    if (last._tag === "User") return last.text === "go" ? ScriptedChatModel.toolCalls(...calls) : ScriptedChatModel.text(`echo: ${last.text}`)
    return ScriptedChatModel.text(lastToolResults(request.messages).join(" | "))
  })

describe("limits", () => {
  it.effect("arguments 10,000 levels deep on a tool that needs approval: a semantic error naming the limit, no pause, no defect; the conversation goes on", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [anything] })
      const exit = yield* Agent.run(agent, { input: "go", conversationId: "deep" })
      assert(exit._tag === "Completed")
      expect(exit.text).toBe(`d1: error semantic error: Not run: its arguments nest deeper than 64 levels (the agent's limit); send smaller arguments`)
      expect(exit.messages[1]).toEqual({ _tag: "Assistant", text: "", toolCalls: [{ id: "d1", name: "store", args: {} }] })
      const next = yield* Agent.run(agent, { input: "still there?", conversationId: "deep" })
      expect(next._tag === "Completed" && next.text).toBe("echo: still there?")
    }).pipe(
      Effect.provide(scriptWith({ id: "d1", name: "store", args: { data: nested(10_000) } })),
      Effect.provide(ChatMemory.layerMemory)
    ))

  it.effect("arguments larger than argumentBytes, and calls beyond batchWidth, are answered with errors naming the limit", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [echo], limits: { argumentBytes: 100, batchWidth: 2 } })
      const exit = yield* Agent.run(agent, { input: "go" })
      assert(exit._tag === "Completed")
      expect(exit.text.split(" | ")).toEqual([
        "e1: a",
        `e2: error semantic error: Not run: its arguments are 211 bytes of JSON, more than the 100 allowed (the agent's limit); send smaller arguments`,
        "e3: error semantic error: Not run: a batch runs at most 2 calls; call fewer tools at once"
      ])
    }).pipe(Effect.provide(scriptWith(
      { id: "e1", name: "echo", args: { text: "a" } },
      { id: "e2", name: "echo", args: { text: "x".repeat(200) } },
      { id: "e3", name: "echo", args: { text: "c" } }
    ))))

  it.effect("a batch wider than batchWidth tells the developer: one BatchTruncated event naming the calls not run, before any call starts", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [echo], limits: { batchWidth: 2 } })
      const events: Array<AgentEvent.AgentEvent> = []
      const exit = yield* Agent.run(agent, { input: "go" }).pipe(AgentEvent.withSink((event) => void events.push(event)))
      assert(exit._tag === "Completed")
      expect(events.map((event) => event._tag === "ToolStarted" ? `ToolStarted ${event.callId}` : event._tag).slice(0, 6))
        .toEqual(["RunStarted", "ModelCalled", "ModelResponded", "BatchTruncated", "ToolStarted w1", "ToolSucceeded"])
      const truncated = events.filter(AgentEvent.is("BatchTruncated"))
      expect(truncated.map(({ batchWidth, calls, iteration, notRun }) => ({ iteration, batchWidth, calls, notRun }))).toEqual([{
        iteration: 1,
        batchWidth: 2,
        calls: 4,
        notRun: [{ callId: "w3", toolName: "echo" }, { callId: "w1_2", toolName: "nope" }]
      }])
      expect(exit.text.split(" | ").slice(2)).toEqual([
        "w3: error semantic error: Not run: a batch runs at most 2 calls; call fewer tools at once",
        "w1_2: error semantic error: Not run: a batch runs at most 2 calls; call fewer tools at once"
      ])
      // a batch within the limit says nothing of it
      const within = Agent.make({ tools: [echo], limits: { batchWidth: 4 } })
      const quiet: Array<AgentEvent.AgentEvent> = []
      yield* Agent.run(within, { input: "go" }).pipe(AgentEvent.withSink((event) => void quiet.push(event)))
      expect(quiet.filter(AgentEvent.is("BatchTruncated"))).toEqual([])
    }).pipe(Effect.provide(scriptWith(
      { id: "w1", name: "echo", args: { text: "a" } },
      { id: "w2", name: "echo", args: { text: "b" } },
      { id: "w3", name: "echo", args: { text: "c" } },
      { id: "w1", name: "nope", args: {} }
    ))))

  it.effect("arguments that are not JSON (a BigInt in a large value, a getter that throws), from a model adapter of one's own: errors naming the problem, no defect", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [echo], limits: { argumentBytes: 100 } })
      const exit = yield* Agent.run(agent, { input: "go" })
      assert(exit._tag === "Completed")
      expect(exit.text.split(" | ")).toEqual([
        "b1: error semantic error: Not run: its arguments cannot be read as JSON: Do not know how to serialize a BigInt; send JSON arguments",
        "b2: error semantic error: Not run: its arguments cannot be read as JSON: unreadable; send JSON arguments",
        "b3: a"
      ])
    }).pipe(Effect.provide(scriptWith(
      { id: "b1", name: "echo", args: { text: "x".repeat(200), n: 1n } as unknown as Json.JsonValue },
      {
        id: "b2",
        name: "echo",
        args: Object.defineProperty({}, "text", {
          enumerable: true,
          get: () => {
            throw new Error("unreadable")
          }
        })
      },
      { id: "b3", name: "echo", args: { text: "a" } }
    ))))

  it.effect("a result nested deeper than the limit becomes a semantic error", () =>
    Effect.gen(function*() {
      const tree = Tool.make("tree", {
        description: "Returns a deep tree",
        parameters: Schema.Struct({}),
        success: Json.JsonValue,
        handler: () => Effect.succeed(nested(100))
      })
      const exit = yield* Agent.run(Agent.make({ tools: [tree] }), { input: "go" })
      expect(exit._tag === "Completed" && exit.text).toBe(
        `t1: error semantic error: Tool "tree" returned a result nested deeper than 64 levels (the agent's limit)`
      )
    }).pipe(Effect.provide(scriptWith({ id: "t1", name: "tree", args: {} }))))

  it("limits are checked when the agent is made", () => {
    const refused = Agent.validate({ limits: { depth: 5000, argumentBytes: 0, batchWidth: 1.5 } })
    assert(Result.isFailure(refused))
    expect(refused.failure.problems).toEqual([
      "limits.depth 5000 is not an integer from 1 to 1000",
      "limits.argumentBytes 0 is not a positive integer",
      "limits.batchWidth 1.5 is not a positive integer"
    ])
  })
})

describe("call ids", () => {
  it.effect("the same id twice in one batch: the second is renamed, both run, each gets its own result and decision", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [anything] })
      const paused = yield* Agent.run(agent, { input: "go" })
      assert(paused._tag === "Paused")
      expect(paused.pending.map((p) => p.call.id)).toEqual(["x", "x_2"])
      const done = yield* Agent.resume(agent, paused.runId, Decision.byCall({ x: Decision.reject({ message: "no" }), x_2: Decision.approve() }))
      assert(done._tag === "Completed")
      expect(done.text).toBe("x: error rejected: no | x_2: stored")
    }).pipe(Effect.provide(scriptWith(
      { id: "x", name: "store", args: { data: 1 } },
      { id: "x", name: "store", args: { data: 2 } }
    ))))

  it.effect("an id holding `/` (the separator of a delegate's child calls, `d1/m1`) has each made `_`; one that then repeats another is renamed too", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [anything] })
      const paused = yield* Agent.run(agent, { input: "go" })
      assert(paused._tag === "Paused")
      expect(paused.pending.map((p) => p.call.id)).toEqual(["d1_m1", "d1_m1_2"])
      const done = yield* Agent.resume(agent, paused.runId, Decision.byCall({ d1_m1: Decision.approve(), d1_m1_2: Decision.reject() }))
      expect(done._tag === "Completed" && done.text).toBe("d1_m1: stored | d1_m1_2: error rejected")
      const alone = yield* Agent.run(agent, { input: "go" }).pipe(Effect.provide(scriptWith({ id: "a/b/c", name: "store", args: { data: 1 } })))
      expect(alone._tag === "Paused" && alone.pending.map((p) => p.call.id)).toEqual(["a_b_c"])
    }).pipe(Effect.provide(scriptWith(
      { id: "d1/m1", name: "store", args: { data: 1 } },
      { id: "d1_m1", name: "store", args: { data: 2 } }
    ))))

  it.effect("an id the conversation used already (a model reusing ids across turns, or across a run's iterations) is renamed: no id twice in the history, each call its own result, a cut-off call healed", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [echo] })
      const first = yield* Agent.run(agent, { input: "one", conversationId: "reuse" })
      expect(first._tag === "Completed" && first.toolCalls.map((c) => c.callId)).toEqual(["c1", "c1_2"])
      const second = yield* Agent.run(agent, { input: "two", conversationId: "reuse" })
      expect(second._tag === "Completed" && second.toolCalls.map((c) => c.callId)).toEqual(["c1_3"])
      const history = yield* Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("reuse"))
      const ids = history.flatMap((m) => m._tag === "Assistant" ? m.toolCalls.map((c) => c.id) : [])
      const answered = history.flatMap((m) => m._tag === "ToolResult" ? [`${m.callId}: ${String(m.content)}`] : [])
      expect(ids).toEqual(["c1", "c1_2", "c1_3"])
      expect(answered).toEqual(["c1: first", "c1_2: again", "c1_3: later"])
      // a turn whose reused call was cut off (interrupted before its result): the next turn heals it
      const cut = yield* Effect.forkChild(Agent.run(Agent.make({ tools: [never] }), { input: "three", conversationId: "reuse" }))
      yield* TestClock.adjust("1 second") // the run goes on until it waits in its tool
      yield* Fiber.interrupt(cut)
      yield* Agent.run(agent, { input: "four", conversationId: "reuse" })
      const healed = yield* Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("reuse"))
      expect(healed.flatMap((m) => m._tag === "ToolResult" && m.callId === "c1_4" ? [m.isError] : [])).toEqual([true])
    }).pipe(Effect.provide(Layer.mergeAll(ChatMemory.layerMemory, ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ id: "c1", name: "echo", args: { text: "first" } }),
      ScriptedChatModel.toolCalls({ id: "c1", name: "echo", args: { text: "again" } }),
      ScriptedChatModel.text("done"),
      ScriptedChatModel.toolCalls({ id: "c1", name: "echo", args: { text: "later" } }),
      ScriptedChatModel.text("done"),
      ScriptedChatModel.toolCalls({ id: "c1", name: "wait", args: {} }),
      ScriptedChatModel.text("done")
    ])))))

  it.effect("ids such as constructor, toString and __proto__ pause and resume like any other", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [anything] })
      const paused = yield* Agent.run(agent, { input: "go" })
      assert(paused._tag === "Paused")
      const decisions = new Map([
        ["constructor", Decision.approve()],
        ["toString", Decision.reject()],
        ["__proto__", Decision.reply({ value: "kept" })]
      ])
      const done = yield* Agent.resume(agent, JSON.parse(JSON.stringify(paused.checkpoint)), Decision.byCall(decisions))
      expect(done._tag === "Completed" && done.text).toBe("constructor: stored | toString: error rejected | __proto__: kept")
    }).pipe(Effect.provide(scriptWith(
      { id: "constructor", name: "store", args: { data: 1 } },
      { id: "toString", name: "store", args: { data: 2 } },
      { id: "__proto__", name: "store", args: { data: 3 } }
    ))))
})

describe("hostile decisions", () => {
  it.effect("a Decision body nested 100,000 levels deep decodes without exhausting the stack; its edited arguments and its reply are refused by the agent's limits, the run stays resumable", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [anything] })
      const paused = yield* Agent.run(agent, { input: "go" })
      assert(paused._tag === "Paused")
      const body = (value: Json.JsonValue) => JSON.stringify({ _tag: "ByCall", decisions: { a: { _tag: "Approve", args: { data: value } }, b: { _tag: "Reply", value } } })
      // built as text: JSON.stringify itself cannot write a value this deep
      const deepText = body("__deep__").replaceAll(`"__deep__"`, "[".repeat(100_000) + "]".repeat(100_000))
      const decoded = Schema.decodeUnknownResult(Schema.fromJsonString(Decision.Decision))(deepText)
      assert(Result.isSuccess(decoded))
      const refused = yield* Effect.flip(Agent.resume(agent, paused.checkpoint, decoded.success))
      expect(refused._tag === "InvalidEditedArguments" && refused.problems).toEqual([
        { callId: "a", toolName: "store", message: "the edited arguments nest deeper than 64 levels (the agent's limit)" },
        { callId: "b", toolName: "store", message: "the reply's values nest deeper than 64 levels (the agent's limit)" }
      ])
      const done = yield* Agent.resume(agent, paused.checkpoint, Decision.byCall(new Map([["a", Decision.approve()], ["b", Decision.reply({ value: "fine" })]])))
      expect(done._tag === "Completed" && done.text).toBe("a: stored | b: fine")
    }).pipe(Effect.provide(scriptWith({ id: "a", name: "store", args: { data: 1 } }, { id: "b", name: "store", args: { data: 2 } }))))

  it("JsonValue names what JSON cannot carry, with its path", () => {
    const refused = Schema.decodeUnknownResult(Json.JsonValue)({ a: [1, { b: NaN }], c: new Date(0) })
    assert(Result.isFailure(refused))
    expect(refused.failure.message).toBe(`expected a JSON value, got NaN\n  at ["a"][1]["b"]`)
    expect(Schema.is(Json.JsonValue)({ c: new Date(0) })).toBe(false)
    expect(Schema.is(Json.JsonValue)({ a: [1, null, "x", { b: true }] })).toBe(true)
  })
})

describe("hostile checkpoints", () => {
  it.effect("a checkpoint nested 20,000 levels deep is InvalidCheckpoint (malformed), refused before its signature is computed", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [anything], checkpointSecret: Redacted.make("x".repeat(32)) })
      const hostile = { format: "agentfx/checkpoint", version: 2, messages: [nested(20_000)] }
      const refused = yield* Effect.flip(Agent.resume(agent, hostile, Decision.approveAll()))
      expect(refused._tag === "InvalidCheckpoint" && [refused.reason, refused.detail]).toEqual([
        "malformed",
        "nested deeper than 320 levels (the agent's depth limit and the checkpoint's own structure)"
      ])
    }).pipe(Effect.provide(RunStore.layerMemory()), Effect.provide(scriptWith())))

  it.effect("a copy holding what JSON cannot carry (a BigInt beside its fields) is InvalidCheckpoint (malformed), never a defect; the pause stays resumable", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [anything] })
      const paused = yield* Agent.run(agent, { input: "go" })
      assert(paused._tag === "Paused")
      const copy = { ...JSON.parse(JSON.stringify(paused.checkpoint)), note: 1n }
      // imported into another store (a process that never saw the run), and offered to this one
      for (const store of [RunStore.layerMemory(), undefined]) {
        const resumed = Agent.resume(agent, copy, Decision.approveAll())
        const refused = yield* Effect.flip(store === undefined ? resumed : Effect.provide(resumed, store))
        expect(refused._tag === "InvalidCheckpoint" && [refused.reason, refused.detail]).toEqual(["malformed", "not JSON: note: expected a JSON value, got bigint"])
      }
      expect((yield* Agent.resume(agent, paused.runId, Decision.approveAll()))._tag).toBe("Completed")
    }).pipe(Effect.provide(RunStore.layerMemory()), Effect.provide(scriptWith({ id: "s1", name: "store", args: { data: 1 } }))))
})
