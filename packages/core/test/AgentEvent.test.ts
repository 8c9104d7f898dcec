import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Layer, Logger, Stream } from "effect"
import { Agent, AgentEvent, AgentTest, ChatMemory, ChatModel, Decision, ScriptedChatModel } from "../src/index.js"
import { emailTool, Executions, weatherTool } from "./agentFixtures.js"

const script = () =>
  ScriptedChatModel.layer([
    ScriptedChatModel.toolCalls(
      { id: "w1", name: "get_weather", args: { city: "Oslo" } },
      { id: "m1", name: "send_email", args: { to: "a@b.c", body: "sunny" } }
    ),
    { chunks: ["Sun", "ny and ", "mailed."] }
  ])

const buildAgent = Effect.gen(function*() {
  const executions = new Executions()
  return Agent.make({ tools: [weatherTool(executions), emailTool(executions)] })
})

const describeEvent = AgentEvent.match({
  RunStarted: (e) => e._tag,
  RunResumed: (e) => e._tag,
  ModelCalled: (e) => `${e._tag} #${e.iteration}`,
  TextDelta: (e) => `TextDelta ${JSON.stringify(e.text)}`,
  ModelResponded: (e) => `${e._tag} #${e.iteration}`,
  ContextCompacted: (e) => `${e._tag} ${e.replaces}`,
  BatchTruncated: (e) => `${e._tag} ${e.notRun.length}`,
  ToolStarted: (e) => `${e._tag} ${e.callId}`,
  ToolSucceeded: (e) => `${e._tag} ${e.callId}`,
  ToolFailed: (e) => `${e._tag} ${e.callId}`,
  ToolTimedOut: (e) => `${e._tag} ${e.callId}`,
  RunPaused: (e) => `${e._tag} ${e.exit._tag}`,
  RunCompleted: (e) => `${e._tag} ${e.exit._tag}`
})

const expectedRun = ["RunStarted", "ModelCalled #1", "ModelResponded #1", "RunPaused Paused"]
const expectedResume = [
  "RunResumed",
  "ToolStarted w1",
  "ToolSucceeded w1",
  "ToolStarted m1",
  "ToolSucceeded m1",
  "ModelCalled #2",
  `TextDelta "Sun"`,
  `TextDelta "ny and "`,
  `TextDelta "mailed."`,
  "ModelResponded #2",
  "RunCompleted Completed"
]

describe("AgentEvent", () => {
  it.effect("a two-iteration run with a pause and a resume emits exactly this sequence, ending with the exit", () =>
    Effect.gen(function*() {
      const agent = yield* buildAgent
      const first = yield* Stream.runCollect(Agent.stream(agent, { input: "weather, then mail it", conversationId: "c1" }))
      expect(first.map(describeEvent)).toEqual(expectedRun)
      const last = first.at(-1)!
      if (last._tag !== "RunPaused") throw new Error("expected a pause")
      expect(new Set(first.map((e) => e.runId)).size).toBe(1)
      expect(first.every((e) => e.conversationId === "c1" && e.timestamp === 0)).toBe(true)

      const second = yield* Stream.runCollect(Agent.streamResume(agent, last.exit.checkpoint, Decision.approveAll()))
      expect(second.map(describeEvent)).toEqual(expectedResume)
      const done = second.at(-1)!
      expect(done._tag === "RunCompleted" && done.exit.text).toBe("Sunny and mailed.")
      expect(second.every((e) => e.runId === first[0]!.runId)).toBe(true)
    }).pipe(Effect.provide(Layer.merge(script(), ChatMemory.layerMemory))))

  it.effect("observers see every event; one that throws and one that never returns change nothing", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const observers = Layer.mergeAll(
        AgentEvent.layer((event) => Effect.sync(() => seen.push(describeEvent(event)))),
        AgentEvent.layer(() => Effect.sync(() => { throw new Error("observer bug") })),
        AgentEvent.layer(() => Effect.never, { capacity: 2 })
      )
      const runBoth = Effect.gen(function*() {
        const agent = yield* buildAgent
        const paused = yield* Agent.run(agent, { input: "weather, then mail it", conversationId: "c1" })
        return yield* Agent.resume(agent, paused._tag === "Paused" ? paused.checkpoint : null, Decision.approveAll())
      })
      const baseline = yield* runBoth.pipe(Effect.provide(Layer.merge(script(), ChatMemory.layerMemory)))
      const observed = yield* Effect.scoped(
        Effect.gen(function*() {
          const context = yield* Layer.build(observers)
          const exit = yield* runBoth.pipe(
            Effect.provide(Layer.merge(script(), ChatMemory.layerMemory)),
            Effect.provide(context)
          )
          yield* Effect.yieldNow.pipe(Effect.repeat({ until: () => seen.length >= 15, times: 1000 }))
          return exit
        })
      ).pipe(Effect.provide(Logger.layer([])))
      const strip = (exit: typeof baseline) => exit._tag === "Completed" ? { ...exit, runId: "", conversationId: "" } : exit
      expect(strip(observed)).toEqual(strip(baseline))
      expect(seen).toEqual([...expectedRun, ...expectedResume])
    }))

  it.effect("an observer's buffer holds `capacity` events; beyond it events are dropped and a warning logged once", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const seen: Array<string> = []
      const warnings: Array<string> = []
      const blocked = AgentEvent.layer(
        (event) => Effect.sync(() => seen.push(event._tag)).pipe(Effect.andThen(Deferred.await(release))),
        { capacity: 2 }
      )
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(blocked)
        const agent = yield* buildAgent
        yield* Agent.run(agent, { input: "x" }).pipe(Effect.provide(context))
        yield* Deferred.succeed(release, undefined)
        yield* Effect.yieldNow.pipe(Effect.repeat({ until: () => seen.length >= 2 && warnings.length >= 1, times: 1000 }))
      })).pipe(
        Effect.provide(Logger.layer([Logger.make(({ message }) => void warnings.push(String(message)))]))
      )
      // 4 events at once, the run being synchronous: the buffer holds 2 (an observer waiting for an
      // event is woken asynchronously on Effect 4, so the first one waits in the buffer too)
      expect(seen).toHaveLength(2)
      expect(seen[0]).toBe("RunStarted")
      expect(warnings).toEqual([expect.stringMatching(/^An agent event observer is too slow: [12] event\(s\) dropped so far$/)])
    }).pipe(Effect.provide(script())))

  it.effect("ending the stream early interrupts the run", () =>
    Effect.gen(function*() {
      const agent = yield* buildAgent
      const firstTwo = yield* Stream.runCollect(Stream.take(Agent.stream(agent, { input: "x" }), 2))
      expect(firstTwo.map(describeEvent)).toEqual(["RunStarted", "ModelCalled #1"])
    }).pipe(Effect.provide(ScriptedChatModel.layer(() => Effect.never))))

  it.effect("a slow consumer, of streams merged, never slows their runs: the events wait in the streams' buffers", () =>
    Effect.gen(function*() {
      const agent = Agent.make({})
      const runs = Stream.merge(Agent.stream(agent, { input: "one" }), Agent.stream(agent, { input: "two" }))
      const consumed: Array<[tag: string, at: number, consumedAt: number]> = []
      yield* AgentTest.settle(runs.pipe(
        Stream.runForEach((event) =>
          Effect.sleep("1 second").pipe(Effect.andThen(Clock.currentTimeMillis), Effect.map((now) => void consumed.push([event._tag, event.timestamp, now])))
        )
      ))
      const ends = consumed.filter(([tag]) => tag === "RunCompleted")
      expect(ends).toHaveLength(2)
      // both runs ended at once, in virtual time; their consumer took a second per event
      expect(ends.map(([, at]) => at)).toEqual([0, 0])
      expect(consumed.map(([, , consumedAt]) => consumedAt)).toEqual(consumed.map((_, i) => (i + 1) * 1000))
    }).pipe(Effect.provide(AgentTest.model([ScriptedChatModel.text("done")]))))

  it.effect("a stream's sink belongs to its run: afterwards, runs have no listener again", () =>
    Effect.gen(function*() {
      const agent = yield* buildAgent
      const seen: Array<string> = []
      const observed = yield* Agent.stream(agent, { input: "x", conversationId: "c1" }).pipe(
        Stream.runForEach((event) => Effect.sync(() => seen.push(event._tag)))
      )
      expect(observed).toBeUndefined()
      expect(seen).toEqual(["RunStarted", "ModelCalled", "ModelResponded", "RunPaused"])
      expect(yield* AgentEvent.sinks).toEqual([])
      const exit = yield* Agent.run(agent, { input: "x" })
      expect(exit._tag === "Completed" && exit.text).toBe("Sunny and mailed.")
      expect(seen).toHaveLength(4)
    }).pipe(Effect.provide(Layer.merge(script(), ChatMemory.layerMemory))))
})

describe("AgentEvent with a model that does not stream", () => {
  it.effect("its text arrives as one TextDelta, without going through a Stream", () =>
    Effect.gen(function*() {
      let streamed = 0
      const model = ChatModel.fromGenerate(() =>
        Effect.succeed({ text: "All at once.", toolCalls: [], finishReason: "stop" as const, usage: ChatModel.emptyUsage })
      )
      const agent = Agent.make({})
      const events = yield* Stream.runCollect(Agent.stream(agent, { input: "hi" })).pipe(
        Effect.provideService(ChatModel.ChatModel, { ...model, stream: (request) => Stream.suspend(() => { streamed++; return model.stream(request) }) })
      )
      expect(events.map(describeEvent)).toEqual([
        "RunStarted",
        "ModelCalled #1",
        `TextDelta "All at once."`,
        "ModelResponded #1",
        "RunCompleted Completed"
      ])
      expect(streamed).toBe(0)
    }))
})

describe("AgentEvent.layer options", () => {
  it.effect("a capacity that is not a positive integer is refused", () =>
    Effect.gen(function*() {
      for (const capacity of [0, -1, 1.5]) {
        const error = yield* Layer.build(AgentEvent.layer(() => Effect.void, { capacity })).pipe(Effect.scoped, Effect.flip)
        expect(error.message).toBe(`Invalid observer options: capacity ${capacity} is not a positive integer`)
      }
    }))
})
