import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Agent, ChatMemory, Decision, Middleware, ScriptedChatModel, Tool } from "../src/index.js"

const recorder = (log: Array<string>, label: string) =>
  Middleware.make({
    turn: (input, next) =>
      Effect.sync(() => log.push(`${label}>turn:${input.kind}`)).pipe(
        Effect.andThen(next(input)),
        Effect.tap((exit) => Effect.sync(() => log.push(`${label}<turn:${exit._tag}`)))
      ),
    iteration: (input, next) =>
      Effect.sync(() => log.push(`${label}>iteration:${input.iteration}`)).pipe(
        Effect.andThen(next(input)),
        Effect.tap((exit) => Effect.sync(() => log.push(`${label}<iteration:${Option.match(exit, { onNone: () => "continue", onSome: (e) => e._tag })}`)))
      ),
    model: (input, next) =>
      Effect.sync(() => log.push(`${label}>model:${input.request.messages.length}`)).pipe(
        Effect.andThen(next(input)),
        Effect.tap((response) => Effect.sync(() => log.push(`${label}<model:${response.toolCalls.length}`)))
      ),
    tool: (input, next) =>
      Effect.sync(() => log.push(`${label}>tool:${input.call.id}`)).pipe(
        Effect.andThen(next(input)),
        Effect.tap((result) => Effect.sync(() => log.push(`${label}<tool:${result._tag}`)))
      )
  })

const echo = Tool.make("echo", {
  description: "echoes",
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.String,
  handler: ({ text }) => Effect.succeed(text)
})

describe("Middleware", () => {
  it.effect("composes as an onion in declaration order at every level", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const agent = Agent.make({
        tools: [echo],
        middleware: [recorder(log, "A"), recorder(log, "B")]
      })
      yield* Agent.run(agent, { input: "hi" })
      expect(log).toEqual([
        "A>turn:run",
        "B>turn:run",
        "A>iteration:1",
        "B>iteration:1",
        "A>model:1",
        "B>model:1",
        "B<model:1",
        "A<model:1",
        "A>tool:e1",
        "B>tool:e1",
        "B<tool:Succeeded",
        "A<tool:Succeeded",
        "B<iteration:continue",
        "A<iteration:continue",
        "A>iteration:2",
        "B>iteration:2",
        "A>model:3",
        "B>model:3",
        "B<model:0",
        "A<model:0",
        "B<iteration:Completed",
        "A<iteration:Completed",
        "B<turn:Completed",
        "A<turn:Completed"
      ])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ id: "e1", name: "echo", args: { text: "x" } }),
      ScriptedChatModel.text("done")
    ]))))

  it.effect("a middleware can rewrite the model's request and a tool's result", () =>
    Effect.gen(function*() {
      const agent = Agent.make({
        tools: [echo],
        system: "original",
        middleware: [{
          model: (input, next) => next({ ...input, request: { ...input.request, system: "rewritten" } }),
          tool: (input, next) =>
            Effect.map(next(input), (result) => result._tag === "Succeeded" ? { ...result, value: `<${result.value}>` } : result)
        }]
      })
      const exit = yield* Agent.run(agent, { input: "hi" })
      expect(exit._tag === "Completed" && exit.toolCalls[0]).toEqual({ _tag: "Succeeded", callId: "e1", toolName: "echo", value: "<x>" })
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests.map((r) => r.system)).toEqual(["rewritten", "rewritten"])
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ id: "e1", name: "echo", args: { text: "x" } }),
      ScriptedChatModel.text("done")
    ]))))

  it.effect("a tool middleware runs outside the timeout and observes it (TestClock)", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const slow = Tool.make("slow", {
        description: "too slow",
        parameters: Schema.Struct({}),
        success: Schema.String,
        timeout: "1 second",
        handler: () => Effect.sleep("1 hour").pipe(Effect.as("late"))
      })
      const agent = Agent.make({
        tools: [slow],
        middleware: [{
          tool: (input, next) =>
            Effect.sleep("5 seconds").pipe(
              Effect.andThen(next(input)),
              Effect.tap((result) => Effect.sync(() => seen.push(result._tag === "Failed" ? result.error.message : String(result._tag))))
            )
        }]
      })
      const fiber = yield* Effect.forkChild(Agent.run(agent, { input: "go" }))
      yield* TestClock.adjust("5 seconds")
      expect(seen).toEqual([])
      yield* TestClock.adjust("1 second")
      const exit = yield* Fiber.join(fiber)
      expect(seen).toEqual([`Tool "slow" timed out after 1s`])
      expect(exit._tag).toBe("Completed")
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ name: "slow", args: {} }),
      ScriptedChatModel.text("gave up")
    ]))))

  it.effect("an approval that waits 10 virtual minutes does not time out a 1-second tool", () =>
    Effect.gen(function*() {
      const careful = Tool.make("careful", {
        description: "sensitive and quick",
        parameters: Schema.Struct({}),
        success: Schema.String,
        timeout: "1 second",
        needsApproval: true,
        handler: () => Effect.sleep("500 millis").pipe(Effect.as("done in time"))
      })
      const agent = Agent.make({ tools: [careful] })
      const paused = yield* Agent.run(agent, { input: "go", conversationId: "c1" })
      yield* TestClock.adjust("10 minutes")
      const fiber = yield* Effect.forkChild(Agent.resume(agent, paused._tag === "Paused" ? paused.checkpoint : null, Decision.approveAll()))
      yield* TestClock.adjust("500 millis")
      const exit = yield* Fiber.join(fiber)
      expect(exit._tag === "Completed" && exit.toolCalls).toEqual([
        { _tag: "Succeeded", callId: "c", toolName: "careful", value: "done in time" }
      ])
    }).pipe(Effect.provide(Layer.merge(
      ScriptedChatModel.layer([ScriptedChatModel.toolCalls({ id: "c", name: "careful", args: {} }), ScriptedChatModel.text("ok")]),
      ChatMemory.layerMemory
    ))))
})
