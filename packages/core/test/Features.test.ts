/**
 * What agent users ask for (issue 16), through `Agent.run`/`Agent.resume` on the scripted
 * model: structured output, budgets, model settings and tool choice.
 */
import { assert, describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Effect, Result, Redacted, Schema } from "effect"
import { Agent, AgentError, type Budget, type Checkpoint, Decision, Gate, type Json, RunStore, ScriptedChatModel, Tool, ToolError } from "../src/index.js"
import { lastToolResults } from "./agentFixtures.js"

const Weather = Schema.Struct({ city: Schema.String, celsius: Schema.Number })

const lookup = Tool.make("lookup", {
  description: "Looks up the temperature",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Number,
  handler: () => Effect.succeed(21)
})

const transfer = Tool.make("transfer", {
  description: "Sends money",
  parameters: Schema.Struct({ amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true,
  handler: ({ amount }) => Effect.succeed(`sent ${amount}`)
})

describe("structured output", () => {
  it.effect("Completed carries the answer decoded with the output schema; the model is asked for its JSON Schema; tools run in the same run", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [lookup], output: Weather })
      const exit = yield* Agent.run(agent, { input: "Oslo?" })
      assert(exit._tag === "Completed")
      expectTypeOf(exit.value).toEqualTypeOf<{ readonly city: string; readonly celsius: number }>()
      expect(exit.value).toEqual({ city: "Oslo", celsius: 21 })
      expect(exit.text).toBe(`{"city":"Oslo","celsius":21}`)
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests[0]!.output).toEqual({
        name: "final_answer",
        schema: {
          type: "object",
          required: ["city", "celsius"],
          properties: { city: { type: "string" }, celsius: { type: "number" } },
          additionalProperties: false
        }
      })
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ id: "l1", name: "lookup", args: { city: "Oslo" } }),
      ScriptedChatModel.text(`{"city":"Oslo","celsius":21}`)
    ]))))

  it.effect("an answer that does not decode is fed back with the problem, then accepted", () =>
    Effect.gen(function*() {
      const exit = yield* Agent.run(Agent.make({ output: Weather }), { input: "Oslo?" })
      expect(exit._tag === "Completed" && exit.value).toEqual({ city: "Oslo", celsius: 3 })
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests.map((r) => r.messages.at(-1))).toEqual([
        { _tag: "User", text: "Oslo?" },
        { _tag: "User", text: "Your answer does not match the required output: it is not JSON. Answer again with only the JSON." },
        {
          _tag: "User",
          text: "Your answer does not match the required output: celsius: Expected number, got \"cold\". Answer again with only the JSON."
        }
      ])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.text("It is cold in Oslo."),
      ScriptedChatModel.text(`{"city":"Oslo","celsius":"cold"}`),
      ScriptedChatModel.text(`{"city":"Oslo","celsius":3}`)
    ]))))

  it.effect("after outputRetries answers that do not decode, the run fails with InvalidOutput", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Agent.run(Agent.make({ output: Weather, outputRetries: 1 }), { input: "Oslo?" }))
      expect(error._tag === "InvalidOutput" && [error.problem, error.text]).toEqual(["it is not JSON", "still not JSON"])
    }).pipe(Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("nope"), ScriptedChatModel.text("still not JSON")]))))

  it.effect("an answer nested 5,000 levels deep is fed back as a mismatch naming the depth limit, then fails with InvalidOutput: never a defect", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Agent.run(Agent.make({ output: Weather, outputRetries: 1 }), { input: "Oslo?" }))
      assert(error._tag === "InvalidOutput")
      expect(error.problem).toBe("it nests deeper than 64 levels (the agent's limit)")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests[1]!.messages.at(-1)).toEqual({
        _tag: "User",
        text: "Your answer does not match the required output: it nests deeper than 64 levels (the agent's limit). Answer again with only the JSON."
      })
    }).pipe(Effect.provide(ScriptedChatModel.layer(() => ScriptedChatModel.text(`{"city":${"[".repeat(5_000)}${"]".repeat(5_000)},"celsius":1}`)))))

  const hugeAnswer = `{"city":"Oslo","celsius":${JSON.stringify("x".repeat(20_000_000))}}`
  it.effect("a wrong answer of 20 MB is quoted back to the model cut after 2,000 characters, saying how much was left out", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Agent.run(Agent.make({ output: Weather, outputRetries: 1 }), { input: "Oslo?" }))
      assert(error._tag === "InvalidOutput")
      const quoted = `celsius: Expected number, got "${"x".repeat(20_000_000)}"`
      const cut = `${quoted.slice(0, 2_000)}… (${quoted.length - 2_000} more characters)`
      const fedBack = `Your answer does not match the required output: ${cut}. Answer again with only the JSON.`
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      const last = requests[1]!.messages.at(-1)!
      const text = last._tag === "User" ? last.text : ""
      // lengths first: a failure reports numbers, not megabytes
      expect([error.problem.length, text.length, error.text.length]).toEqual([cut.length, fedBack.length, hugeAnswer.length])
      expect([error.problem === cut, text === fedBack, error.text === hugeAnswer]).toEqual([true, true, true])
    }).pipe(Effect.provide(ScriptedChatModel.layer(() => ScriptedChatModel.text(hugeAnswer)))), 30_000)

  it.effect("through Agent.resume: a run paused for approval completes with the answer decoded; the resumed model calls ask for the output too", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [transfer], output: Weather })
      const paused = yield* Agent.run(agent, { input: "pay, then report Oslo" })
      assert(paused._tag === "Paused")
      const done = yield* Agent.resume(agent, JSON.parse(JSON.stringify(paused.checkpoint)), Decision.approveAll())
      assert(done._tag === "Completed")
      expectTypeOf(done.value).toEqualTypeOf<{ readonly city: string; readonly celsius: number }>()
      expect(done.value).toEqual({ city: "Oslo", celsius: 5 })
      expect(done.toolCalls).toEqual([{ _tag: "Succeeded", callId: "t1", toolName: "transfer", value: "sent 5" }])
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests.map((r) => r.output?.name)).toEqual(["final_answer", "final_answer", "final_answer"])
      expect(requests.at(-1)!.messages.at(-1)).toEqual({
        _tag: "User",
        text: "Your answer does not match the required output: it is not JSON. Answer again with only the JSON."
      })
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { amount: 5 } }),
      ScriptedChatModel.text("Paid. Oslo is at 5 degrees."),
      ScriptedChatModel.text(`{"city":"Oslo","celsius":5}`)
    ]))))

  it.effect.each(["id", "copy"] as const)("outputRetries counts the answers that did not match across a pause: resumed by %s, the run fails with InvalidOutput at the second", (by) =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [transfer], output: Weather, outputRetries: 1 })
      const paused = yield* Agent.run(agent, { input: "pay, then report Oslo" })
      assert(paused._tag === "Paused")
      expect((paused.checkpoint as Checkpoint.Encoded).outputRetries).toBe(1)
      const target = by === "id" ? paused.runId : JSON.parse(JSON.stringify(paused.checkpoint))
      const error = yield* failureOf(Agent.resume(agent, target, Decision.approveAll()))
      expect(error._tag === "InvalidOutput" && [error.problem, error.text]).toEqual(["it is not JSON", "Paid; still not JSON."])
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(3)
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.text("Not JSON."),
      ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { amount: 5 } }),
      ScriptedChatModel.text("Paid; still not JSON."),
      ScriptedChatModel.text(`{"city":"Oslo","celsius":5}`)
    ])), Effect.provide(RunStore.layerMemory())))

  it.effect("outputRetries counts the answers that did not match across a signed MaxIterationsReached and its continue", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [lookup], output: Weather, outputRetries: 1, maxIterations: 2, checkpointSecret: Redacted.make("s".repeat(32)) })
      const stopped = yield* failureOf(Agent.run(agent, { input: "Oslo?" }))
      assert(stopped._tag === "MaxIterationsReached")
      const error = yield* failureOf(Agent.resume(agent, stopped.checkpoint, Decision.continue()))
      expect(error._tag === "InvalidOutput" && error.text).toBe("21 degrees; not JSON either.")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(3)
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.text("Not JSON."),
      ScriptedChatModel.toolCalls({ id: "l1", name: "lookup", args: { city: "Oslo" } }),
      ScriptedChatModel.text("21 degrees; not JSON either."),
      ScriptedChatModel.text(`{"city":"Oslo","celsius":21}`)
    ]))))

  it("with an output schema, the answer tool's name is reserved", () => {
    const finalAnswer = Tool.make("final_answer", {
      description: "clashes",
      parameters: Schema.Struct({}),
      success: Schema.String,
      handler: () => Effect.succeed("")
    })
    const refused = Agent.validate({ tools: [finalAnswer], output: Weather })
    assert(Result.isFailure(refused))
    expect(refused.failure.problems).toEqual([
      `tool name "final_answer" is reserved for the final answer of an agent with an output schema (adapters may send it as a tool)`
    ])
  })

  it("an output schema that is not an object, or negative retries, are refused when the agent is made", () => {
    const refused = Agent.validate({ output: Schema.String, outputRetries: -1 })
    assert(Result.isFailure(refused))
    expect(refused.failure.problems).toEqual([
      "outputRetries -1 is not a non-negative integer",
      "output must describe a JSON object (use Schema.Struct)"
    ])
  })

  it.effect("an output schema's JSON form is what the model is asked for: a bigint is a string of digits, decoded to a bigint", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ output: Schema.Struct({ n: Schema.BigInt }) })
      const exit = yield* Agent.run(agent, { input: "a big number?" })
      assert(exit._tag === "Completed")
      expect(exit.value).toEqual({ n: 12345678901234567890n })
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests[0]!.output?.schema).toEqual({
        type: "object",
        properties: { n: { type: "string", pattern: "^-?\\d+$" } },
        required: ["n"],
        additionalProperties: false
      })
    }).pipe(Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text(`{"n":"12345678901234567890"}`)]))))

})

/** The run's failure; a run that ends otherwise fails the test naming how it ended. */
const failureOf = <A extends { readonly _tag: string }, E, R>(run: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.result(run), (ended) => Result.isFailure(ended) ? Effect.succeed(ended.failure) : Effect.die(new Error(`expected a failure, the run ended ${ended.success._tag}`)))

describe("budgets", () => {
  /** Calls `lookup` for ever, 10 input and 2 output tokens per model call. */
  const endless = ScriptedChatModel.layer((request) => ({
    toolCalls: [{ name: "lookup", args: { city: `c${request.messages.length}` } }],
    usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 }
  }))

  /**
   * Two model calls ask for a lookup, the third answers; every call reports 10 input and 2
   * output tokens. The run is stopped where `budget` says, then continued with `raise`.
   */
  const crossing = (budget: Budget.Budget, raise: Budget.Budget) =>
    Effect.gen(function*() {
      let executed = 0
      const counted = Tool.make("lookup", {
        description: "Looks up the temperature",
        parameters: Schema.Struct({ city: Schema.String }),
        success: Schema.Number,
        handler: () => Effect.sync(() => ++executed)
      })
      const agent = Agent.make({ tools: [counted], budget })
      const stopped = yield* Effect.flip(Agent.run(agent, { input: "go" }))
      assert(stopped._tag === "BudgetExceeded")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      const atStop = {
        over: [stopped.limit, stopped.allowed, stopped.used],
        modelCalls: requests.length,
        executed,
        batch: (stopped.checkpoint as Checkpoint.Encoded).batch.map((item) => item.call.id)
      }
      const done = yield* Agent.resume(agent, stopped.checkpoint, Decision.continue({ raise }))
      assert(done._tag === "Completed")
      return { atStop, end: { text: done.text, modelCalls: requests.length, executed, toolCalls: done.toolCalls.map((o) => o.callId) } }
    }).pipe(Effect.provide(ScriptedChatModel.layer(
      [0, 1, 2].map((i) => ({
        ...(i < 2 ? { toolCalls: [{ name: "lookup", args: { city: `c${i}` } }] } : { text: "done" }),
        usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 }
      }))
    )))

  const finished = { text: "done", modelCalls: 3, executed: 2, toolCalls: ["call_0_0", "call_1_0"] }

  it.effect.each([
    { budget: { tokens: 20 }, raise: { tokens: 100 }, over: ["tokens", 20, 24] },
    { budget: { inputTokens: 15 }, raise: { inputTokens: 100 }, over: ["inputTokens", 15, 20] },
    { budget: { outputTokens: 3 }, raise: { outputTokens: 100 }, over: ["outputTokens", 3, 4] },
    { budget: { toolCalls: 1 }, raise: { toolCalls: 2 }, over: ["toolCalls", 1, 1] }
  ])("$over.0: the second batch does not run (the token limit its model call crossed, or the tool-call limit it would pass); continue({ raise }) runs it first", ({ budget, over, raise }) =>
    Effect.gen(function*() {
      expect(yield* crossing(budget, raise)).toEqual({
        atStop: { over, modelCalls: 2, executed: 1, batch: ["call_1_0"] },
        end: finished
      })
    }))

  it.effect("modelCalls: counted before a model call only — the last allowed call's batch runs; continue({ raise }) calls the model again", () =>
    Effect.gen(function*() {
      expect(yield* crossing({ modelCalls: 2 }, { modelCalls: 3 })).toEqual({
        atStop: { over: ["modelCalls", 2, 2], modelCalls: 2, executed: 2, batch: [] },
        end: finished
      })
    }))

  it.effect("modelCalls stopping the run's last iteration before its model call: that iteration is not counted, so continue({ raise }) calls the model", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [lookup], budget: { modelCalls: 1 }, maxIterations: 2 })
      const stopped = yield* Effect.flip(Agent.run(agent, { input: "go" }))
      assert(stopped._tag === "BudgetExceeded")
      expect([stopped.limit, (stopped.checkpoint as Checkpoint.Encoded).iteration]).toEqual(["modelCalls", 1])
      const done = yield* Agent.resume(agent, stopped.checkpoint, Decision.continue({ raise: { modelCalls: 2 } }))
      expect(done._tag === "Completed" && done.text).toBe("21 degrees")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(2)
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ name: "lookup", args: { city: "Oslo" } }),
      ScriptedChatModel.text("21 degrees")
    ]))))

  it.effect("a limit given as undefined (a run's budget, a raise) leaves the limit in place: it lifts nothing", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [lookup], budget: { modelCalls: 1 } })
      const stopped = yield* Effect.flip(Agent.run(agent, { input: "go", budget: { modelCalls: undefined } }))
      assert(stopped._tag === "BudgetExceeded")
      expect([stopped.limit, stopped.allowed, stopped.used]).toEqual(["modelCalls", 1, 1])
      const again = yield* Effect.flip(Agent.resume(agent, stopped.checkpoint, Decision.continue({ raise: { modelCalls: undefined } })))
      assert(again._tag === "BudgetExceeded")
      expect([again.limit, again.allowed, again.used]).toEqual(["modelCalls", 1, 1])
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(1)
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ name: "lookup", args: { city: "Oslo" } }),
      ScriptedChatModel.text("21 degrees")
    ]))))

  it.effect("a batch that would pause for approval but that the budget refuses stops with BudgetExceeded first; after the raise a person is asked once, then it runs", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [transfer], budget: { tokens: 10 } })
      // the model call that asks for the transfer crossed the token limit: nobody is asked yet
      const stopped = yield* failureOf(Agent.run(agent, { input: "pay" }))
      assert(stopped._tag === "BudgetExceeded")
      expect([stopped.limit, stopped.allowed, stopped.used]).toEqual(["tokens", 10, 12])
      // the call waits in the stop's batch, still to be approved
      expect((stopped.checkpoint as Checkpoint.Encoded).batch).toEqual([
        { call: { id: "t1", name: "transfer", args: { amount: 5 } }, verdict: "pause", reason: "transfer needs approval for every call (needsApproval: true)" }
      ])
      const paused = yield* Agent.resume(agent, stopped.checkpoint, Decision.continue({ raise: { tokens: 50 } }))
      assert(paused._tag === "Paused")
      expect([paused.kind, paused.pending.map((p) => p.call.id)]).toEqual(["approval", ["t1"]])
      const done = yield* Agent.resume(agent, paused.checkpoint, Decision.approveAll())
      expect(done._tag === "Completed" && done.toolCalls).toEqual([{ _tag: "Succeeded", callId: "t1", toolName: "transfer", value: "sent 5" }])
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(2)
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      { toolCalls: [{ id: "t1", name: "transfer", args: { amount: 5 } }], usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12 } },
      ScriptedChatModel.text("sent")
    ]))))

  it.effect("a batch needing approval that would pass the tool-call budget stops first; an unsigned copy of the stop cannot make a call the gate rejects one to ask for", () =>
    Effect.gen(function*() {
      const agent = Agent.make({
        tools: [transfer],
        budget: { toolCalls: 1 },
        gate: (input) => input.args.amount > 1_000 ? Gate.reject({ message: "too much" }) : Gate.needsApproval(input)
      })
      const stopped = yield* failureOf(Agent.run(agent, { input: "pay" }))
      assert(stopped._tag === "BudgetExceeded")
      expect([stopped.limit, stopped.allowed, stopped.used]).toEqual(["toolCalls", 1, 0])
      // another process: the copy is imported; one of its calls edited to what the gate rejects
      const forged = JSON.parse(JSON.stringify(stopped.checkpoint))
      forged.batch[1].call.args = { amount: 5_000 }
      const refused = yield* Effect.flip(Agent.resume(agent, forged, Decision.continue({ raise: { toolCalls: 5 } })).pipe(Effect.provide(RunStore.layerMemory())))
      expect(refused._tag === "InvalidCheckpoint" && refused.detail).toBe(`call "t2" (transfer) is to be asked of a person, but the gate now says Reject`)
      const paused = yield* Agent.resume(agent, stopped.checkpoint, Decision.continue({ raise: { toolCalls: 5 } }))
      expect(paused._tag === "Paused" && paused.pending.map((p) => p.call.id)).toEqual(["t1", "t2"])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { amount: 5 } }, { id: "t2", name: "transfer", args: { amount: 6 } }),
      ScriptedChatModel.text("sent")
    ]))))

  it.effect("crossing the token budget stops the run before its next batch; continue({ raise }) goes on", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [lookup], budget: { tokens: 30 } })
      const stopped = yield* Effect.flip(Agent.run(agent, { input: "go" }))
      assert(stopped._tag === "BudgetExceeded")
      expect([stopped.limit, stopped.allowed, stopped.used, stopped.message]).toEqual([
        "tokens",
        30,
        36,
        "Budget reached: tokens 36 of 30; resume the checkpoint with Decision.continue({ raise }) to go on"
      ])
      const again = yield* Effect.flip(Agent.resume(agent, stopped.checkpoint, Decision.continue({ raise: { tokens: 50 } })))
      assert(again._tag === "BudgetExceeded")
      expect([again.allowed, again.used]).toEqual([50, 60])
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(5)
    }).pipe(Effect.provide(endless), Effect.provide(RunStore.layerMemory())))

  it.effect("a batch that would pass the tool-call budget does not run; the run's own budget wins over the agent's; resumed by id it runs", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [lookup], budget: { toolCalls: 100, modelCalls: 100 } })
      const stopped = yield* Effect.flip(Agent.run(agent, { input: "go", budget: { toolCalls: 2 } }))
      assert(stopped._tag === "BudgetExceeded")
      // 1 call ran; the next batch's 2 would make 3
      expect([stopped.limit, stopped.allowed, stopped.used]).toEqual(["toolCalls", 2, 1])
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(2)
      expect(lastToolResults(requests.at(-1)!.messages)).toEqual(["call_0_0: 21"])
      const runId = (stopped.checkpoint as { readonly runId: string }).runId
      const done = yield* Agent.resume(agent, runId, Decision.continue({ raise: { toolCalls: 10 } }))
      expect(done._tag === "Completed" && done.toolCalls.map((o) => o.callId)).toEqual([
        "call_0_0",
        "call_1_0",
        "call_1_1",
        "call_2_0",
        "call_2_1"
      ])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ name: "lookup", args: { city: "a" } }),
      ScriptedChatModel.toolCalls({ name: "lookup", args: { city: "b" } }, { name: "lookup", args: { city: "c" } }),
      ScriptedChatModel.toolCalls({ name: "lookup", args: { city: "d" } }, { name: "lookup", args: { city: "e" } }),
      ScriptedChatModel.text("done")
    ])), Effect.provide(RunStore.layerMemory())))

  it.effect("a tool-call budget used up to the limit still lets the model answer: it is counted before a batch only", () =>
    Effect.gen(function*() {
      const exit = yield* Agent.run(Agent.make({ tools: [lookup], budget: { toolCalls: 1 } }), { input: "go" })
      expect(exit._tag === "Completed" && exit.text).toBe("21 degrees")
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ name: "lookup", args: { city: "Oslo" } }),
      ScriptedChatModel.text("21 degrees")
    ]))))

  /** A `lookup` that counts its handler's calls in `handled`, and fails for the city "nowhere". */
  const countedLookup = (handled: { n: number }) =>
    Tool.make("lookup", {
      description: "Looks up the temperature",
      parameters: Schema.Struct({ city: Schema.String }),
      success: Schema.Number,
      handler: ({ city }) =>
        Effect.suspend(() => {
          handled.n += 1
          return city === "nowhere" ? Effect.fail(ToolError.semantic("no such city")) : Effect.succeed(21)
        })
    })

  /** A value nested `depth` levels deep: `{ a: { a: … } }`. */
  const nested = (depth: number): Json.JsonValue => {
    let value: Json.JsonValue = "bottom"
    for (let i = 0; i < depth; i++) value = { a: value }
    return value
  }

  it.effect("toolCalls counts the calls whose handler ran: an unknown tool, arguments that do not decode, arguments beyond the limits do not count — before a batch, once done, nor after a resume from a copy", () =>
    Effect.gen(function*() {
      const handled = { n: 0 }
      const agent = Agent.make({ tools: [countedLookup(handled)], budget: { toolCalls: 2 } })
      const stopped = yield* failureOf(Agent.run(agent, { input: "go" }))
      assert(stopped._tag === "BudgetExceeded")
      expect([stopped.limit, stopped.allowed, stopped.used, handled.n]).toEqual(["toolCalls", 2, 2, 2])
      expect(stopped.message).toBe("Budget reached: toolCalls 2 of 2; resume the checkpoint with Decision.continue({ raise }) to go on")
      expect((stopped.checkpoint as Checkpoint.Encoded).batch.map((item) => item.call.id)).toEqual(["c"])
      // the copy's outcomes are decoded again: the three calls that never ran still do not count
      const done = yield* Agent.resume(agent, JSON.parse(JSON.stringify(stopped.checkpoint)), Decision.continue({ raise: { toolCalls: 3 } }))
      assert(done._tag === "Completed")
      expect([done.text, handled.n]).toEqual(["done", 3])
      expect(done.toolCalls.map((o) => `${o.callId} ${o._tag}`)).toEqual(["bad1 Failed", "bad2 Failed", "bad3 Failed", "a Succeeded", "b Succeeded", "c Succeeded"])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls(
        { id: "bad1", name: "nosuch", args: {} },
        { id: "bad2", name: "lookup", args: { city: nested(100) } },
        { id: "bad3", name: "lookup", args: { city: 5 } }
      ),
      ScriptedChatModel.toolCalls({ id: "a", name: "lookup", args: { city: "a" } }),
      ScriptedChatModel.toolCalls({ id: "b", name: "lookup", args: { city: "b" } }),
      ScriptedChatModel.toolCalls({ id: "c", name: "lookup", args: { city: "c" } }),
      ScriptedChatModel.text("done")
    ]))))

  it.effect("a batch of two calls that fail before their handler and one that runs, under toolCalls 1: the one runs, the others are answered with their errors", () =>
    Effect.gen(function*() {
      const handled = { n: 0 }
      const exit = yield* Agent.run(Agent.make({ tools: [countedLookup(handled)], budget: { toolCalls: 1 } }), { input: "go" })
      assert(exit._tag === "Completed")
      expect([exit.text, handled.n]).toEqual(["done", 1])
      expect(exit.toolCalls.map((o) => o._tag === "Failed" ? o.error.message : `${o.callId} ${o._tag}`)).toEqual([
        `Unknown tool "nosuch". Available tools: lookup`,
        `Invalid arguments for tool "lookup": city: Expected string, got 5`,
        "ok Succeeded"
      ])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls(
        { id: "bad1", name: "nosuch", args: {} },
        { id: "bad2", name: "lookup", args: { city: 5 } },
        { id: "ok", name: "lookup", args: { city: "Oslo" } }
      ),
      ScriptedChatModel.text("done")
    ]))))

  it.effect("a call whose handler ran and failed counts: the next batch passes toolCalls 1 and does not run", () =>
    Effect.gen(function*() {
      const handled = { n: 0 }
      const stopped = yield* failureOf(Agent.run(Agent.make({ tools: [countedLookup(handled)], budget: { toolCalls: 1 } }), { input: "go" }))
      assert(stopped._tag === "BudgetExceeded")
      expect([stopped.limit, stopped.allowed, stopped.used, handled.n]).toEqual(["toolCalls", 1, 1, 1])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ id: "f", name: "lookup", args: { city: "nowhere" } }),
      ScriptedChatModel.toolCalls({ id: "g", name: "lookup", args: { city: "Oslo" } }),
      ScriptedChatModel.text("done")
    ]))))

  it.effect("a continue decision's raise is checked like a budget: an invalid one is InvalidRunInput, and the run stays resumable", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [lookup], budget: { modelCalls: 1 } })
      const stopped = yield* Effect.flip(Agent.run(agent, { input: "go" }))
      assert(stopped._tag === "BudgetExceeded")
      const runId = (stopped.checkpoint as { readonly runId: string }).runId
      const refused = yield* Effect.flip(Agent.resume(agent, runId, Decision.continue({ raise: { modelCalls: 0, toolCalls: 2.5 } })))
      assert(refused._tag === "InvalidRunInput")
      expect(refused.problems).toEqual([
        "raise.modelCalls 0 is not a positive integer",
        "raise.toolCalls 2.5 is not a positive integer"
      ])
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(1)
      const done = yield* Agent.resume(agent, runId, Decision.continue({ raise: { modelCalls: 2 } }))
      expect(done._tag === "Completed" && done.text).toBe("21 degrees")
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ name: "lookup", args: { city: "Oslo" } }),
      ScriptedChatModel.text("21 degrees")
    ])), Effect.provide(RunStore.layerMemory())))

  it("a budget that is not positive integers, or names no limit, is refused when the agent is made", () => {
    const budget = { tokens: 0, toolCalls: 1.5, calls: 3 }
    const refused = Agent.validate({ budget })
    assert(Result.isFailure(refused))
    expect(refused.failure).toBeInstanceOf(AgentError.InvalidAgent)
    expect(refused.failure.problems).toEqual([
      "budget.tokens 0 is not a positive integer",
      "budget.toolCalls 1.5 is not a positive integer",
      "budget.calls is not a limit (tokens, inputTokens, outputTokens, modelCalls, toolCalls)"
    ])
  })
})

describe("model settings and tool choice", () => {
  it.effect("the run's settings win field by field over the agent's; tool choice holds for the first model call only", () =>
    Effect.gen(function*() {
      const agent = Agent.make({
        tools: [lookup],
        settings: { temperature: 0.7, maxOutputTokens: 200, stop: ["END"] },
        toolChoice: { tool: "lookup" }
      })
      yield* Agent.run(agent, { input: "go", settings: { temperature: 0, parallelToolCalls: false } })
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests.map((r) => [r.toolChoice, r.settings])).toEqual([
        [{ tool: "lookup" }, { temperature: 0, maxOutputTokens: 200, stop: ["END"], parallelToolCalls: false }],
        ["auto", { temperature: 0, maxOutputTokens: 200, stop: ["END"], parallelToolCalls: false }]
      ])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ name: "lookup", args: { city: "Oslo" } }),
      ScriptedChatModel.text("21")
    ]))))

  it.effect("a run's own tool choice replaces the agent's for its first model call only", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [lookup, transfer], toolChoice: "none" })
      yield* Agent.run(agent, { input: "go", toolChoice: { tool: "lookup" } })
      yield* Agent.run(agent, { input: "again" })
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests.map((r) => r.toolChoice)).toEqual([{ tool: "lookup" }, "auto", "none"])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ name: "lookup", args: { city: "Oslo" } }),
      ScriptedChatModel.text("21"),
      ScriptedChatModel.text("nothing to do")
    ]))))

  it.effect("a paused run's own settings come back on resume, from its checkpoint or by run id; the tool choice of its first call is not forced again", () =>
    Effect.gen(function*() {
      const agent = Agent.make({
        tools: [lookup, transfer],
        settings: { temperature: 0.7, maxOutputTokens: 200 },
        toolChoice: "required"
      })
      const options = { input: "pay", settings: { temperature: 0, stop: ["END"] }, toolChoice: { tool: "transfer" } } as const
      const first = yield* Agent.run(agent, options)
      const second = yield* Agent.run(agent, options)
      assert(first._tag === "Paused" && second._tag === "Paused")
      const copy = JSON.parse(JSON.stringify(first.checkpoint))
      expect([copy.settings, copy.toolChoice]).toEqual([{ temperature: 0, stop: ["END"] }, undefined])
      yield* Agent.resume(agent, copy, Decision.approveAll())
      yield* Agent.resume(agent, second.runId, Decision.approveAll())
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      const run = { temperature: 0, maxOutputTokens: 200, stop: ["END"] }
      expect(requests.map((r) => [r.toolChoice, r.settings])).toEqual([
        [{ tool: "transfer" }, run],
        [{ tool: "transfer" }, run],
        ["auto", run],
        ["auto", run]
      ])
    }).pipe(
      Effect.provide(ScriptedChatModel.layer((request) =>
        request.messages.at(-1)?._tag === "User"
          ? ScriptedChatModel.toolCalls({ name: "transfer", args: { amount: 5 } })
          : ScriptedChatModel.text("sent")
      )),
      Effect.provide(RunStore.layerMemory())
    ))

  it.effect("a run setting given as undefined (from JavaScript) leaves the agent's in place, and the run still pauses and resumes", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [transfer], settings: { temperature: 0.7 } })
      const settings = JSON.parse(`{ "maxOutputTokens": 99 }`)
      settings.temperature = undefined
      const paused = yield* Agent.run(agent, { input: "pay", settings })
      assert(paused._tag === "Paused")
      expect((paused.checkpoint as Checkpoint.Encoded).settings).toEqual({ maxOutputTokens: 99 })
      const done = yield* Agent.resume(agent, paused.checkpoint, Decision.approveAll())
      expect(done._tag).toBe("Completed")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests.map((r) => r.settings)).toEqual([{ temperature: 0.7, maxOutputTokens: 99 }, { temperature: 0.7, maxOutputTokens: 99 }])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ name: "transfer", args: { amount: 5 } }),
      ScriptedChatModel.text("sent")
    ]))))

  it.effect("a run's own settings, tool choice and budget are checked like the agent's: InvalidRunInput names each problem, and the model is never called", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [lookup] })
      const refused = yield* Effect.flip(Agent.run(agent, {
        input: "go",
        settings: { temperature: 5, maxOutputTokens: 1.5 },
        toolChoice: { tool: "missing" },
        budget: { tokens: 0 }
      }))
      assert(refused._tag === "InvalidRunInput")
      expect(refused.problems).toEqual([
        "budget.tokens 0 is not a positive integer",
        "settings.temperature 5 is not between 0 and 2",
        "settings.maxOutputTokens 1.5 is not a positive integer",
        `toolChoice {"tool":"missing"} must be "auto", "none", "required" or { tool } naming one of the agent's tools`
      ])
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(0)
    }).pipe(Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("never")]))))

  it("settings out of range and a tool choice naming no tool are refused when the agent is made", () => {
    const refused = Agent.validate({
      tools: [lookup],
      settings: { temperature: 3, topP: 0, maxOutputTokens: -1, stop: [""] },
      toolChoice: { tool: "missing" }
    })
    assert(Result.isFailure(refused))
    expect(refused.failure.problems).toEqual([
      `toolChoice {"tool":"missing"} must be "auto", "none", "required" or { tool } naming one of the agent's tools`,
      "settings.temperature 3 is not between 0 and 2",
      "settings.topP 0 is not in (0, 1]",
      "settings.maxOutputTokens -1 is not a positive integer",
      "settings.stop must be non-empty strings"
    ])
  })
})
