import { describe, expect, it } from "@effect/vitest"
import { Effect, Equal, Exit } from "effect"
import { AgentEvent, AgentExit, Gate, ToolError } from "../src/index.js"

const usage = { inputTokens: 1, outputTokens: 2, totalTokens: 3 }
const completed = AgentExit.Completed({
  runId: "r1",
  conversationId: "c1",
  text: "Sunny",
  value: undefined,
  messages: [],
  state: {},
  toolCalls: [],
  usage
})
const checkpoint = { version: 2 } as never
const paused = AgentExit.Paused({
  runId: "r2",
  conversationId: "c2",
  kind: "approval",
  pending: [{ call: { id: "t1", name: "transfer", args: { amount: 5 } } }],
  checkpoint
})

describe("AgentExit", () => {
  it("constructors tag their fields; values with the same fields are equal", () => {
    expect(completed._tag).toBe("Completed")
    expect(paused._tag).toBe("Paused")
    expect(paused.pending[0]!.call.name).toBe("transfer")
    const again = AgentExit.Completed({ ...completed })
    expect(Equal.equals(completed, again)).toBe(true)
    expect(Equal.equals(completed, AgentExit.Completed({ ...completed, text: "Rain" }))).toBe(false)
  })

  it("match takes the branch of the tag; is narrows to one kind", () => {
    const show = AgentExit.match({ Completed: (exit) => `done: ${exit.text}`, Paused: (exit) => `paused: ${exit.kind}` })
    expect([completed, paused].map(show)).toEqual(["done: Sunny", "paused: approval"])
    expect([completed, paused].filter(AgentExit.is("Paused")).map((exit) => exit.runId)).toEqual(["r2"])
    expect(AgentExit.is("Completed")(paused)).toBe(false)
  })
})

describe("AgentEvent", () => {
  it("constructors tag their fields; match and is read them", () => {
    const meta = { runId: "r1", conversationId: "c1", timestamp: 7 }
    const events: Array<AgentEvent.AgentEvent> = [
      AgentEvent.RunStarted({ ...meta, agent: "weather", input: "Oslo?" }),
      AgentEvent.ToolStarted({ ...meta, callId: "t1", toolName: "get_weather", args: { city: "Oslo" } }),
      AgentEvent.ToolFailed({ ...meta, callId: "t1", toolName: "get_weather", error: ToolError.semantic("no such city"), durationMillis: 2 }),
      AgentEvent.RunCompleted({ ...meta, exit: completed }),
      AgentEvent.RunPaused({ ...meta, exit: paused })
    ]
    expect(events.map((event) => event._tag)).toEqual(["RunStarted", "ToolStarted", "ToolFailed", "RunCompleted", "RunPaused"])
    const line = (event: AgentEvent.AgentEvent) =>
      AgentEvent.match(event, {
        RunStarted: (e) => `start ${e.input}`,
        RunResumed: (e) => `resumed ${e.decision}`,
        ModelCalled: (e) => `model ${e.iteration}`,
        TextDelta: (e) => e.text,
        ModelResponded: (e) => `responded ${e.toolCalls}`,
        ContextCompacted: (e) => `compacted ${e.replaces}`,
        BatchTruncated: (e) => `truncated ${e.batchWidth}`,
        ToolStarted: (e) => `→ ${e.toolName}`,
        ToolSucceeded: (e) => `✓ ${e.toolName}`,
        ToolFailed: (e) => `✗ ${e.error.message}`,
        ToolTimedOut: (e) => `⏱ ${e.timeoutMillis}`,
        RunPaused: (e) => `paused ${e.exit.runId}`,
        RunCompleted: (e) => `done ${e.exit.text}`
      })
    expect(events.map(line)).toEqual(["start Oslo?", "→ get_weather", "✗ no such city", "done Sunny", "paused r2"])
    expect(events.filter(AgentEvent.is("ToolFailed")).map((e) => e.timestamp)).toEqual([7])
  })
})

describe("Gate.Verdict", () => {
  it.effect("each constructor gives its verdict; match and is read it", () =>
    Effect.gen(function*() {
      const verdicts = [
        yield* Gate.proceed(),
        yield* Gate.pause(),
        yield* Gate.reject({ message: "not on Sundays" }),
        yield* Gate.reply({ value: { balance: 3 } })
      ]
      const show = Gate.match({
        Proceed: () => "proceed",
        Pause: () => "pause",
        Reject: (v) => `reject: ${v.message}`,
        Reply: (v) => `reply: ${JSON.stringify(v.value)}`
      })
      expect(verdicts.map(show)).toEqual(["proceed", "pause", "reject: not on Sundays", `reply: {"balance":3}`])
      expect(verdicts.map(Gate.is("Pause"))).toEqual([false, true, false, false])
      // settled verdicts are Exits, read without running (internal/settled.ts)
      expect(Exit.isExit(Gate.proceed())).toBe(true)
    }))
})
