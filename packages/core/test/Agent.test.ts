import { assert, describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Logger, Redacted, Schema } from "effect"
import { TestClock } from "effect/testing"
import {
  Agent,
  Checkpoint,
  AgentError,
  ChatMemory,
  Decision,
  type ChatModel,
  Gate,
  Message,
  RunStore,
  ScriptedChatModel,
  Slot,
  Tool,
  ToolCallingManager
} from "../src/index.js"
import { emailTool, Executions, lastToolResults, trackedMemory, weatherTool } from "./agentFixtures.js"

const lastUserOrTool = (request: ChatModel.ChatRequest) => request.messages.at(-1)

describe("Agent", () => {
  describe("make", () => {
    it.effect("refuses bad options, naming every problem", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Effect.fromResult(Agent.validate({
          name: "has spaces",
          tools: [weatherTool(new Executions()), weatherTool(new Executions()), "not a tool" as unknown as Tool.Any],
          maxIterations: 0,
          onEnvironmentError: "explode" as "pause",
          onConversationBusy: "sometimes" as "wait",
          slots: { "1bad": Slot.sum(), notes: { kind: "last" } as unknown as Slot.Any },
          checkpointSecret: Redacted.make("x".repeat(31))
        })))
        expect(error.problems).toEqual([
          `name "has spaces" must match ^[\\w.:-]{1,128}$`,
          "tools #3 are not tools (use Tool.make or Agent.toTool)",
          "maxIterations 0 is not a positive integer",
          `onEnvironmentError "explode" must be "report" or "pause"`,
          `onConversationBusy "sometimes" must be "fail", "wait", "steer", "interrupt" or "rollback"`,
          `slot name "1bad" is not an identifier`,
          `slot "notes" is not a Slot (use Slot.last, Slot.append, Slot.sum or Slot.make)`,
          "checkpointSecret must be a Redacted string of at least 32 bytes"
        ])
      }))

    it("make throws the InvalidAgent that validate returns, with the toolkit's problems among them", () => {
      const tools = [weatherTool(new Executions()), weatherTool(new Executions())]
      expect(() => Agent.make({ tools })).toThrow(`Invalid agent (1 problem): tool name "get_weather" is used by 2 tools`)
      try {
        Agent.make({ tools })
      } catch (error) {
        expect(error).toBeInstanceOf(AgentError.InvalidAgent)
      }
      expect(Agent.make({ tools: [weatherTool(new Executions())], checkpointSecret: Redacted.make("x".repeat(32)) }).name).toBe("agent")
    })

    it.effect("tells the model about every tool, from the toolkit's table", () =>
      Effect.gen(function*() {
        const agent = Agent.make({ tools: [weatherTool(new Executions())], system: "be brief" })
        yield* Agent.run(agent, { input: "hi" })
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(requests[0]!.system).toBe("be brief")
        expect(requests[0]!.tools).toEqual([{
          name: "get_weather",
          description: "Current weather for a city",
          parameters: agent.toolkit.entries.get("get_weather")!.parametersJsonSchema
        }])
      }).pipe(Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("hello")]))))
  })

  describe("run", () => {
    it.effect("drives model and tools until a text answer: Completed with text, messages, tool calls, usage", () =>
      Effect.gen(function*() {
        const executions = new Executions()
        const agent = Agent.make({ tools: [weatherTool(executions)] })
        const exit = yield* Agent.run(agent, { input: "Weather in Oslo and Rome?" })
        expect(exit._tag).toBe("Completed")
        if (exit._tag !== "Completed") return
        expect(exit.text).toBe("Oslo: Sunny in Oslo; Rome: Sunny in Rome")
        expect(exit.messages.map((m) => m._tag)).toEqual(["User", "Assistant", "ToolResult", "ToolResult", "Assistant"])
        expect(exit.toolCalls.map((o) => o._tag)).toEqual(["Succeeded", "Succeeded"])
        expect(exit.usage).toEqual({ inputTokens: 20, outputTokens: 4, totalTokens: 24 })
        expect(executions.counts).toEqual({ get_weather: 2 })
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(requests).toHaveLength(2)
        expect(lastToolResults(requests[1]!.messages)).toEqual(["w1: Sunny in Oslo", "w2: Sunny in Rome"])
      }).pipe(Effect.provide(ScriptedChatModel.layer([
        {
          toolCalls: [{ id: "w1", name: "get_weather", args: { city: "Oslo" } }, { id: "w2", name: "get_weather", args: { city: "Rome" } }],
          usage: { inputTokens: 10, outputTokens: 3, totalTokens: 13 }
        },
        (request) => {
          const results = request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult")
          return {
            text: `Oslo: ${results[0]!.content}; Rome: ${results[1]!.content}`,
            usage: { inputTokens: 10, outputTokens: 1, totalTokens: 11 }
          }
        }
      ]))))

    it.effect("a bad tool argument reaches the model as a semantic error and the run goes on", () =>
      Effect.gen(function*() {
        const executions = new Executions()
        const agent = Agent.make({ tools: [weatherTool(executions)] })
        const exit = yield* Agent.run(agent, { input: "weather?" })
        expect(exit._tag === "Completed" && exit.text).toBe("retried")
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(lastToolResults(requests[1]!.messages)).toEqual([
          `c1: error semantic error: Invalid arguments for tool "get_weather": city: Missing key`
        ])
        expect(executions.counts).toEqual({ get_weather: 1 })
      }).pipe(Effect.provide(ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls({ id: "c1", name: "get_weather", args: { town: "Oslo" } }),
        ScriptedChatModel.toolCalls({ id: "c2", name: "get_weather", args: { city: "Oslo" } }),
        ScriptedChatModel.text("retried")
      ]))))

    it.effect("a model failure is a typed error", () =>
      Effect.gen(function*() {
        const agent = Agent.make({})
        const error = yield* Agent.run(agent, { input: "hi" }).pipe(Effect.flip)
        expect(error._tag).toBe("ModelError")
        expect(error._tag === "ModelError" && error.reason).toBe("script-exhausted")
      }).pipe(Effect.provide(ScriptedChatModel.layer([]))))

    it.effect("state for undeclared slots is refused", () =>
      Effect.gen(function*() {
        const agent = Agent.make({ slots: { notes: Slot.append(Schema.String) } })
        const error = yield* Agent.run(agent, { input: "hi", state: { nope: 1 } as any }).pipe(Effect.flip)
        expect(error._tag === "InvalidRunInput" && error.problems).toEqual([
          `state for undeclared slot(s) "nope"; declared: notes`
        ])
      }).pipe(Effect.provide(ScriptedChatModel.layer([]))))

    it.effect("slot names are the agent's own: \"constructor\" is undeclared, and a slot named like an Object member starts at its initial value", () =>
      Effect.gen(function*() {
        const agent = Agent.make({ slots: { notes: Slot.append(Schema.String) } })
        const error = yield* Agent.run(agent, { input: "hi", state: { constructor: 1 } as any }).pipe(Effect.flip)
        expect(error._tag === "InvalidRunInput" && error.problems).toEqual([
          `state for undeclared slot(s) "constructor"; declared: notes`
        ])
        const counted = Agent.make({ slots: { toString: Slot.sum() } })
        const exit = yield* Agent.run(counted, { input: "hi", state: {} })
        expect(exit._tag === "Completed" && exit.state).toEqual({ toString: 0 })
      }).pipe(Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("hello")]))))

    it.effect("a run's onConversationBusy other than \"fail\" or \"wait\" is refused before anything runs", () =>
      Effect.gen(function*() {
        const agent = Agent.make({})
        const error = yield* Agent.run(agent, { input: "hi", conversationId: "c-busy", onConversationBusy: "later" as "wait" }).pipe(Effect.flip)
        expect(error._tag === "InvalidRunInput" && error.problems).toEqual([`onConversationBusy "later" must be "fail", "wait", "steer", "interrupt" or "rollback"`])
        expect(yield* Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("c-busy"))).toEqual([])
      }).pipe(Effect.provide(ScriptedChatModel.layer([])), Effect.provide(ChatMemory.layerMemory)))
  })

  describe("maxIterations", () => {
    it.effect("reached → MaxIterationsReached carrying a checkpoint; Decision.continue() goes on", () =>
      Effect.gen(function*() {
        const executions = new Executions()
        const agent = Agent.make({ tools: [weatherTool(executions)], maxIterations: 2 })
        const error = yield* Agent.run(agent, { input: "loop", conversationId: "c-max" }).pipe(Effect.flip)
        expect(error._tag).toBe("MaxIterationsReached")
        if (error._tag !== "MaxIterationsReached") return
        expect(error.message).toBe("No answer after 2 iterations; resume the checkpoint with Decision.continue() to go on")
        expect(executions.counts).toEqual({ get_weather: 2 })
        const exit = yield* Agent.resume(agent, JSON.parse(JSON.stringify(error.checkpoint)), { _tag: "Continue" })
        expect(exit._tag === "Completed" && exit.text).toBe("finally")
        expect(exit._tag === "Completed" && exit.toolCalls.length).toBe(3)
        expect(executions.counts).toEqual({ get_weather: 3 })
      }).pipe(Effect.provide(Layer.merge(
        ScriptedChatModel.layer([
          ScriptedChatModel.toolCalls({ name: "get_weather", args: { city: "A" } }),
          ScriptedChatModel.toolCalls({ name: "get_weather", args: { city: "B" } }),
          ScriptedChatModel.toolCalls({ name: "get_weather", args: { city: "C" } }),
          ScriptedChatModel.text("finally")
        ]),
        ChatMemory.layerMemory
      ))))
  })

  describe("gates", () => {
    it.effect("proceed, reject(reason), reply(result): evaluated serially, in call order, before any call runs", () =>
      Effect.gen(function*() {
        const executions = new Executions()
        const log: Array<string> = []
        const tools = [weatherTool(executions)]
        const gate: Gate.Gate = ({ call }) =>
          Effect.sync(() => log.push(`gate ${call.id} (executed so far: ${executions.counts.get_weather ?? 0})`)).pipe(
            Effect.andThen(
              call.id === "c2"
                ? Gate.reject({ message: "not that city" })
                : call.id === "c3"
                ? Gate.reply({ value: "Cloudy (cached)" })
                : Gate.proceed()
            )
          )
        const agent = Agent.make({ tools, gate })
        const exit = yield* Agent.run(agent, { input: "three cities" })
        expect(log).toEqual([
          "gate c1 (executed so far: 0)",
          "gate c2 (executed so far: 0)",
          "gate c3 (executed so far: 0)"
        ])
        expect(executions.counts).toEqual({ get_weather: 1 })
        expect(exit._tag === "Completed" && exit.toolCalls.map((o) => o._tag)).toEqual(["Succeeded", "Rejected", "Replied"])
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(lastToolResults(requests[1]!.messages)).toEqual([
          "c1: Sunny in Oslo",
          "c2: error rejected: not that city",
          "c3: Cloudy (cached)"
        ])
      }).pipe(Effect.provide(ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls(
          { id: "c1", name: "get_weather", args: { city: "Oslo" } },
          { id: "c2", name: "get_weather", args: { city: "Paris" } },
          { id: "c3", name: "get_weather", args: { city: "Rome" } }
        ),
        ScriptedChatModel.text("done")
      ]))))

    it.effect("needsApproval as a rule sees the decoded arguments: small transfers run, a large one pauses", () =>
      Effect.gen(function*() {
        const seen: Array<unknown> = []
        const transfer = Tool.make("transfer", {
          description: "Sends money",
          parameters: Schema.Struct({ to: Schema.String, amount: Schema.NumberFromString }),
          success: Schema.String,
          needsApproval: (args, context) =>
            Effect.sync(() => {
              seen.push({ args, callId: context.callId, toolName: context.toolName, state: context.state })
              return args.amount > 100
            }),
          handler: ({ amount, to }) => Effect.succeed(`sent ${amount} to ${to}`)
        })
        const agent = Agent.make({ tools: [transfer], slots: { total: Slot.sum() } })
        const exit = yield* Agent.run(agent, { input: "pay", state: { total: 7 } })
        expect(seen).toEqual([
          { args: { to: "ada", amount: 20 }, callId: "t1", toolName: "transfer", state: { total: 7 } },
          { args: { to: "bob", amount: 500 }, callId: "t2", toolName: "transfer", state: { total: 7 } }
        ])
        assert(exit._tag === "Paused")
        expect(exit.pending.map((p) => p.call.id)).toEqual(["t2"])
        const done = yield* Agent.resume(agent, exit.checkpoint, Decision.approveAll())
        expect(done._tag === "Completed" && done.toolCalls).toEqual([
          { _tag: "Succeeded", callId: "t1", toolName: "transfer", value: "sent 20 to ada" },
          { _tag: "Succeeded", callId: "t2", toolName: "transfer", value: "sent 500 to bob" }
        ])
      }).pipe(Effect.provide(ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls(
          { id: "t1", name: "transfer", args: { to: "ada", amount: "20" } },
          { id: "t2", name: "transfer", args: { to: "bob", amount: "500" } }
        ),
        ScriptedChatModel.text("done")
      ]))))

    it.effect("arguments that do not decode, and unknown tools, never reach a gate: the model is told what was wrong", () =>
      Effect.gen(function*() {
        const gated: Array<string> = []
        const executions = new Executions()
        const agent = Agent.make({
          tools: [weatherTool(executions), emailTool(executions)],
          gate: (input) => Effect.sync(() => gated.push(input.call.id)).pipe(Effect.andThen(Gate.needsApproval(input)))
        })
        const exit = yield* Agent.run(agent, { input: "go" })
        expect(gated).toEqual(["w1"])
        expect(exit._tag === "Completed" && exit.toolCalls.map((o) => o._tag)).toEqual(["Succeeded", "Failed", "Failed"])
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(lastToolResults(requests[1]!.messages)).toEqual([
          "w1: Sunny in Oslo",
          `m1: error semantic error: Invalid arguments for tool "send_email": body: Missing key`,
          "x1: error semantic error: Unknown tool \"launch_rockets\". Available tools: get_weather, send_email"
        ])
        expect(executions.counts).toEqual({ get_weather: 1 })
      }).pipe(Effect.provide(ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls(
          { id: "w1", name: "get_weather", args: { city: "Oslo" } },
          { id: "m1", name: "send_email", args: { to: "a@b.c" } },
          { id: "x1", name: "launch_rockets", args: {} }
        ),
        ScriptedChatModel.text("done")
      ]))))

    it("a gate is typed per tool: its input's arguments are the decoded parameters of the tool it names", () => {
      const transfer = Tool.make("transfer", {
        description: "Sends money",
        parameters: Schema.Struct({ amount: Schema.Number }),
        success: Schema.String,
        handler: ({ amount }) => Effect.succeed(`sent ${amount}`)
      })
      const note = Tool.make("note", {
        description: "Takes a note",
        parameters: Schema.Struct({ text: Schema.String }),
        success: Schema.String,
        handler: ({ text }) => Effect.succeed(text)
      })
      const agent = Agent.make({
        tools: [transfer, note],
        gate: (input) => {
          if (input.name === "transfer") {
            expectTypeOf(input.args).toEqualTypeOf<{ readonly amount: number }>()
            return input.args.amount > 100 ? Gate.pause() : Gate.proceed()
          }
          expectTypeOf(input.args).toEqualTypeOf<{ readonly text: string }>()
          return Gate.proceed()
        }
      })
      expect(agent.toolNames).toEqual(["transfer", "note"])
    })

    it.effect("the default gate pauses tools that need approval before anything of the batch runs", () =>
      Effect.gen(function*() {
        const executions = new Executions()
        const agent = Agent.make({ tools: [weatherTool(executions), emailTool(executions)] })
        const exit = yield* Agent.run(agent, { input: "mail the weather" })
        expect(exit._tag).toBe("Paused")
        if (exit._tag !== "Paused") return
        expect(exit.kind).toBe("approval")
        expect(exit.pending.map((p) => p.call.id)).toEqual(["m1"])
        expect(executions.counts).toEqual({})
      }).pipe(Effect.provide(ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls(
          { id: "w1", name: "get_weather", args: { city: "Oslo" } },
          { id: "m1", name: "send_email", args: { to: "a@b.c", body: "sunny" } }
        )
      ]))))

    it.effect("a pause says why: the default gate names the tool's needsApproval (true, or its rule), a gate of its own gives its reason; recorded with the call", () =>
      Effect.gen(function*() {
        const executions = new Executions()
        const transfer = Tool.make("transfer", {
          description: "Sends money",
          parameters: Schema.Struct({ amount: Schema.Number }),
          success: Schema.String,
          needsApproval: ({ amount }) => Effect.succeed(amount > 100),
          handler: ({ amount }) => Effect.succeed(`sent ${amount}`)
        })
        const byDefault = Agent.make({ tools: [emailTool(executions), transfer] })
        const paused = yield* Agent.run(byDefault, { input: "mail and pay" })
        assert(paused._tag === "Paused")
        const reasons = [
          "send_email needs approval for every call (needsApproval: true)",
          "the needsApproval rule of transfer asked for approval of these arguments"
        ]
        expect(paused.pending.map((p) => [p.call.id, p.why])).toEqual([["m1", reasons[0]], ["t1", reasons[1]]])
        const store = yield* RunStore.RunStore
        const record = yield* store.get(paused.runId)
        assert(record._tag === "Some")
        const batch = (record.value.checkpoint as Checkpoint.Encoded).batch
        expect(batch.map((item) => [item.call.id, item.verdict, item.reason])).toEqual([["m1", "pause", reasons[0]], ["t1", "pause", reasons[1]]])

        const own = Agent.make({
          tools: [emailTool(executions), transfer],
          gate: (input) => input.name === "transfer" ? Gate.pause({ why: "transfers are checked by a person" }) : Gate.pause()
        })
        const asked = yield* Agent.run(own, { input: "mail and pay" })
        assert(asked._tag === "Paused")
        expect(asked.pending).toEqual([
          { call: { id: "m1", name: "send_email", args: { to: "a@b.c", body: "sunny" } } },
          { call: { id: "t1", name: "transfer", args: { amount: 500 } }, why: "transfers are checked by a person" }
        ])
        expect(executions.counts).toEqual({})
      }).pipe(Effect.provide(Layer.merge(RunStore.layerMemory(), ScriptedChatModel.layer(() =>
        ScriptedChatModel.toolCalls(
          { id: "m1", name: "send_email", args: { to: "a@b.c", body: "sunny" } },
          { id: "t1", name: "transfer", args: { amount: 500 } }
        )
      )))))

    it.effect("one word, one meaning: a pause's kind is `kind`, the gate's words `why`, an error's class `reason`; the stored JSON keeps its keys (decision 166)", () =>
      Effect.gen(function*() {
        const agent = Agent.make({
          tools: [emailTool(new Executions())],
          gate: () => Gate.pause({ why: "every mail is read by a person" })
        })
        const paused = yield* Agent.run(agent, { input: "mail" })
        assert(paused._tag === "Paused")
        expect([paused.kind, paused.pending.map((p) => p.why), "reason" in paused, paused.pending.some((p) => "reason" in p)])
          .toEqual(["approval", ["every mail is read by a person"], false, false])
        // the checkpoint's JSON is the stored format: its keys are the ones every stored checkpoint has
        const stored = paused.checkpoint as unknown as { readonly reason: string; readonly kind?: string; readonly batch: ReadonlyArray<{ readonly reason?: string }> }
        expect([stored.reason, stored.kind, stored.batch.map((item) => item.reason)]).toEqual(["approval", undefined, ["every mail is read by a person"]])
        const decoded = yield* Schema.decodeUnknownEffect(Checkpoint.AnyVersion)(paused.checkpoint)
        expect([decoded.kind, decoded.batch.map((item) => item.why)]).toEqual(["approval", ["every mail is read by a person"]])
        expect(yield* Schema.encodeEffect(Checkpoint.Checkpoint)(decoded)).toEqual(paused.checkpoint)
        const mismatch = yield* Effect.flip(Agent.resume(agent, paused.runId, Decision.retry()))
        assert(mismatch._tag === "DecisionMismatch")
        expect([mismatch.kind, mismatch.message]).toEqual(["approval", "Decision Retry cannot resume a run stopped for approval (use ApproveAll or RejectAll or ByCall)"])
      }).pipe(Effect.provide(Layer.merge(RunStore.layerMemory(), ScriptedChatModel.layer(() =>
        ScriptedChatModel.toolCalls({ id: "m1", name: "send_email", args: { to: "a@b.c", body: "hi" } })
      )))))

    it.effect("a gate that waits 10 virtual minutes does not time out a 1-second tool", () =>
      Effect.gen(function*() {
        const slow = Tool.make("slow", {
          description: "takes 500 ms",
          parameters: Schema.Struct({}),
          success: Schema.String,
          timeout: "1 second",
          handler: () => Effect.sleep("500 millis").pipe(Effect.as("ok"))
        })
        const agent = Agent.make({
          tools: [slow],
          gate: () => Effect.sleep("10 minutes").pipe(Effect.andThen(Gate.proceed()))
        })
        const fiber = yield* Effect.forkChild(Agent.run(agent, { input: "go" }))
        yield* TestClock.adjust("10 minutes")
        yield* TestClock.adjust("500 millis")
        const exit = yield* Fiber.join(fiber)
        expect(exit._tag === "Completed" && exit.toolCalls).toEqual([
          { _tag: "Succeeded", callId: "s1", toolName: "slow", value: "ok" }
        ])
      }).pipe(Effect.provide(ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls({ id: "s1", name: "slow", args: {} }),
        ScriptedChatModel.text("done")
      ]))))
  })

  describe("return-direct", () => {
    it.effect("a batch of return-direct calls completes the turn with their results, without another model call", () =>
      Effect.gen(function*() {
        const lookup = Tool.make("lookup", {
          description: "looks up an answer",
          parameters: Schema.Struct({ q: Schema.String }),
          success: Schema.String,
          returnDirect: true,
          handler: ({ q }) => Effect.succeed(`answer to ${q}`)
        })
        const agent = Agent.make({ tools: [lookup, weatherTool(new Executions())] })
        const direct = yield* Agent.run(agent, { input: "ask" })
        expect(direct._tag === "Completed" && direct.text).toBe("answer to a\nanswer to b")
        expect(direct._tag === "Completed" && direct.messages.at(-1)).toEqual(Message.assistant("answer to a\nanswer to b"))
        const mixed = yield* Agent.run(agent, { input: "ask again" })
        expect(mixed._tag === "Completed" && mixed.text).toBe("model answered")
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(requests).toHaveLength(3)
      }).pipe(Effect.provide(ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls({ name: "lookup", args: { q: "a" } }, { name: "lookup", args: { q: "b" } }),
        ScriptedChatModel.toolCalls({ name: "lookup", args: { q: "c" } }, { name: "get_weather", args: { city: "X" } }),
        ScriptedChatModel.text("model answered")
      ]))))
  })

  describe("memory", () => {
    it.effect("a run without conversationId keeps its conversation out of ChatMemory, whether it completes, fails or pauses", () =>
      Effect.gen(function*() {
        const memory = trackedMemory()
        const executions = new Executions()
        const agent = Agent.make({ tools: [emailTool(executions)] })
        const runs = [
          Agent.run(agent, { input: "a" }).pipe(Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("ok")]))),
          Agent.run(agent, { input: "b" }).pipe(Effect.provide(ScriptedChatModel.layer([]))),
          Agent.run(agent, { input: "c" }).pipe(
            Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.toolCalls({ name: "send_email", args: { to: "x", body: "y" } })]))
          )
        ]
        const exits = yield* Effect.forEach(runs, (run) => Effect.exit(run.pipe(Effect.provide(memory.layer))))
        expect(exits.map((e) => Exit.isSuccess(e) ? e.value._tag : "failed")).toEqual(["Completed", "failed", "Paused"])
        expect([memory.read.size, memory.created.size, memory.removed.size]).toEqual([0, 0, 0])
        // the paused ephemeral run resumes from its checkpoint alone, still without memory
        const paused = exits[2]!
        assert(Exit.isSuccess(paused) && paused.value._tag === "Paused")
        const resumed = yield* Agent.resume(agent, paused.value.checkpoint, Decision.approveAll()).pipe(
          Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("sent")])),
          Effect.provide(memory.layer)
        )
        expect(resumed._tag === "Completed" && resumed.messages.map((m) => m._tag)).toEqual(["User", "Assistant", "ToolResult", "Assistant"])
        expect(executions.counts).toEqual({ send_email: 1 })
        expect([memory.read.size, memory.created.size, memory.removed.size]).toEqual([0, 0, 0])
      }))

    it.effect("an interrupted ephemeral run leaves nothing in ChatMemory", () =>
      Effect.gen(function*() {
        const memory = trackedMemory()
        const agent = Agent.make({})
        const modelCalled = yield* Deferred.make<void>()
        const fiber = yield* Agent.run(agent, { input: "a" }).pipe(
          Effect.provide(Layer.merge(
            ScriptedChatModel.layer(() => Deferred.succeed(modelCalled, undefined).pipe(Effect.andThen(Effect.never))),
            memory.layer
          )),
          Effect.forkChild
        )
        yield* Deferred.await(modelCalled)
        yield* Fiber.interrupt(fiber)
        expect([memory.read.size, memory.created.size, memory.removed.size]).toEqual([0, 0, 0])
      }))

    it.effect("a named conversation keeps its history across turns", () =>
      Effect.gen(function*() {
        const agent = Agent.make({})
        yield* Agent.run(agent, { input: "first", conversationId: "c-1" })
        const exit = yield* Agent.run(agent, { input: "second", conversationId: "c-1" })
        expect(exit._tag === "Completed" && exit.messages).toEqual([
          Message.user("first"),
          Message.assistant("one"),
          Message.user("second"),
          Message.assistant("two")
        ])
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(requests[1]!.messages.map((m) => m._tag)).toEqual(["User", "Assistant", "User"])
        expect(lastUserOrTool(requests[1]!)).toEqual(Message.user("second"))
      }).pipe(Effect.provide(Layer.merge(
        ScriptedChatModel.layer([ScriptedChatModel.text("one"), ScriptedChatModel.text("two")]),
        ChatMemory.layerMemory
      ))))
  })

  describe("state slots", () => {
    const noteTool = Tool.make("note", {
      description: "remembers",
      parameters: Schema.Struct({ text: Schema.String, cost: Schema.Number }),
      success: Schema.String,
      handler: ({ cost, text }, { state }) =>
        Effect.sleep(`${10 - cost} millis`).pipe(
          Effect.as(Tool.output(`seen ${(state.notes as ReadonlyArray<string>).length} notes`, {
            writes: { notes: [text], total: cost, last: text, longest: text }
          }))
        )
    })
    const slots = {
      notes: Slot.append(Schema.String),
      total: Slot.sum(),
      last: Slot.last(Schema.String, ""),
      longest: Slot.make({ schema: Schema.String, initial: "", reduce: (a, b: string) => b.length > a.length ? b : a })
    }
    const script = ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls(
        { id: "n1", name: "note", args: { text: "alpha", cost: 1 } },
        { id: "n2", name: "note", args: { text: "be", cost: 2 } },
        { id: "n3", name: "note", args: { text: "gamma-long", cost: 3 } }
      ),
      ScriptedChatModel.toolCalls({ id: "n4", name: "note", args: { text: "d", cost: 4 } }),
      ScriptedChatModel.text("done")
    ])

    for (const [mode, manager] of Object.entries({
      sequential: ToolCallingManager.sequential(),
      unbounded: ToolCallingManager.unbounded(),
      bounded: ToolCallingManager.bounded({ permits: 2 })
    })) {
      it.effect(`${mode}: every call of a batch sees one snapshot; writes fold in call order`, () =>
        Effect.gen(function*() {
          const warnings: Array<string> = []
          const agent = Agent.make({ tools: [noteTool], slots })
          const fiber = yield* Agent.run(agent, { input: "note", state: { total: 100 } }).pipe(
            Effect.provide(Layer.mergeAll(script, manager, Logger.layer([Logger.make(({ logLevel, message }) => {
              if (logLevel === "Warn") warnings.push(String(message))
            })]))),
            Effect.forkChild
          )
          yield* TestClock.adjust("1 minute")
          const exit = yield* Fiber.join(fiber)
          if (exit._tag !== "Completed") throw new Error("expected Completed")
          expect(exit.state).toEqual({ notes: ["alpha", "be", "gamma-long", "d"], total: 110, last: "d", longest: "gamma-long" })
          expect(exit.toolCalls.map((o) => o._tag === "Succeeded" && o.value)).toEqual([
            "seen 0 notes",
            "seen 0 notes",
            "seen 0 notes",
            "seen 3 notes"
          ])
          expect(warnings).toEqual([
            `State slot "last" (last) was written by 3 calls of one batch (n1, n2, n3); the last in call order wins`
          ])
        }))
    }

    it.effect("a write to an undeclared slot turns the call into a semantic failure", () =>
      Effect.gen(function*() {
        const rogue = Tool.make("rogue", {
          description: "writes where it should not",
          parameters: Schema.Struct({}),
          success: Schema.String,
          handler: () => Effect.succeed(Tool.output("ok", { writes: { secret: 1 } }))
        })
        const agent = Agent.make({ tools: [rogue], slots: { total: Slot.sum() } })
        const exit = yield* Agent.run(agent, { input: "go" }).pipe(Effect.provide(Logger.layer([])))
        expect(exit._tag === "Completed" && exit.state).toEqual({ total: 0 })
        expect(exit._tag === "Completed" && exit.toolCalls[0]!._tag === "Failed" && exit.toolCalls[0]!.error.message).toBe(
          `Tool "rogue" wrote to undeclared state slot(s) "secret"; declared: total`
        )
      }).pipe(Effect.provide(ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls({ name: "rogue", args: {} }),
        ScriptedChatModel.text("done")
      ]))))

    it.effect("a write to \"constructor\" or \"__proto__\" is a write to an undeclared slot (a semantic failure, not a defect)", () =>
      Effect.gen(function*() {
        const rogue = Tool.make("rogue", {
          description: "writes where it should not",
          parameters: Schema.Struct({ slot: Schema.String }),
          success: Schema.String,
          handler: ({ slot }) => Effect.succeed(Tool.output("ok", { writes: { [slot]: 1 } }))
        })
        const agent = Agent.make({ tools: [rogue], slots: { total: Slot.sum() } })
        const exit = yield* Agent.run(agent, { input: "go" }).pipe(Effect.provide(Logger.layer([])))
        expect(exit._tag === "Completed" && exit.toolCalls.map((o) => o._tag === "Failed" && o.error.message)).toEqual([
          `Tool "rogue" wrote to undeclared state slot(s) "constructor"; declared: total`,
          `Tool "rogue" wrote to undeclared state slot(s) "__proto__"; declared: total`
        ])
        expect(exit._tag === "Completed" && exit.state).toEqual({ total: 0 })
      }).pipe(Effect.provide(ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls({ name: "rogue", args: { slot: "constructor" } }, { name: "rogue", args: { slot: "__proto__" } }),
        ScriptedChatModel.text("done")
      ]))))
  })
})
