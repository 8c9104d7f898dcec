import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import { ChatModel, Message, ScriptedChatModel } from "../src/index.js"

const request = (text: string): ChatModel.ChatRequest => ({
  system: "sys",
  messages: [Message.user(text)],
  tools: [],
  toolChoice: "auto"
})

describe("ScriptedChatModel", () => {
  it.effect("answers in order, records every request, and names the step it ran out at", () =>
    Effect.gen(function*() {
      const model = yield* ChatModel.ChatModel
      const first = yield* model.generate(request("a"))
      expect(first).toEqual({
        text: "",
        toolCalls: [{ id: "call_0_0", name: "t", args: { x: 1 } }],
        finishReason: "tool-calls",
        usage: ChatModel.emptyUsage
      })
      const second = yield* model.generate(request("b"))
      expect(second.text).toBe("done after 1 message")
      const error = yield* model.generate(request("c")).pipe(Effect.flip)
      expect(error.reason).toBe("script-exhausted")
      expect(error.message).toBe("ScriptedChatModel received request #3, but its script has only 2 step(s)")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests.map((r) => (r.messages[0] as Message.UserMessage).text)).toEqual(["a", "b", "c"])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ name: "t", args: { x: 1 } }),
      (req) => ScriptedChatModel.text(`done after ${req.messages.length} message`)
    ]))))

  it.effect("a function script answers every request; steps may take virtual time", () =>
    Effect.gen(function*() {
      const model = yield* ChatModel.ChatModel
      const fiber = yield* Effect.forkChild(model.generate(request("slow")))
      yield* TestClock.adjust("999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      expect((yield* Fiber.join(fiber)).text).toBe("#0: slow")
    }).pipe(Effect.provide(ScriptedChatModel.layer((req, index) =>
      Effect.as(Effect.sleep("1 second"), ScriptedChatModel.text(`#${index}: ${(req.messages[0] as Message.UserMessage).text}`))
    ))))

  it.effect("recordRequests: false keeps no request, and the script still advances", () =>
    Effect.gen(function*() {
      const model = yield* ChatModel.ChatModel
      expect((yield* model.generate(request("a"))).toolCalls.map((call) => call.id)).toEqual(["call_0_0"])
      expect((yield* model.generate(request("b"))).text).toBe("#1: b")
      expect((yield* model.generate(request("c")).pipe(Effect.flip)).reason).toBe("script-exhausted")
      expect((yield* ScriptedChatModel.ScriptedChatModel).requests).toEqual([])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ name: "t", args: { x: 1 } }),
      (req, index) => ScriptedChatModel.text(`#${index}: ${(req.messages[0] as Message.UserMessage).text}`)
    ], { recordRequests: false }))))
})

describe("ScriptedChatModel streaming", () => {
  it.effect("streams a step's chunks as text deltas, then the whole response", () =>
    Effect.gen(function*() {
      const model = yield* ChatModel.ChatModel
      const parts = yield* Stream.runCollect(model.stream(request("a")))
      expect(parts).toEqual([
        { _tag: "TextDelta", text: "Hel" },
        { _tag: "TextDelta", text: "lo" },
        { _tag: "Done", response: { text: "Hello", toolCalls: [], finishReason: "stop", usage: ChatModel.emptyUsage } }
      ])
      const error = yield* Stream.runCollect(model.stream(request("b"))).pipe(Effect.flip)
      expect(error.reason).toBe("script-exhausted")
    }).pipe(Effect.provide(ScriptedChatModel.layer([{ chunks: ["Hel", "lo"] }]))))

  it.effect("fromStream and fromGenerate derive the missing half", () =>
    Effect.gen(function*() {
      const response: ChatModel.ChatResponse = { text: "Hi", toolCalls: [], finishReason: "stop", usage: ChatModel.emptyUsage }
      const streamed = ChatModel.fromStream(() =>
        Stream.make<Array<ChatModel.StreamPart>>({ _tag: "TextDelta", text: "H" }, { _tag: "TextDelta", text: "i" }, { _tag: "Done", response })
      )
      expect(yield* streamed.generate(request("x"))).toEqual(response)
      const empty = ChatModel.fromStream(() => Stream.empty)
      expect((yield* Effect.flip(empty.generate(request("x")))).reason).toBe("invalid-response")
      const generated = ChatModel.fromGenerate(() => Effect.succeed(response))
      expect(yield* Stream.runCollect(generated.stream(request("x")))).toEqual([
        { _tag: "TextDelta", text: "Hi" },
        { _tag: "Done", response }
      ])
    }))
})
