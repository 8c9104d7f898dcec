/**
 * The attacks of issue 12, as a user and an attacker would try them: an approved call runs
 * once whoever holds a copy of the checkpoint, nothing runs that no verdict allowed, a
 * checkpoint cannot name another conversation, one turn at a time per conversation.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Redacted, Schema, Scope } from "effect"
import { TestClock } from "effect/testing"
import { Agent, ChatMemory, ChatModel, Decision, Gate, type Message, RunStore, ScriptedChatModel, Tool } from "../src/index.js"
import { diskTool, Executions } from "./agentFixtures.js"

const secret = Redacted.make("a-secret-of-at-least-thirty-two-bytes!")

/** A bank: `transfer` needs approval, `lookup` does not; executions are counted per call id. */
const bank = (options: { readonly signed?: boolean; readonly onConversationBusy?: "fail" | "wait" } = {}) => {
  const executed: Array<string> = []
  const transfer = Tool.make("transfer", {
    description: "Sends money",
    parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
    success: Schema.String,
    needsApproval: true,
    handler: ({ amount, to }, { callId }) => Effect.sync(() => executed.push(callId)).pipe(Effect.as(`sent ${amount} to ${to}`))
  })
  const lookup = Tool.make("lookup", {
    description: "Looks up a balance",
    parameters: Schema.Struct({ account: Schema.String }),
    success: Schema.String,
    handler: ({ account }, { callId }) => Effect.sync(() => executed.push(callId)).pipe(Effect.as(`${account}: 1000`))
  })
  const agent = Agent.make({
    name: "bank",
    tools: [transfer, lookup],
    ...(options.signed === true ? { checkpointSecret: secret } : {}),
    ...(options.onConversationBusy === undefined ? {} : { onConversationBusy: options.onConversationBusy })
  })
  return { agent, executed }
}

/** The model asks for one transfer (and a lookup), then answers. */
const model = ScriptedChatModel.layer((request) =>
  request.messages.at(-1)?._tag === "User"
    ? ScriptedChatModel.toolCalls(
      { id: "t1", name: "transfer", args: { to: "ada", amount: 100 } },
      { id: "l1", name: "lookup", args: { account: "main" } }
    )
    : ScriptedChatModel.text("done")
)

const pausedRun = (agent: Agent.Any, conversationId?: string) =>
  Effect.flatMap(Agent.run(agent, { input: "pay ada", ...(conversationId === undefined ? {} : { conversationId }) }), (exit) =>
    exit._tag === "Paused" ? Effect.succeed(exit) : Effect.die(new Error("expected a pause")))

const copyOf = (checkpoint: unknown) => JSON.parse(JSON.stringify(checkpoint))

describe("exactly once", () => {
  it.effect("an unsigned copy whose pending call was edited into one the gate rejects cannot have it approved: refused, the run still resumable", () =>
    Effect.gen(function*() {
      const executed: Array<string> = []
      const transfer = Tool.make("transfer", {
        description: "Sends money",
        parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
        success: Schema.String,
        handler: ({ amount, to }) => Effect.sync(() => executed.push(`${to} ${amount}`)).pipe(Effect.as("sent"))
      })
      // the policy: transfers to mallory are refused outright; the others are asked of a person
      const agent = Agent.make({
        name: "bank",
        tools: [transfer],
        gate: ({ args }) => (args as { readonly to: string }).to === "mallory" ? Gate.reject({ message: "not to mallory" }) : Gate.pause()
      })
      const paused = yield* pausedRun(agent).pipe(Effect.provide(ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "ada", amount: 100 } }),
        ScriptedChatModel.text("done")
      ])))
      // another store (another process): the copy is imported, not named
      const elsewhere = RunStore.layerMemory()
      const forged = copyOf(paused.checkpoint)
      forged.batch[0].call.args = { to: "mallory", amount: 9000 }
      for (const message of forged.messages) for (const call of message.toolCalls ?? []) call.args = { to: "mallory", amount: 9000 }
      const refused = yield* Effect.flip(Agent.resume(agent, forged, Decision.approveAll()).pipe(Effect.provide(elsewhere)))
      expect([refused._tag, refused.message]).toEqual([
        "InvalidCheckpoint",
        `Invalid checkpoint (verdicts): call "t1" (transfer) may run by the checkpoint and the decision, but the gate now says Reject`
      ])
      const done = yield* Agent.resume(agent, copyOf(paused.checkpoint), Decision.approveAll()).pipe(
        Effect.provide(elsewhere),
        Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("done")]))
      )
      expect([done._tag, executed]).toEqual(["Completed", ["ada 100"]])
    }))

  it.effect("a model reporting counts that are no counts (Infinity, NaN, negative): 0 in the run's usage, and its checkpoint copied as JSON resumes", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      let calls = 0
      const broken = ChatModel.fromGenerate(() =>
        Effect.succeed({
          ...(calls++ === 0
            ? { text: "", toolCalls: [{ id: "t1", name: "transfer", args: { to: "ada", amount: 100 } }], finishReason: "tool-calls" as const }
            : { text: "done", toolCalls: [], finishReason: "stop" as const }),
          usage: { inputTokens: Number.POSITIVE_INFINITY, outputTokens: -3, totalTokens: Number.NaN }
        })
      )
      const paused = yield* pausedRun(agent).pipe(Effect.provideService(ChatModel.ChatModel, broken))
      expect(paused.checkpoint.usage).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 })
      const done = yield* Agent.resume(agent, copyOf(paused.checkpoint), Decision.approveAll()).pipe(Effect.provideService(ChatModel.ChatModel, broken))
      assert(done._tag === "Completed")
      expect(done.usage).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 })
      expect(executed).toEqual(["t1"])
    }))

  it.effect("two answers of 1e308 tokens each: the run's usage saturates at Number.MAX_VALUE, and its checkpoint copied as JSON resumes", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      let calls = 0
      const huge = { inputTokens: 1e308, outputTokens: 1e308, totalTokens: 1e308 }
      const lavish = ChatModel.fromGenerate(() =>
        Effect.succeed({
          ...(calls++ === 0
            ? { text: "", toolCalls: [{ id: "l1", name: "lookup", args: { account: "main" } }], finishReason: "tool-calls" as const }
            : calls === 2
            ? { text: "", toolCalls: [{ id: "t1", name: "transfer", args: { to: "ada", amount: 100 } }], finishReason: "tool-calls" as const }
            : { text: "done", toolCalls: [], finishReason: "stop" as const }),
          usage: huge
        })
      )
      const paused = yield* pausedRun(agent).pipe(Effect.provideService(ChatModel.ChatModel, lavish))
      const most = { inputTokens: Number.MAX_VALUE, outputTokens: Number.MAX_VALUE, totalTokens: Number.MAX_VALUE }
      expect(paused.checkpoint.usage).toEqual(most)
      const done = yield* Agent.resume(agent, copyOf(paused.checkpoint), Decision.approveAll()).pipe(Effect.provideService(ChatModel.ChatModel, lavish))
      assert(done._tag === "Completed")
      expect(done.usage).toEqual(most)
      expect(executed).toEqual(["l1", "t1"])
    }))

  it.effect("a signed checkpoint of an ephemeral run, resumed three times in turn: the transfer runs once", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank({ signed: true })
      const paused = yield* pausedRun(agent)
      const first = yield* Agent.resume(agent, copyOf(paused.checkpoint), Decision.approveAll())
      expect(first._tag).toBe("Completed")
      for (let i = 0; i < 2; i++) {
        const again = yield* Effect.flip(Agent.resume(agent, copyOf(paused.checkpoint), Decision.approveAll()))
        expect(again._tag === "RunAlreadyResumed" && again.status).toBe("completed")
      }
      expect(executed).toEqual(["t1", "l1"])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))

  it.effect("a checkpoint resumed in two 'processes' sharing a store (each its own memory): once", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank({ signed: true })
      const store = RunStore.makeInMemory()
      const processA = Layer.mergeAll(Layer.succeed(RunStore.RunStore, store), ChatMemory.layerMemory)
      const processB = Layer.mergeAll(Layer.succeed(RunStore.RunStore, store), ChatMemory.layerMemory)
      const paused = yield* pausedRun(agent, "c-1").pipe(Effect.provide(processA))
      const results = yield* Effect.all([
        Effect.result(Agent.resume(agent, copyOf(paused.checkpoint), Decision.approveAll()).pipe(Effect.provide(processA))),
        Effect.result(Agent.resume(agent, copyOf(paused.checkpoint), Decision.approveAll()).pipe(Effect.provide(processB)))
      ], { concurrency: "unbounded" })
      expect(results.map((r) => r._tag === "Success" ? r.success._tag : r.failure._tag).sort()).toEqual(["Completed", "RunAlreadyResumed"])
      expect(executed.filter((id) => id === "t1")).toHaveLength(1)
    }).pipe(Effect.provide(model)))

  it.effect("a copy from another process is imported once: a second 'process' with its own store refuses a replay there", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank({ signed: true })
      const paused = yield* pausedRun(agent).pipe(Effect.provide(RunStore.layerMemory()))
      const elsewhere = yield* Effect.gen(function*() {
        const done = yield* Agent.resume(agent, copyOf(paused.checkpoint), Decision.approveAll())
        const replay = yield* Effect.flip(Agent.resume(agent, copyOf(paused.checkpoint), Decision.approveAll()))
        return { done: done._tag, replay: replay._tag }
      }).pipe(Effect.provide(RunStore.layerMemory()))
      expect(elsewhere).toEqual({ done: "Completed", replay: "RunAlreadyResumed" })
      expect(executed).toEqual(["t1", "l1"])
    }).pipe(Effect.provide(model)))

  it.effect("removing the conversation from memory does not make a consumed checkpoint resumable", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const paused = yield* pausedRun(agent, "c-2")
      yield* Agent.resume(agent, paused.checkpoint, Decision.approveAll())
      yield* Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.remove("c-2"))
      const again = yield* Effect.flip(Agent.resume(agent, paused.checkpoint, Decision.approveAll()))
      expect(again._tag).toBe("RunAlreadyResumed")
      expect(executed).toEqual(["t1", "l1"])
    }).pipe(Effect.provide(model), Effect.provide(ChatMemory.layerMemory), Effect.provide(RunStore.layerMemory())))

  it.effect("a copy of an earlier pause of a run that moved on is refused (it would approve calls nobody saw)", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const twice = ScriptedChatModel.layer((request) => {
        const toolResults = request.messages.filter((m) => m._tag === "ToolResult").length
        return toolResults === 0
          ? ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "ada", amount: 100 } })
          : toolResults === 1
          ? ScriptedChatModel.toolCalls({ id: "t2", name: "transfer", args: { to: "mallory", amount: 9000 } })
          : ScriptedChatModel.text("done")
      })
      const result = yield* Effect.gen(function*() {
        const first = yield* pausedRun(agent)
        const second = yield* Agent.resume(agent, first.checkpoint, Decision.approveAll())
        assert(second._tag === "Paused")
        const stale = yield* Effect.flip(Agent.resume(agent, first.checkpoint, Decision.approveAll()))
        return { stale: stale._tag === "RunAlreadyResumed" ? stale.message : stale._tag, pending: second.pending.map((p) => p.call.id) }
      }).pipe(Effect.provide(twice))
      expect(result.pending).toEqual(["t2"])
      expect(result.stale).toContain("was resumed already and paused again")
      expect(executed).toEqual(["t1"])
    }).pipe(Effect.provide(RunStore.layerMemory())))
  it.effect("a copy of a run that finished as it paused: remembered until the retention has passed, then expired — never run again", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank({ signed: true })
      const paused = yield* pausedRun(agent)
      const replay = Agent.resume(agent, copyOf(paused.checkpoint), Decision.approveAll()).pipe(
        Effect.match({
          onFailure: (e) => e._tag === "InvalidCheckpoint" ? `${e.reason}: ${e.detail}` : e._tag === "RunAlreadyResumed" ? e.status : e._tag,
          onSuccess: (exit) => exit._tag
        })
      )
      // resumed and completed in the millisecond it paused (the TestClock stands still)
      expect(yield* replay).toBe("Completed")
      yield* TestClock.adjust(3_599_999)
      expect(yield* replay).toBe("completed")
      yield* TestClock.adjust(1)
      expect(yield* replay).toBe(
        "expired: paused 1h ago, no shorter than the run store remembers finished runs (1h): it can no longer be told apart from a replay"
      )
      expect(executed).toEqual(["t1", "l1"])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory({ retention: "1 hour" }))))
})

describe("nothing runs that no verdict allowed", () => {
  /** An unsigned copy with a call of the sensitive tool slipped into its batch beside the pending one. */
  const forged = (checkpoint: unknown, verdict?: "proceed") => {
    const copy = copyOf(checkpoint)
    copy.batch.push({ call: { id: "evil", name: "transfer", args: { to: "mallory", amount: 9000 } }, ...(verdict === undefined ? {} : { verdict }) })
    return copy
  }

  it.effect("in the process that paused, the record is the authority: a forged batch in a copy is ignored", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const paused = yield* pausedRun(agent)
      const done = yield* Agent.resume(agent, forged(paused.checkpoint, "proceed"), Decision.byCall({ t1: Decision.reject({ message: "no" }) }))
      expect(done._tag === "Completed" && done.toolCalls.map((o) => `${o.callId}:${o._tag}`)).toEqual(["t1:Rejected", "l1:Succeeded"])
      expect(executed).toEqual(["l1"])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))

  it.effect("a forged copy imported elsewhere: a call with no verdict, or a 'proceed' the gate denies, is refused; nothing runs", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const paused = yield* pausedRun(agent).pipe(Effect.provide(RunStore.layerMemory()))
      const refusal = (copy: unknown) =>
        Agent.resume(agent, copy, Decision.byCall({ t1: Decision.reject() })).pipe(
          Effect.flip,
          Effect.map((e) => e._tag === "InvalidCheckpoint" ? `${e.reason}: ${e.detail}` : e._tag),
          Effect.provide(RunStore.layerMemory())
        )
      expect(yield* refusal(forged(paused.checkpoint))).toBe(`verdicts: call "evil" (transfer) has no verdict that lets it run`)
      expect(yield* refusal(forged(paused.checkpoint, "proceed"))).toBe(
        `verdicts: call "evil" (transfer) may run by the checkpoint, but the gate now says Pause`
      )
      expect(executed).toEqual([])
    }).pipe(Effect.provide(model)))

  it.effect("a forged copy with a second call under a pending call's id is malformed: approving that id approves one call", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const paused = yield* pausedRun(agent).pipe(Effect.provide(RunStore.layerMemory()))
      const copy = copyOf(paused.checkpoint)
      copy.batch.push({ call: { id: "t1", name: "transfer", args: { to: "mallory", amount: 9000 } }, verdict: "pause" })
      const refused = yield* Agent.resume(agent, copy, Decision.approveAll()).pipe(
        Effect.match({
          onFailure: (e) => e._tag === "InvalidCheckpoint" ? `${e.reason}: ${e.detail}` : e._tag,
          onSuccess: (exit) => exit._tag
        }),
        Effect.provide(RunStore.layerMemory())
      )
      expect(refused).toBe(`malformed: call id "t1" appears twice in the batch`)
      expect(executed).toEqual([])
    }).pipe(Effect.provide(model)))

  /** An agent whose disk tool fails with an environment error until `fixed`, beside the bank's transfer. */
  const ops = (executions: Executions, environment: { readonly fixed: boolean }) =>
    Agent.make({
      name: "ops",
      tools: [diskTool(executions, environment), bank().agent.toolkit.entries.get("transfer")!.tool],
      onEnvironmentError: "pause"
    })

  /** Its run paused for the environment (the disk failed), in a store of its own. */
  const pausedOnDisk = (agent: Agent.Any) =>
    Agent.run(agent, { input: "write" }).pipe(
      Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.toolCalls({ id: "k1", name: "write_disk", args: { data: "a" } })])),
      Effect.provide(RunStore.layerMemory()),
      Effect.flatMap((exit) => exit._tag === "Paused" && exit.kind === "environment" ? Effect.succeed(exit) : Effect.die(new Error("expected an environment pause")))
    )

  it.effect("an environment pause resumed with report() elsewhere does not run a call slipped into its batch", () =>
    Effect.gen(function*() {
      const executions = new Executions()
      const agent = ops(executions, { fixed: false })
      const paused = yield* pausedOnDisk(agent)
      const refusal = yield* Agent.resume(agent, forged(paused.checkpoint, "proceed"), Decision.report()).pipe(
        Effect.flip,
        Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("done")])),
        Effect.provide(RunStore.layerMemory())
      )
      expect(refusal._tag === "InvalidCheckpoint" && refusal.detail).toBe(
        `call "evil" (transfer) may run by the checkpoint, but the gate now says Pause`
      )
      expect(executions.counts).toEqual({ write_disk: 1 })
    }))

  it.effect("a retry of an unsigned environment copy elsewhere approves nothing: a call slipped into its failed ones is asked of the gate", () =>
    Effect.gen(function*() {
      const executions = new Executions()
      const agent = ops(executions, { fixed: true })
      const paused = yield* pausedOnDisk(ops(executions, { fixed: false }))
      // the failed call itself turned into a transfer, or a transfer added to the failed calls
      const edited = copyOf(paused.checkpoint)
      edited.batch[0].call = { id: "k1", name: "transfer", args: { to: "mallory", amount: 9000 } }
      const added = forged(paused.checkpoint)
      added.pending.push("evil")
      const refusal = (copy: unknown) =>
        Agent.resume(agent, copy, Decision.retry()).pipe(
          Effect.flip,
          Effect.map((e) => e._tag === "InvalidCheckpoint" ? `${e.reason}: ${e.detail}` : e._tag),
          Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("done")])),
          Effect.provide(RunStore.layerMemory())
        )
      expect(yield* refusal(edited)).toBe(`verdicts: call "k1" (transfer) may run by the checkpoint, but the gate now says Pause`)
      expect(yield* refusal(added)).toBe(`verdicts: call "evil" (transfer) may run by the checkpoint, but the gate now says Pause`)
      expect(executions.counts).toEqual({ write_disk: 1 })
      // the copy as it was retries: its failed call is asked of the gate again, and proceeds
      const done = yield* Agent.resume(agent, copyOf(paused.checkpoint), Decision.retry()).pipe(
        Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("done")])),
        Effect.provide(RunStore.layerMemory())
      )
      expect(done._tag === "Completed" && done.toolCalls.map((o) => `${o.callId}:${o._tag}`)).toEqual(["k1:Succeeded"])
      expect(executions.counts).toEqual({ write_disk: 2 })
    }))
})

describe("one conversation, one record", () => {
  it.effect("a copy naming another conversation is refused; the other conversation keeps its history", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const memory = yield* ChatMemory.ChatMemory
      const victim: Array<Message.Message> = [
        { _tag: "User", text: "my secret plan" },
        { _tag: "Assistant", text: "noted", toolCalls: [] },
        { _tag: "User", text: "and more" }
      ]
      yield* memory.replace("victim", victim)
      const paused = yield* pausedRun(agent, "mine")
      const retargeted = { ...copyOf(paused.checkpoint), conversationId: "victim" }
      const here = yield* Effect.flip(Agent.resume(agent, retargeted, Decision.approveAll()))
      expect(here._tag === "InvalidCheckpoint" && here.reason).toBe("conversation")
      const elsewhere = yield* Effect.flip(Agent.resume(agent, retargeted, Decision.approveAll()).pipe(Effect.provide(RunStore.layerMemory())))
      expect(elsewhere._tag).toBe("ConversationDiverged")
      expect(elsewhere.message).toBe(
        `Conversation "victim" in memory differs from the checkpoint at message #1 (memory holds 3 messages, the checkpoint 2): the checkpoint is of another conversation, or this one was rewritten since`
      )
      expect(yield* memory.get("victim")).toEqual(victim)
      expect(executed).toEqual([])
    }).pipe(Effect.provide(model), Effect.provide(ChatMemory.layerMemory), Effect.provide(RunStore.layerMemory())))

  it.effect("ConversationDiverged says where memory and the checkpoint part: another conversation of as many messages, one that went on, one cut short", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const memory = yield* ChatMemory.ChatMemory
      const paused = yield* pausedRun(agent, "mine")
      const checkpointMessages = yield* memory.get("mine")
      const refusal = (conversation: ReadonlyArray<Message.Message>) =>
        Effect.gen(function*() {
          yield* memory.replace("other", conversation)
          const copy = { ...copyOf(paused.checkpoint), conversationId: "other" }
          const error = yield* Effect.flip(Agent.resume(agent, copy, Decision.approveAll()).pipe(Effect.provide(RunStore.layerMemory())))
          return `${error._tag}: ${error.message}`
        })
      expect(yield* refusal([checkpointMessages[0]!, { _tag: "Assistant", text: "hello", toolCalls: [] }])).toBe(
        `ConversationDiverged: Conversation "other" in memory differs from the checkpoint at message #2 (memory holds 2 messages, the checkpoint 2): the checkpoint is of another conversation, or this one was rewritten since`
      )
      expect(yield* refusal([...checkpointMessages, { _tag: "User", text: "and then" }])).toBe(
        `ConversationDiverged: Conversation "other" in memory went on past the checkpoint (memory holds 3 messages, the checkpoint 2, the first 2 alike): it was resumed already or another turn ran since`
      )
      expect(yield* refusal(checkpointMessages.slice(0, 1))).toBe(
        `ConversationDiverged: Conversation "other" in memory is shorter than the checkpoint (memory holds 1 message, the checkpoint 2, the first 1 alike): it was cut since the checkpoint was taken`
      )
      expect(executed).toEqual([])
    }).pipe(Effect.provide(model), Effect.provide(ChatMemory.layerMemory), Effect.provide(RunStore.layerMemory())))

  it.effect("a resume on a busy conversation: refused at once by default, waits with the agent's onConversationBusy \"wait\"", () =>
    Effect.gen(function*() {
      const store = yield* RunStore.RunStore
      const failing = bank()
      const waiting = bank({ onConversationBusy: "wait" })
      const pausedFailing = yield* pausedRun(failing.agent, "c-held")
      const pausedWaiting = yield* pausedRun(waiting.agent, "c-held-2")
      // something else holds both conversations (another turn, or another process's lease)
      const holder = yield* Scope.make()
      for (const conversation of ["c-held", "c-held-2"]) {
        expect(yield* Scope.provide(store.lease(`conversation:${conversation}`, { owner: "another-turn", wait: false }), holder)).toBe(true)
      }
      const busy = yield* Effect.flip(Agent.resume(failing.agent, pausedFailing.runId, Decision.approveAll()))
      expect(busy._tag === "ConversationBusy" && busy.conversationId).toBe("c-held")
      const queued = yield* Effect.forkChild(Agent.resume(waiting.agent, pausedWaiting.runId, Decision.approveAll()))
      yield* TestClock.adjust("1 minute")
      expect(queued.pollUnsafe()).toBeUndefined()
      expect(waiting.executed).toEqual([])
      yield* Scope.close(holder, Exit.void)
      const done = yield* Fiber.join(queued)
      expect(done._tag).toBe("Completed")
      expect(waiting.executed).toEqual(["t1", "l1"])
      // the refused one consumed nothing: still paused, resumable
      expect((yield* Agent.resume(failing.agent, pausedFailing.runId, Decision.approveAll()))._tag).toBe("Completed")
    }).pipe(Effect.provide(model), Effect.provide(ChatMemory.layerMemory), Effect.provide(RunStore.layerMemory())))

  it.effect("two turns on one conversation at once: the second fails with ConversationBusy, or waits its turn", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const slow = Tool.make("slow", {
        description: "takes a minute",
        parameters: Schema.Struct({}),
        success: Schema.String,
        handler: () => Effect.andThen(Deferred.succeed(started, undefined), Effect.as(Effect.sleep("1 minute"), "slow done"))
      })
      const agent = Agent.make({ tools: [slow] })
      const script = ScriptedChatModel.layer((request) =>
        request.messages.at(-1)?._tag === "User" ? ScriptedChatModel.toolCalls({ name: "slow", args: {} }) : ScriptedChatModel.text("ok")
      )
      const result = yield* Effect.gen(function*() {
        const first = yield* Effect.forkChild(Agent.run(agent, { input: "one", conversationId: "c" }))
        yield* Deferred.await(started)
        const busy = yield* Effect.flip(Agent.run(agent, { input: "two", conversationId: "c" }))
        const queued = yield* Effect.forkChild(Agent.run(agent, { input: "three", conversationId: "c", onConversationBusy: "wait" }))
        yield* TestClock.adjust("1 minute")
        yield* Fiber.join(first)
        yield* TestClock.adjust("1 minute")
        yield* Fiber.join(queued)
        const messages = yield* Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("c"))
        return { busy: busy.message, messages: messages.map((m) => m._tag === "User" ? `user: ${m.text}` : m._tag) }
      }).pipe(Effect.provide(script))
      expect(result.busy).toBe(
        `Conversation "c" is busy: another turn or resume is running on it (start the run with onConversationBusy: "wait" to queue)`
      )
      expect(result.messages).toEqual([
        "user: one",
        "Assistant",
        "ToolResult",
        "Assistant",
        "user: three",
        "Assistant",
        "ToolResult",
        "Assistant"
      ])
    }).pipe(Effect.provide(ChatMemory.layerMemory), Effect.provide(RunStore.layerMemory())))
})

describe("the run store shows what is paused", () => {
  it.effect("RunStore.list and get: the paused run with its checkpoint; resumed by id, it is gone from the list", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const store = yield* RunStore.RunStore
      const paused = yield* pausedRun(agent, "c-list")
      const listed = yield* store.list({ status: "paused" })
      expect(listed.map((r) => [r.runId, r.agent, r.conversationId, r.version])).toEqual([[paused.runId, "bank", "c-list", 1]])
      expect(listed[0]!.checkpoint).toEqual(paused.checkpoint)
      const done = yield* Agent.resume(agent, paused.runId, Decision.approveAll())
      expect(done._tag).toBe("Completed")
      expect(yield* store.list({ status: "paused" })).toEqual([])
      const unknown = yield* Effect.flip(Agent.resume(agent, "no-such-run", Decision.approveAll()))
      expect(unknown._tag === "RunNotFound" && unknown.message).toBe("No record of run no-such-run in the run store")
    }).pipe(Effect.provide(model), Effect.provide(ChatMemory.layerMemory), Effect.provide(RunStore.layerMemory())))

  it.effect("the winner's decidedBy is named to every other claimant", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const paused = yield* pausedRun(agent, "c-who")
      yield* Agent.resume(agent, paused.runId, Decision.approveAll(), { decidedBy: "ada@example.com" })
      const late = yield* Effect.flip(Agent.resume(agent, paused.runId, Decision.rejectAll(), { decidedBy: "bob@example.com" }))
      expect(late.message).toBe(`Run ${paused.runId} was already decided by ada@example.com: it is completed now`)
    }).pipe(Effect.provide(model), Effect.provide(ChatMemory.layerMemory), Effect.provide(RunStore.layerMemory({}))))

  it.effect("a new turn on a conversation supersedes its paused run: no longer listed as paused, no longer resumable", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const store = yield* RunStore.RunStore
      const paused = yield* pausedRun(agent, "c-new-turn")
      yield* Agent.run(agent, { input: "never mind, what is my balance?", conversationId: "c-new-turn" }).pipe(
        Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("1000")]))
      )
      expect(yield* store.list({ status: "paused" })).toEqual([])
      const late = yield* Effect.flip(Agent.resume(agent, paused.runId, Decision.approveAll()))
      expect(late._tag === "RunAlreadyResumed" && late.status).toBe("failed")
      expect(executed).toEqual([])
    }).pipe(Effect.provide(model), Effect.provide(ChatMemory.layerMemory), Effect.provide(RunStore.layerMemory())))

  it.effect("a new turn whose input cannot be written (ChatMemory.append fails) leaves the paused run paused: it resumes, its call runs once", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const store = yield* RunStore.RunStore
      const memory = yield* ChatMemory.ChatMemory
      const paused = yield* pausedRun(agent, "c-append")
      const before = yield* memory.get("c-append")
      const failing: ChatMemory.ChatMemory.Service = { ...memory, append: () => Effect.fail(new ChatMemory.MemoryError({ message: "disk full" })) }
      const refused = yield* Effect.flip(Agent.run(agent, { input: "never mind", conversationId: "c-append" }).pipe(
        Effect.provideService(ChatMemory.ChatMemory, failing),
        Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("unused")]))
      ))
      expect([refused._tag, refused.message]).toEqual(["MemoryError", "disk full"])
      expect((yield* store.list({ status: "paused" })).map((r) => r.runId)).toEqual([paused.runId])
      expect(yield* memory.get("c-append")).toEqual(before)
      const done = yield* Agent.resume(agent, paused.runId, Decision.approveAll())
      expect(done._tag).toBe("Completed")
      expect(executed).toEqual(["t1", "l1"])
    }).pipe(Effect.provide(model), Effect.provide(ChatMemory.layerMemory), Effect.provide(RunStore.layerMemory())))

  it.effect("a resume whose conversation cannot be written back (ChatMemory.replace fails) pauses the run again: nothing ran, and it resumes by id", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const store = yield* RunStore.RunStore
      const paused = yield* pausedRun(agent, "c-replace")
      // another process: its memory is empty (so the resume writes the conversation back), and its replace fails
      const working = ChatMemory.makeInMemory()
      const failing: ChatMemory.ChatMemory.Service = {
        ...working,
        replace: () => Effect.fail(new ChatMemory.MemoryError({ message: "disk full" }))
      }
      const refused = yield* Effect.flip(Agent.resume(agent, paused.runId, Decision.approveAll(), { decidedBy: "ada" }).pipe(
        Effect.provideService(ChatMemory.ChatMemory, failing)
      ))
      expect([refused._tag, refused.message]).toEqual(["MemoryError", "disk full"])
      expect(executed).toEqual([])
      const record = yield* store.get(paused.runId)
      expect(Option.map(record, (r) => [r.status, r.version, r.decidedBy])).toEqual(Option.some(["paused", 3, undefined]))
      const copy = yield* Effect.flip(Agent.resume(agent, copyOf(paused.checkpoint), Decision.approveAll()))
      expect(copy._tag === "RunAlreadyResumed" && copy.status).toBe("paused")
      const done = yield* Agent.resume(agent, paused.runId, Decision.approveAll()).pipe(Effect.provideService(ChatMemory.ChatMemory, working))
      expect(done._tag).toBe("Completed")
      expect(executed).toEqual(["t1", "l1"])
      expect((yield* working.get("c-replace")).map((m) => m._tag)).toEqual(["User", "Assistant", "ToolResult", "ToolResult", "Assistant"])
    }).pipe(Effect.provide(model), Effect.provide(ChatMemory.layerMemory), Effect.provide(RunStore.layerMemory())))

  it.effect("a refused resume leaves the run paused and resumable by id", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const paused = yield* pausedRun(agent)
      const refused = yield* Effect.flip(Agent.resume(agent, paused.runId, Decision.byCall({ nope: Decision.approve() })))
      expect(refused._tag).toBe("UnknownDecision")
      expect((yield* Agent.resume(agent, paused.runId, Decision.approveAll()))._tag).toBe("Completed")
      expect(executed).toEqual(["t1", "l1"])
    }).pipe(Effect.provide(model), Effect.provide(RunStore.layerMemory())))
})
