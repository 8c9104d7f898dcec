/**
 * A second message while a turn runs on its conversation (issue 36 item 5, decision 170): each
 * policy of `onConversationBusy` in one process — steer, interrupt, rollback — and what a steer
 * racing an end or a pause is answered.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { Agent, ChatMemory, type ChatModel, type Message, Middleware, RunStore, ScriptedChatModel, Tool } from "../src/index.js"

/** A tool that waits for `release` (or is interrupted: `released` then lists its calls). */
const blockingTool = () =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const finalized: Array<string> = []
    const tool = Tool.make("work", {
      description: "works until released",
      parameters: Schema.Struct({}),
      success: Schema.String,
      handler: (_, { callId }) =>
        Effect.acquireRelease(Deferred.succeed(started, undefined), () => Effect.sync(() => finalized.push(callId))).pipe(
          Effect.andThen(Deferred.await(release)),
          Effect.as("done"),
          Effect.scoped
        )
    })
    return { tool, started, release, finalized }
  })

/** Middleware that holds the model call of iteration `n` until `release`, telling `reached` it is there. */
const holdModelCall = (n: number) =>
  Effect.gen(function*() {
    const reached = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const middleware = Middleware.make({
      model: (input, next) =>
        input.iteration === n
          ? Effect.andThen(Deferred.succeed(reached, undefined), Effect.andThen(Deferred.await(release), next(input)))
          : next(input)
    })
    return { middleware, reached, release }
  })

const texts = (messages: ReadonlyArray<Message.Message>) =>
  messages.map((m) =>
    m._tag === "User"
      ? `user:${m.text}`
      : m._tag === "Assistant"
      ? `assistant:${m.text}${m.toolCalls.length > 0 ? "+calls" : ""}`
      : m._tag === "ToolResult"
      ? `result:${m.content}`
      : m._tag
  )

const isolated = (script: ScriptedChatModel.Script) =>
  Layer.mergeAll(ScriptedChatModel.layer(script), RunStore.layerMemory(), ChatMemory.layerMemory)

const lastRequest = Effect.map(ScriptedChatModel.ScriptedChatModel, (model) => model.requests)

describe("onConversationBusy", () => {
  describe("steer", () => {
    it.effect("joins the running turn before its next model call, after the batch's results; the sender is told Steered", () =>
      Effect.gen(function*() {
        const { release, started, tool } = yield* blockingTool()
        const agent = Agent.make({ name: "steering", tools: [tool], onConversationBusy: "steer" })
        const first = yield* Effect.forkChild(Agent.run(agent, { input: "book a table", conversationId: "c", runId: "r1" }))
        yield* Deferred.await(started)
        const second = yield* Effect.forkChild(Agent.run(agent, { input: "for four people", conversationId: "c" }).pipe(Effect.flip))
        yield* Effect.yieldNow
        yield* Deferred.succeed(release, undefined)
        const exit = yield* Fiber.join(first)
        const steered = yield* Fiber.join(second)
        expect(steered._tag).toBe("Steered")
        expect(steered._tag === "Steered" && steered.runId).toBe("r1")
        expect(exit._tag).toBe("Completed")
        const requests: ReadonlyArray<ChatModel.ChatRequest> = yield* lastRequest
        expect(requests).toHaveLength(2)
        expect(texts(requests[1]!.messages)).toEqual(["user:book a table", "assistant:+calls", "result:done", "user:for four people"])
        const memory = yield* ChatMemory.ChatMemory
        expect(texts(yield* memory.get("c"))).toEqual([
          "user:book a table",
          "assistant:+calls",
          "result:done",
          "user:for four people",
          "assistant:Booked for four."
        ])
      }).pipe(Effect.provide(isolated([ScriptedChatModel.toolCalls({ id: "w1", name: "work", args: {} }), ScriptedChatModel.text("Booked for four.")]))))

    it.effect("a run id used again for a steer on another conversation is a new input there, not the first conversation's answer", () =>
      Effect.gen(function*() {
        const steerInto = (conversationId: string, runId: string) =>
          Effect.gen(function*() {
            const { release, started, tool } = yield* blockingTool()
            const agent = Agent.make({ name: "steering", tools: [tool], onConversationBusy: "steer" })
            const first = yield* Effect.forkChild(Agent.run(agent, { input: "book a table", conversationId, runId }))
            yield* Deferred.await(started)
            const second = yield* Effect.forkChild(Agent.run(agent, { input: "for four people", conversationId, runId: "again" }).pipe(Effect.flip))
            yield* Effect.yieldNow
            yield* Deferred.succeed(release, undefined)
            yield* Fiber.join(first)
            return yield* Fiber.join(second)
          })
        expect(yield* steerInto("c-1", "r1")).toMatchObject({ _tag: "Steered", conversationId: "c-1", runId: "r1" })
        expect(yield* steerInto("c-2", "r2")).toMatchObject({ _tag: "Steered", conversationId: "c-2", runId: "r2" })
        const memory = yield* ChatMemory.ChatMemory
        expect(texts(yield* memory.get("c-2"))).toEqual(["user:book a table", "assistant:+calls", "result:done", "user:for four people", "assistant:Booked."])
      }).pipe(Effect.provide(isolated((request) =>
        request.messages.at(-1)?._tag === "User" && request.messages.length === 1
          ? ScriptedChatModel.toolCalls({ id: "w1", name: "work", args: {} })
          : ScriptedChatModel.text("Booked.")
      ))))

    it.effect("an input steered during the turn's last model call is a turn of its own once that turn ended: once, never both", () =>
      Effect.gen(function*() {
        const hold = yield* holdModelCall(1)
        const agent = Agent.make({ name: "steering", onConversationBusy: "steer", middleware: [hold.middleware] })
        const first = yield* Effect.forkChild(Agent.run(agent, { input: "hello", conversationId: "c", runId: "r1" }))
        yield* Deferred.await(hold.reached)
        const second = yield* Effect.forkChild(Agent.run(agent, { input: "and another thing", conversationId: "c", runId: "r2" }))
        yield* Effect.yieldNow
        yield* Deferred.succeed(hold.release, undefined)
        const one = yield* Fiber.join(first)
        const two = yield* Fiber.join(second)
        expect([one._tag, one.runId, two._tag, two.runId]).toEqual(["Completed", "r1", "Completed", "r2"])
        const memory = yield* ChatMemory.ChatMemory
        expect(texts(yield* memory.get("c"))).toEqual(["user:hello", "assistant:Hi.", "user:and another thing", "assistant:Noted."])
      }).pipe(Effect.provide(isolated([ScriptedChatModel.text("Hi."), ScriptedChatModel.text("Noted.")]))))

    it.effect("a turn that paused before taking the input refuses it with SteerRefused: nothing written, the pause stands", () =>
      Effect.gen(function*() {
        const hold = yield* holdModelCall(1)
        const transfer = Tool.make("transfer", {
          description: "Sends money",
          parameters: Schema.Struct({}),
          success: Schema.String,
          needsApproval: true,
          handler: () => Effect.succeed("sent")
        })
        const agent = Agent.make({ name: "steering", tools: [transfer], onConversationBusy: "steer", middleware: [hold.middleware] })
        const first = yield* Effect.forkChild(Agent.run(agent, { input: "pay Ada", conversationId: "c", runId: "r1" }))
        yield* Deferred.await(hold.reached)
        const second = yield* Effect.forkChild(Agent.run(agent, { input: "make it 20", conversationId: "c" }).pipe(Effect.flip))
        yield* Effect.yieldNow
        yield* Deferred.succeed(hold.release, undefined)
        const paused = yield* Fiber.join(first)
        const refused = yield* Fiber.join(second)
        expect(paused._tag).toBe("Paused")
        expect(refused._tag).toBe("SteerRefused")
        expect(refused.message).toBe(
          `Run "r1" paused on conversation "c" before it took the input: nothing was written; resume the run, or send the input as a new turn (it supersedes the pause)`
        )
        const memory = yield* ChatMemory.ChatMemory
        expect(texts(yield* memory.get("c"))).toEqual(["user:pay Ada", "assistant:+calls"])
        const store = yield* RunStore.RunStore
        expect((yield* store.list({ status: "paused" })).map((r) => r.runId)).toEqual(["r1"])
      }).pipe(Effect.provide(isolated([ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: {} })]))))

    it.effect("a start sent again with the same run id (its sender lost) follows the input it left: taken once, answered Steered", () =>
      Effect.gen(function*() {
        const { release, started, tool } = yield* blockingTool()
        const agent = Agent.make({ name: "steering", tools: [tool], onConversationBusy: "steer" })
        const store = yield* RunStore.RunStore
        const first = yield* Effect.forkChild(Agent.run(agent, { input: "book a table", conversationId: "c", runId: "r1" }))
        yield* Deferred.await(started)
        const lost = yield* Effect.forkChild(Agent.run(agent, { input: "for four people", conversationId: "c", runId: "r2" }))
        yield* Effect.yieldNow
        expect(yield* store.steering!.status(RunStore.steerId("c", "r2"))).toEqual({ _tag: "pending" })
        yield* Fiber.interrupt(lost)
        const again = yield* Effect.forkChild(Agent.run(agent, { input: "for four people", conversationId: "c", runId: "r2" }).pipe(Effect.flip))
        yield* Effect.yieldNow
        yield* Deferred.succeed(release, undefined)
        expect((yield* Fiber.join(first))._tag).toBe("Completed")
        expect(yield* Fiber.join(again)).toMatchObject({ _tag: "Steered", runId: "r1" })
        // a third time, once taken: answered at once, nothing added
        expect(yield* Agent.run(agent, { input: "for four people", conversationId: "c", runId: "r2" }).pipe(Effect.flip)).toMatchObject({ _tag: "Steered", runId: "r1" })
        const requests: ReadonlyArray<ChatModel.ChatRequest> = yield* lastRequest
        expect(requests).toHaveLength(2)
        expect(texts(requests[1]!.messages)).toEqual(["user:book a table", "assistant:+calls", "result:done", "user:for four people"])
      }).pipe(Effect.provide(isolated([ScriptedChatModel.toolCalls({ id: "w1", name: "work", args: {} }), ScriptedChatModel.text("Booked for four.")]))))

    it.effect("a start sent again that finds the conversation free withdraws the input it left before its own turn: the model sees it once", () =>
      Effect.gen(function*() {
        const hold = yield* holdModelCall(1)
        const agent = Agent.make({ name: "steering", onConversationBusy: "steer", middleware: [hold.middleware] })
        const first = yield* Effect.forkChild(Agent.run(agent, { input: "hello", conversationId: "c", runId: "r1" }))
        yield* Deferred.await(hold.reached)
        const lost = yield* Effect.forkChild(Agent.run(agent, { input: "and another thing", conversationId: "c", runId: "r2" }))
        yield* Effect.yieldNow
        yield* Fiber.interrupt(lost)
        yield* Deferred.succeed(hold.release, undefined)
        expect((yield* Fiber.join(first))._tag).toBe("Completed")
        const two = yield* Agent.run(agent, { input: "and another thing", conversationId: "c", runId: "r2" })
        expect([two._tag, two.runId]).toEqual(["Completed", "r2"])
        const requests: ReadonlyArray<ChatModel.ChatRequest> = yield* lastRequest
        expect(texts(requests[1]!.messages)).toEqual(["user:hello", "assistant:Hi.", "user:and another thing"])
      }).pipe(Effect.provide(isolated([ScriptedChatModel.text("Hi."), ScriptedChatModel.text("Noted.")]))))

    it.effect("a run may not choose steer, interrupt or rollback when its agent's policy is another", () =>
      Effect.gen(function*() {
        const agent = Agent.make({ name: "plain" })
        const error = yield* Agent.run(agent, { input: "hi", conversationId: "c", onConversationBusy: "steer" }).pipe(Effect.flip)
        expect(error._tag === "InvalidRunInput" && error.problems).toEqual([
          `onConversationBusy "steer" is a policy of the agent, not of a run: this agent's is "fail" (its running turns take steered input, or can be cancelled, only when the agent says so); a run may say "fail" or "wait"`
        ])
      }).pipe(Effect.provide(isolated([]))))
  })

  describe("interrupt and rollback", () => {
    it.effect("interrupt: the running turn is cancelled (TurnInterrupted, its tool interrupted, its call answered cancelled), then the new turn runs", () =>
      Effect.gen(function*() {
        const { finalized, started, tool } = yield* blockingTool()
        const agent = Agent.make({ name: "interrupting", tools: [tool], onConversationBusy: "interrupt" })
        const first = yield* Effect.forkChild(Agent.run(agent, { input: "search everything", conversationId: "c", runId: "r1" }))
        yield* Deferred.await(started)
        const second = yield* Agent.run(agent, { input: "no, just the docs", conversationId: "c", runId: "r2" })
        const cancelled = yield* Fiber.join(first).pipe(Effect.flip)
        expect(second._tag).toBe("Completed")
        expect(cancelled._tag).toBe("TurnInterrupted")
        expect(cancelled._tag === "TurnInterrupted" && [cancelled.by, cancelled.rolledBack]).toEqual(["r2", false])
        expect(finalized).toEqual(["w1"])
        const memory = yield* ChatMemory.ChatMemory
        expect(texts(yield* memory.get("c"))).toEqual([
          "user:search everything",
          "assistant:+calls",
          "result:cancelled: the call was interrupted before it returned a result",
          "user:no, just the docs",
          "assistant:Only the docs."
        ])
      }).pipe(Effect.provide(isolated([ScriptedChatModel.toolCalls({ id: "w1", name: "work", args: {} }), ScriptedChatModel.text("Only the docs.")]))))

    it.effect("rollback: as interrupt, and the cancelled turn's messages are removed from the conversation", () =>
      Effect.gen(function*() {
        const { finalized, started, tool } = yield* blockingTool()
        const agent = Agent.make({ name: "rolling", tools: [tool], onConversationBusy: "rollback" })
        yield* Agent.run(agent, { input: "hi", conversationId: "c" })
        const first = yield* Effect.forkChild(Agent.run(agent, { input: "search everything", conversationId: "c", runId: "r1" }))
        yield* Deferred.await(started)
        const second = yield* Agent.run(agent, { input: "no, just the docs", conversationId: "c", runId: "r2" })
        const cancelled = yield* Fiber.join(first).pipe(Effect.flip)
        expect(second._tag).toBe("Completed")
        expect(cancelled._tag === "TurnInterrupted" && [cancelled.by, cancelled.rolledBack]).toEqual(["r2", true])
        expect(finalized).toEqual(["w1"])
        const memory = yield* ChatMemory.ChatMemory
        expect(texts(yield* memory.get("c"))).toEqual(["user:hi", "assistant:Hello.", "user:no, just the docs", "assistant:Only the docs."])
        const requests: ReadonlyArray<ChatModel.ChatRequest> = yield* lastRequest
        expect(texts(requests.at(-1)!.messages)).toEqual(["user:hi", "assistant:Hello.", "user:no, just the docs"])
      }).pipe(Effect.provide(isolated([
        ScriptedChatModel.text("Hello."),
        ScriptedChatModel.toolCalls({ id: "w1", name: "work", args: {} }),
        ScriptedChatModel.text("Only the docs.")
      ]))))
  })
})
