import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { Agent, ChatMemory, Message, ScriptedChatModel, ToolCallingManager } from "../src/index.js"
import { holdingTool, lastToolResults } from "./agentFixtures.js"

describe("ChatMemory", () => {
  it.effect("interrupting a run mid-batch runs the tools' finalizers; the next turn heals the dangling calls and completes", () =>
    Effect.gen(function*() {
      const { allStarted, released, tool } = yield* holdingTool(1)
      const agent = Agent.make({ tools: [tool] })
      const fiber = yield* Effect.forkChild(Agent.run(agent, { input: "hang", conversationId: "c-heal" }))
      yield* Deferred.await(allStarted)
      yield* Fiber.interrupt(fiber)
      expect(released).toEqual(["h1"])

      const memory = yield* ChatMemory.ChatMemory
      expect(Message.danglingToolCalls(yield* memory.get("c-heal")).map((c) => c.id)).toEqual(["h1"])

      const exit = yield* Agent.run(agent, { input: "are you back?", conversationId: "c-heal" })
      expect(exit._tag === "Completed" && exit.text).toBe("yes")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests[1]!.messages.map((m) => m._tag)).toEqual(["User", "Assistant", "ToolResult", "User"])
      expect(lastToolResults(requests[1]!.messages)).toEqual([
        "h1: error cancelled: the call was interrupted before it returned a result"
      ])
      expect(Message.danglingToolCalls(yield* memory.get("c-heal"))).toEqual([])
    }).pipe(Effect.provide(Layer.merge(
      ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls({ id: "h1", name: "hang", args: {} }),
        ScriptedChatModel.text("yes")
      ]),
      ChatMemory.layerMemory
    ))))

  it.effect("interrupting a run stops every running tool of an unbounded batch; the next turn heals all of them", () =>
    Effect.gen(function*() {
      const { allStarted, released, tool } = yield* holdingTool(3)
      const agent = Agent.make({ tools: [tool] })
      const fiber = yield* Agent.run(agent, { input: "hang", conversationId: "c-many" }).pipe(
        Effect.provide(ToolCallingManager.unbounded()),
        Effect.forkChild
      )
      yield* Deferred.await(allStarted)
      yield* Fiber.interrupt(fiber)
      expect([...released].sort()).toEqual(["a", "b", "c"])
      const exit = yield* Agent.run(agent, { input: "back?", conversationId: "c-many" })
      expect(exit._tag === "Completed" && exit.text).toBe("yes")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(lastToolResults(requests[1]!.messages).map((line) => line.split(":")[0])).toEqual(["a", "b", "c"])
    }).pipe(Effect.provide(Layer.merge(
      ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls({ id: "a", name: "hang", args: {} }, { id: "b", name: "hang", args: {} }, { id: "c", name: "hang", args: {} }),
        ScriptedChatModel.text("yes")
      ]),
      ChatMemory.layerMemory
    ))))

  it.effect("the in-memory store appends, replaces, removes; conversations are isolated", () =>
    Effect.gen(function*() {
      const memory = ChatMemory.makeInMemory()
      yield* memory.append("a", [Message.user("1")])
      yield* memory.append("a", [Message.assistant("2")])
      yield* memory.append("b", [Message.user("x")])
      expect(yield* memory.get("a")).toEqual([Message.user("1"), Message.assistant("2")])
      yield* memory.replace("a", [Message.user("only")])
      expect(yield* memory.get("a")).toEqual([Message.user("only")])
      yield* memory.remove("a")
      expect(yield* memory.get("a")).toEqual([])
      expect(yield* memory.get("b")).toEqual([Message.user("x")])
    }))
})
