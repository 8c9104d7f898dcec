/**
 * Checkpoints written by the Effect 3 code (format 3, main at `53d05ec`), read, resumed and
 * completed by this code, with the outcomes `fixtures/README.md` states: the signed ones verify,
 * an edited copy is refused and the original stays resumable, and every call runs exactly once.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { readFileSync } from "node:fs"
import { Agent, type AgentError, ChatMemory, Checkpoint, Decision, type Message, RunStore, ScriptedChatModel } from "../src/index.js"
import { clerk, fetcher, looper, pixelPng, viewer } from "./fixtures/agentsV3.js"

const names = ["approval", "environment", "files", "max-iterations", "budget"] as const

/** The checkpoint `checkpoint-v3-<name>.json`, as the Effect 3 code wrote it (a new copy each call). */
const written = (name: typeof names[number]): any =>
  JSON.parse(readFileSync(new URL(`./fixtures/checkpoint-v3-${name}.json`, import.meta.url), "utf8"))

/** A new in-memory run store and chat memory, and a model answering with `script`. */
const fresh = (script: ScriptedChatModel.Script) =>
  Layer.mergeAll(ScriptedChatModel.layer(script), ChatMemory.layerMemory, RunStore.layerMemory())

/** Why a resume was refused: the error's tag, and an InvalidCheckpoint's reason. */
const refusal = <A, R>(resume: Effect.Effect<A, AgentError.ResumeError, R>) =>
  Effect.map(Effect.flip(resume), (error) => error._tag === "InvalidCheckpoint" ? `InvalidCheckpoint ${error.reason}` : error._tag)

const toolResult = (callId: string, toolName: string, content: string, isError = false): Message.ToolResultMessage => ({
  _tag: "ToolResult",
  callId,
  toolName,
  isError,
  content
})

const answer = (text: string): Message.AssistantMessage => ({ _tag: "Assistant", text, toolCalls: [] })

describe("Checkpoints written by Effect 3 (format 3)", () => {
  it.effect("each decodes as a Checkpoint and encodes back to the JSON that was written", () =>
    Effect.gen(function*() {
      for (const name of names) {
        const file = written(name)
        const decoded = yield* Schema.decodeUnknownEffect(Checkpoint.Checkpoint)(file)
        expect([decoded.version, decoded.revision, decoded.pausedAt]).toEqual([3, 1, 0])
        expect(yield* Schema.encodeEffect(Checkpoint.Checkpoint)(decoded)).toEqual(file)
        expect(yield* Schema.decodeUnknownEffect(Checkpoint.AnyVersion)(file)).toEqual(decoded)
      }
    }))

  describe("approval pause, signed (clerk)", () => {
    it.effect("approveAll: its signature verifies; p1 and p2 run once each, lookup not again; history, state, usage, settings and memory as written", () =>
      Effect.gen(function*() {
        const { agent, executions } = clerk()
        const file = written("approval")
        const memory = yield* ChatMemory.ChatMemory
        expect(yield* memory.get("conv-v3-json-approval")).toEqual([])
        const exit = yield* Agent.resume(agent, file, Decision.approveAll())
        assert(exit._tag === "Completed")
        expect(exit.text).toBe("Paid ada 250 and bob 20.")
        expect(executions).toEqual([{ tool: "pay", args: { to: "ada", amount: 250 } }, { tool: "pay", args: { to: "bob", amount: 20 } }])
        expect(exit.state).toEqual({ paid: 275, notes: ["looked up ada"] })
        expect(exit.usage).toEqual({ inputTokens: 42, outputTokens: 13, totalTokens: 55 })
        expect(exit.toolCalls).toEqual([
          { _tag: "Succeeded", callId: "l1", toolName: "lookup", value: "account ada: open" },
          { _tag: "Succeeded", callId: "p1", toolName: "pay", value: "paid 250 to ada" },
          { _tag: "Succeeded", callId: "p2", toolName: "pay", value: "paid 20 to bob" }
        ])
        const history = [
          ...file.messages,
          toolResult("p1", "pay", "paid 250 to ada"),
          toolResult("p2", "pay", "paid 20 to bob"),
          answer("Paid ada 250 and bob 20.")
        ]
        expect(exit.messages).toEqual(history)
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(requests).toHaveLength(1)
        expect(requests[0]!.settings).toEqual({ temperature: 0.3, maxOutputTokens: 256 })
        expect(requests[0]!.messages.slice(0, 4)).toEqual(file.messages)
        expect(yield* memory.get("conv-v3-json-approval")).toEqual(history)
        // consumed: resumed again, it is refused by the run store, and nothing runs again
        expect(yield* refusal(Agent.resume(agent, written("approval"), Decision.approveAll()))).toBe("RunAlreadyResumed")
        expect(executions).toHaveLength(2)
      }).pipe(Effect.provide(fresh([ScriptedChatModel.text("Paid ada 250 and bob 20.")]))))

    it.effect("rejectAll: p1 is rejected, p2 still runs once", () =>
      Effect.gen(function*() {
        const { agent, executions } = clerk()
        const exit = yield* Agent.resume(agent, written("approval"), Decision.rejectAll({ message: "too much" }))
        assert(exit._tag === "Completed")
        expect(exit.messages.slice(4, 6)).toEqual([toolResult("p1", "pay", "rejected: too much", true), toolResult("p2", "pay", "paid 20 to bob")])
        expect(executions).toEqual([{ tool: "pay", args: { to: "bob", amount: 20 } }])
        expect(exit.state).toEqual({ paid: 25, notes: ["looked up ada"] })
      }).pipe(Effect.provide(fresh([ScriptedChatModel.text("ok")]))))

    it.effect("an edited copy is refused (signature), nothing runs; the copy as written then resumes", () =>
      Effect.gen(function*() {
        const { agent, executions } = clerk()
        const edited = written("approval")
        edited.batch[0].call.args.amount = 25
        expect(yield* refusal(Agent.resume(agent, edited, Decision.approveAll()))).toBe("InvalidCheckpoint signature")
        expect(executions).toEqual([])
        const exit = yield* Agent.resume(agent, written("approval"), Decision.approveAll())
        expect(exit._tag === "Completed" && exit.text).toBe("Paid ada 250 and bob 20.")
        expect(executions).toEqual([{ tool: "pay", args: { to: "ada", amount: 250 } }, { tool: "pay", args: { to: "bob", amount: 20 } }])
      }).pipe(Effect.provide(fresh([ScriptedChatModel.text("Paid ada 250 and bob 20.")]))))
  })

  describe("environment pause, unsigned (fetcher)", () => {
    it.effect("retry: only the failed call runs, once; note not again; state and history as written", () =>
      Effect.gen(function*() {
        const { agent, executions } = fetcher({ online: true })
        const file = written("environment")
        const exit = yield* Agent.resume(agent, file, Decision.retry())
        assert(exit._tag === "Completed")
        expect(exit.text).toBe("example.com says hello.")
        expect(executions).toEqual([{ tool: "fetch_page", args: { url: "https://example.com" } }])
        expect(exit.state).toEqual({ notes: ["fetching example.com"] })
        expect(exit.messages).toEqual([
          ...file.messages,
          toolResult("n1", "note", "noted"),
          toolResult("f1", "fetch_page", "https://example.com: hello"),
          answer("example.com says hello.")
        ])
        expect(yield* refusal(Agent.resume(agent, written("environment"), Decision.retry()))).toBe("RunAlreadyResumed")
        expect(executions).toHaveLength(1)
      }).pipe(Effect.provide(fresh([ScriptedChatModel.text("example.com says hello.")]))))

    it.effect("report: nothing runs, the model reads the environment error", () =>
      Effect.gen(function*() {
        const { agent, executions } = fetcher({ online: true })
        const exit = yield* Agent.resume(agent, written("environment"), Decision.report())
        assert(exit._tag === "Completed")
        expect(exit.messages.slice(2, 4)).toEqual([
          toolResult("n1", "note", "noted"),
          toolResult("f1", "fetch_page", "environment error: offline: no network", true)
        ])
        expect(executions).toEqual([])
      }).pipe(Effect.provide(fresh([ScriptedChatModel.text("offline.")]))))

    it.effect("approveAll does not match an environment pause: DecisionMismatch, nothing runs", () =>
      Effect.gen(function*() {
        const { agent, executions } = fetcher({ online: true })
        expect(yield* refusal(Agent.resume(agent, written("environment"), Decision.approveAll()))).toBe("DecisionMismatch")
        expect(executions).toEqual([])
      }).pipe(Effect.provide(fresh([]))))
  })

  describe("files and reasoning in the history, signed (viewer)", () => {
    it.effect("approveAll: its signature verifies; publish runs once; parts, files and reasoning reach the model and the history as written", () =>
      Effect.gen(function*() {
        const { agent, executions } = viewer()
        const file = written("files")
        expect(file.messages[0].parts[1].source).toEqual({ _tag: "Base64", data: pixelPng })
        const exit = yield* Agent.resume(agent, file, Decision.approveAll())
        assert(exit._tag === "Completed")
        expect(exit.text).toBe("Published.")
        expect(executions).toEqual([{ tool: "publish", args: { text: "Revenue rose 12% this quarter." } }])
        expect(exit.messages).toEqual([...file.messages, toolResult("u1", "publish", "published"), answer("Published.")])
        expect(exit.usage).toEqual({ inputTokens: 95, outputTokens: 18, totalTokens: 113 })
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(requests).toHaveLength(1)
        expect(requests[0]!.messages.slice(0, 4)).toEqual(file.messages)
      }).pipe(Effect.provide(fresh([ScriptedChatModel.text("Published.")]))))

    it.effect("a copy with an edited file is refused (signature), nothing runs; the copy as written then resumes", () =>
      Effect.gen(function*() {
        const { agent, executions } = viewer()
        const edited = written("files")
        edited.messages[0].parts[1].name = "other.png"
        expect(yield* refusal(Agent.resume(agent, edited, Decision.approveAll()))).toBe("InvalidCheckpoint signature")
        expect(executions).toEqual([])
        const exit = yield* Agent.resume(agent, written("files"), Decision.approveAll())
        expect(exit._tag === "Completed" && exit.text).toBe("Published.")
        expect(executions).toEqual([{ tool: "publish", args: { text: "Revenue rose 12% this quarter." } }])
      }).pipe(Effect.provide(fresh([ScriptedChatModel.text("Published.")]))))
  })

  describe("the checkpoints of failures (looper)", () => {
    it.effect("MaxIterationsReached: continue iterates again; no tick runs again", () =>
      Effect.gen(function*() {
        const { agent, executions } = looper()
        const file = written("max-iterations")
        const exit = yield* Agent.resume(agent, file, Decision.continue())
        assert(exit._tag === "Completed")
        expect(exit.text).toBe("Done after two ticks.")
        expect(executions).toEqual([])
        expect(exit.messages).toEqual([...file.messages, answer("Done after two ticks.")])
      }).pipe(Effect.provide(fresh([ScriptedChatModel.text("Done after two ticks.")]))))

    it.effect("BudgetExceeded: continue with a raise runs the waiting batch, each tick once", () =>
      Effect.gen(function*() {
        const { agent, executions } = looper()
        const file = written("budget")
        const exit = yield* Agent.resume(agent, file, Decision.continue({ raise: { toolCalls: 5 } }))
        assert(exit._tag === "Completed")
        expect(exit.text).toBe("Ticked twice.")
        expect(executions).toEqual([{ tool: "tick", args: { n: 1 } }, { tool: "tick", args: { n: 2 } }])
        expect(exit.messages).toEqual([
          ...file.messages,
          toolResult("t1", "tick", "tick 1"),
          toolResult("t2", "tick", "tick 2"),
          answer("Ticked twice.")
        ])
        expect(yield* refusal(Agent.resume(agent, written("budget"), Decision.continue({ raise: { toolCalls: 5 } })))).toBe("RunAlreadyResumed")
        expect(executions).toHaveLength(2)
      }).pipe(Effect.provide(fresh([ScriptedChatModel.text("Ticked twice.")]))))

    it.effect("BudgetExceeded: continue without a raise fails again with BudgetExceeded; nothing runs", () =>
      Effect.gen(function*() {
        const { agent, executions } = looper()
        const error = yield* Effect.flip(Agent.resume(agent, written("budget"), Decision.continue()))
        assert(error._tag === "BudgetExceeded")
        expect([error.limit, error.allowed, error.used]).toEqual(["toolCalls", 1, 0])
        expect(executions).toEqual([])
      }).pipe(Effect.provide(fresh([]))))
  })

  it.live("on a live clock each is refused as expired (paused in 1970, beyond the in-memory store's retention); nothing runs", () =>
    Effect.gen(function*() {
      const approval = clerk()
      const environment = fetcher({ online: true })
      const files = viewer()
      const maxIterations = looper()
      const budget = looper()
      const resumes = [
        Agent.resume(approval.agent, written("approval"), Decision.approveAll()),
        Agent.resume(environment.agent, written("environment"), Decision.retry()),
        Agent.resume(files.agent, written("files"), Decision.approveAll()),
        Agent.resume(maxIterations.agent, written("max-iterations"), Decision.continue()),
        Agent.resume(budget.agent, written("budget"), Decision.continue({ raise: { toolCalls: 5 } }))
      ]
      for (const resume of resumes) expect(yield* refusal(resume).pipe(Effect.provide(fresh([])))).toBe("InvalidCheckpoint expired")
      expect([approval, environment, files, maxIterations, budget].flatMap(({ executions }) => executions)).toEqual([])
    }))
})
