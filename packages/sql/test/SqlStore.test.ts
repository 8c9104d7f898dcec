import { Agent, ChatMemory, ChatModel, Decision, type Message, RunStore, ScriptedChatModel, Tool, ToolCallingManager } from "@agentfx/core"
import * as SqlClient from "effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Context, Deferred, Effect, Fiber, Layer, Option, Redacted, Schema } from "effect"
import { join } from "node:path"
import { SqlStore } from "../src/index.js"
import * as PgStore from "../src/PgStore.js"
import * as SqliteStore from "../src/SqliteStore.js"
import * as CheckpointCodec from "../../core/src/internal/checkpoint.js"
import { dialects, elapse, pgUrl, tempDir } from "./fixtures.js"

/** An agent whose model asks for a lookup and a transfer (which needs approval); each tool counts its executions. */
const bank = () => {
  const executions = { lookup: 0, transfer: 0 }
  const lookup = Tool.make("lookup", {
    description: "Finds an account",
    parameters: Schema.Struct({ iban: Schema.String }),
    success: Schema.String,
    handler: ({ iban }) => Effect.sync(() => `account ${iban} (#${++executions.lookup})`)
  })
  const transfer = Tool.make("transfer", {
    description: "Sends money",
    parameters: Schema.Struct({ amount: Schema.Number }),
    success: Schema.String,
    needsApproval: true,
    handler: ({ amount }) => Effect.sync(() => `sent ${amount} (#${++executions.transfer})`)
  })
  return { agent: Agent.make({ name: "bank", tools: [lookup, transfer] }), executions }
}

const script = ScriptedChatModel.layer((request) =>
  request.messages.at(-1)?._tag === "User"
    ? ScriptedChatModel.toolCalls({ id: "l1", name: "lookup", args: { iban: "NO93" } }, { id: "t1", name: "transfer", args: { amount: 100 } })
    : ScriptedChatModel.text("done")
)

/** What a refused resume says: `InvalidCheckpoint`'s reason, `RunAlreadyResumed`'s status, else its tag. */
const refusal = (e: unknown) => {
  const error = e as { readonly _tag: string; readonly reason?: string; readonly status?: string }
  return error.reason ?? error.status ?? error._tag
}

/** Runs `effect` as a process whose clock is `offset` milliseconds off (ahead when positive, behind when negative). */
const skewed = (offset: number) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.clockWith((clock) =>
    Effect.provideService(effect, Clock.Clock, {
      currentTimeMillisUnsafe: () => clock.currentTimeMillisUnsafe() + offset,
      currentTimeMillis: Effect.map(clock.currentTimeMillis, (now) => now + offset),
      currentTimeNanosUnsafe: () => clock.currentTimeNanosUnsafe() + BigInt(offset) * 1_000_000n,
      currentTimeNanos: Effect.map(clock.currentTimeNanos, (now) => now + BigInt(offset) * 1_000_000n),
      monotonicTimeNanosUnsafe: () => clock.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: clock.monotonicTimeNanos,
      sleep: (duration) => clock.sleep(duration)
    })
  )

/**
 * Two processes on `database`, one whose clock is `skew` off: a run pauses (a copy of its
 * checkpoint is kept), the process `finishedBy` names resumes it to its end, the skewed one
 * starts a run of its own (its store deletes what expired by its clock, when it reads the host's),
 * then the copy is replayed through the skewed process and through the right one: what each said.
 */
const replaysOfAFinishedRun = (database: { readonly client: Layer.Layer<SqlClient.SqlClient, unknown> }, skew: number, finishedBy: "skewed" | "right") =>
  Effect.gen(function*() {
    const store = SqlStore.layer({ retention: "1 hour" }).pipe(Layer.provide(database.client))
    const { agent, executions } = bank()
    const skewedProcess = skewed(skew)
    const paused = yield* inProcess(store, Agent.run(agent, { input: "pay" }))
    if (paused._tag !== "Paused") throw new Error("expected a pause")
    const copy = JSON.parse(JSON.stringify(paused.checkpoint))
    const finish = inProcess(store, Agent.resume(agent, paused.runId, Decision.approveAll()))
    expect((yield* finishedBy === "skewed" ? skewedProcess(finish) : finish)._tag).toBe("Completed")
    expect((yield* skewedProcess(inProcess(store, Agent.run(agent, { input: "pay" }))))._tag).toBe("Paused")
    const replay = inProcess(store, Agent.resume(agent, copy, Decision.approveAll())).pipe(Effect.match({ onFailure: refusal, onSuccess: (exit) => exit._tag }))
    return { replays: [yield* skewedProcess(replay), yield* replay], executions }
  })

/** The copy as if it had paused `millis` earlier, signed again: the store's past moved back by that much ({@link elapse}). */
const pausedEarlier = (agent: Agent.Any, copy: unknown, millis: number) =>
  Effect.flatMap(CheckpointCodec.decode(agent, copy), ({ checkpoint, state }) => {
    const { agent: _agent, format: _format, signature: _signature, state: _state, tools: _tools, version: _version, ...fields } = checkpoint
    return CheckpointCodec.encode(agent, { ...fields, pausedAt: checkpoint.pausedAt - millis }, state)
  })

/** Runs `body` with a store Layer built for it alone (one process's view of the database). */
const inProcess = <A, E, R>(store: Layer.Layer<never, unknown>, body: Effect.Effect<A, E, R>) =>
  body.pipe(Effect.provide(store), Effect.provide(script))

for (const dialect of dialects) {
  describe(`SqlStore on ${dialect.name}`, () => {
    it.effect("a run paused in one process is resumed by run id in another: the approved call runs once, a second resume is refused", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const store = SqlStore.layer().pipe(Layer.provide(database.client))
        const { agent, executions } = bank()
        const paused = yield* inProcess(store, Agent.run(agent, { input: "pay", conversationId: "c-1" }))
        if (paused._tag !== "Paused") throw new Error("expected a pause")
        expect(executions).toEqual({ lookup: 0, transfer: 0 })
        const listed = yield* inProcess(store, Effect.flatMap(RunStore.RunStore, (s) => s.list({ status: "paused" })))
        expect(listed.map((r) => [r.runId, r.agent, r.conversationId, r.version])).toEqual([[paused.runId, "bank", "c-1", 2]])
        const resumed = yield* inProcess(store, Agent.resume(agent, paused.runId, Decision.approveAll(), { decidedBy: "ada" }))
        expect(resumed._tag === "Completed" && resumed.text).toBe("done")
        expect(executions).toEqual({ lookup: 1, transfer: 1 })
        const again = yield* inProcess(store, Effect.flip(Agent.resume(agent, paused.runId, Decision.approveAll())))
        expect(again.message).toBe(`Run ${paused.runId} was already decided by ada: it is completed now`)
        const copy = yield* inProcess(store, Effect.flip(Agent.resume(agent, JSON.parse(JSON.stringify(paused.checkpoint)), Decision.approveAll())))
        expect(copy._tag).toBe("RunAlreadyResumed")
        expect(executions).toEqual({ lookup: 1, transfer: 1 })
        const history = yield* inProcess(store, Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("c-1")))
        expect(history.map((m) => m._tag)).toEqual(["User", "Assistant", "ToolResult", "ToolResult", "Assistant"])
      }).pipe(Effect.scoped))

    it.effect("a run without a conversation id pauses with its messages in its record only, and resumes by id from another process", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const store = SqlStore.layer().pipe(Layer.provide(database.client))
        const { agent, executions } = bank()
        const paused = yield* inProcess(store, Agent.run(agent, { input: "pay" }))
        if (paused._tag !== "Paused") throw new Error("expected a pause")
        const record = yield* inProcess(store, Effect.flatMap(RunStore.RunStore, (s) => s.get(paused.runId)))
        expect(Option.map(record, (r) => [r.ephemeral, r.status])).toEqual(Option.some([true, "paused"]))
        const resumed = yield* inProcess(store, Agent.resume(agent, paused.runId, Decision.approveAll()))
        expect(resumed._tag === "Completed" && resumed.messages.map((m) => m._tag)).toEqual(["User", "Assistant", "ToolResult", "ToolResult", "Assistant"])
        expect(executions).toEqual({ lookup: 1, transfer: 1 })
        const stored = yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT count(*) AS n FROM agentfx_messages`).pipe(Effect.provide(database.client))
        expect(Number(stored[0]!.n)).toBe(0)
      }).pipe(Effect.scoped))

    it.effect("an interrupted run stays running; Agent.recover in another process keeps the finished call's result and cancels the one cut off", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const store = SqlStore.layer().pipe(Layer.provide(database.client))
        const counts = { fast: 0, stuck: 0 }
        const started = yield* Deferred.make<void>()
        const fast = Tool.make("fast", {
          description: "Ends at once",
          parameters: Schema.Struct({}),
          success: Schema.String,
          handler: () => Effect.sync(() => `fast #${++counts.fast}`)
        })
        const stuck = Tool.make("stuck", {
          description: "Never ends",
          parameters: Schema.Struct({}),
          success: Schema.String,
          handler: () => Effect.andThen(Effect.sync(() => counts.stuck++), Effect.andThen(Deferred.succeed(started, undefined), Effect.never))
        })
        const agent = Agent.make({ name: "worker", tools: [fast, stuck] })
        const model = ScriptedChatModel.layer((request) =>
          request.messages.at(-1)?._tag === "User"
            ? ScriptedChatModel.toolCalls({ id: "f", name: "fast", args: {} }, { id: "s", name: "stuck", args: {} })
            : ScriptedChatModel.text(`saw ${request.messages.filter((m) => m._tag === "ToolResult").map((m) => JSON.stringify(m.content)).join(", ")}`)
        )
        const run = yield* Effect.forkChild(Agent.run(agent, { input: "go", conversationId: "w-1" }).pipe(Effect.provide(store), Effect.provide(model)))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(run)
        const running = yield* Effect.flatMap(RunStore.RunStore, (s) => s.list({ status: "running" })).pipe(Effect.provide(store))
        expect(running.map((r) => r.agent)).toEqual(["worker"])
        const recovered = yield* Agent.recover(agent, running[0]!.runId).pipe(Effect.provide(store), Effect.provide(model))
        expect(recovered._tag === "Completed" && recovered.text).toBe(`saw "fast #1", "cancelled: the call was interrupted before it returned a result"`)
        expect(counts).toEqual({ fast: 1, stuck: 1 })
      }).pipe(Effect.scoped))

    it.effect("a batch of one call cut off in its handler: its start, written in the batch's own step, is what Agent.recover reads — the call is cancelled, not run again (decision 174)", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const store = SqlStore.layer().pipe(Layer.provide(database.client))
        let runs = 0
        const started = yield* Deferred.make<void>()
        const stuck = Tool.make("stuck", {
          description: "Never ends",
          parameters: Schema.Struct({}),
          success: Schema.String,
          handler: () => Effect.andThen(Effect.sync(() => runs++), Effect.andThen(Deferred.succeed(started, undefined), Effect.never))
        })
        const agent = Agent.make({ name: "alone", tools: [stuck] })
        const model = ScriptedChatModel.layer((request) =>
          request.messages.at(-1)?._tag === "User"
            ? ScriptedChatModel.toolCalls({ id: "s", name: "stuck", args: {} })
            : ScriptedChatModel.text(`saw ${request.messages.filter((m) => m._tag === "ToolResult").map((m) => JSON.stringify(m.content)).join(", ")}`)
        )
        const run = yield* Effect.forkChild(Agent.run(agent, { input: "go" }).pipe(Effect.provide(store), Effect.provide(model)))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(run)
        const [running] = yield* Effect.flatMap(RunStore.RunStore, (s) => s.list({ status: "running", agent: "alone" })).pipe(Effect.provide(store))
        const [batchAt, startedCalls] = yield* Effect.flatMap(RunStore.RunStore, (s) => Effect.all([Effect.succeed(running!.version), s.started(running!.runId)])).pipe(Effect.provide(store))
        expect([batchAt, startedCalls]).toEqual([2, ["s"]])
        const recovered = yield* Agent.recover(agent, running!.runId).pipe(Effect.provide(store), Effect.provide(model))
        expect(recovered._tag === "Completed" && recovered.text).toBe(`saw "cancelled: the call was interrupted before it returned a result"`)
        expect(runs).toBe(1)
      }).pipe(Effect.scoped))

    it.effect("a run interrupted in its first model call is recovered with the run's own settings and tool choice", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const store = SqlStore.layer().pipe(Layer.provide(database.client))
        const { agent } = bank()
        const asked = yield* Deferred.make<void>()
        const requests: Array<ChatModel.ChatRequest> = []
        const model = ScriptedChatModel.layer((request) => {
          requests.push(request)
          return requests.length === 1 ? Effect.andThen(Deferred.succeed(asked, undefined), Effect.never) : ScriptedChatModel.text("done")
        })
        const run = yield* Effect.forkChild(
          Agent.run(agent, { input: "go", conversationId: "r-1", settings: { temperature: 0 }, toolChoice: { tool: "lookup" } }).pipe(
            Effect.provide(store),
            Effect.provide(model)
          )
        )
        yield* Deferred.await(asked)
        yield* Fiber.interrupt(run)
        const running = yield* Effect.flatMap(RunStore.RunStore, (s) => s.list({ status: "running" })).pipe(Effect.provide(store))
        const recovered = yield* Agent.recover(agent, running[0]!.runId).pipe(Effect.provide(store), Effect.provide(model))
        expect(recovered._tag === "Completed" && recovered.text).toBe("done")
        expect(requests.map((r) => [r.toolChoice, r.settings])).toEqual([[{ tool: "lookup" }, { temperature: 0 }], [{ tool: "lookup" }, { temperature: 0 }]])
      }).pipe(Effect.scoped))

    it.effect("the next turn on an interrupted run's conversation settles its batch as recovery does: the recorded result kept, the cut-off call cancelled, the unstarted one run; the run failed", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const store = SqlStore.layer().pipe(Layer.provide(database.client))
        const counts = { fast: 0, stuck: 0, later: 0 }
        const started = yield* Deferred.make<void>()
        const counting = (name: "fast" | "later") =>
          Tool.make(name, { description: name, parameters: Schema.Struct({}), success: Schema.String, handler: () => Effect.sync(() => `${name} #${++counts[name]}`) })
        const stuck = Tool.make("stuck", {
          description: "Never ends",
          parameters: Schema.Struct({}),
          success: Schema.String,
          handler: () => Effect.andThen(Effect.sync(() => counts.stuck++), Effect.andThen(Deferred.succeed(started, undefined), Effect.never))
        })
        const agent = Agent.make({ name: "worker", tools: [counting("fast"), stuck, counting("later")] })
        const model = ScriptedChatModel.layer((request) => {
          const last = request.messages.at(-1)
          return last?._tag === "User" && last.text === "go"
            ? ScriptedChatModel.toolCalls({ id: "f", name: "fast", args: {} }, { id: "s", name: "stuck", args: {} }, { id: "l", name: "later", args: {} })
            : ScriptedChatModel.text(`saw ${request.messages.filter((m) => m._tag === "ToolResult").map((m) => JSON.stringify(m.content)).join(", ")}`)
        })
        // calls in turn: `fast` ended, `stuck` is running, `later` has not started
        const provided = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          effect.pipe(Effect.provide(store), Effect.provide(model), Effect.provide(ToolCallingManager.sequential()))
        const first = yield* Effect.forkChild(provided(Agent.run(agent, { input: "go", conversationId: "w-2" })))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(first)
        const [crashed] = yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.list({ status: "running" })))
        const next = yield* provided(Agent.run(agent, { input: "and now?", conversationId: "w-2" }))
        expect(next._tag === "Completed" && next.text).toBe(`saw "fast #1", "cancelled: the call was interrupted before it returned a result", "later #1"`)
        expect(counts).toEqual({ fast: 1, stuck: 1, later: 1 })
        const record = yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.get(crashed!.runId)))
        expect(Option.map(record, (r) => r.status)).toEqual(Option.some("failed"))
        const history = yield* provided(Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("w-2")))
        expect(history.map((m) => m._tag === "ToolResult" ? `${m.toolName}: ${JSON.stringify(m.content)}` : m._tag)).toEqual([
          "User",
          "Assistant",
          `fast: "fast #1"`,
          `stuck: "cancelled: the call was interrupted before it returned a result"`,
          `later: "later #1"`,
          "User",
          "Assistant"
        ])
      }).pipe(Effect.scoped))

    for (const taker of ["next turn", "recover"] as const) {
      it.effect(`a run interrupted in the model call after its batch: the results it held for its next record write are in the record; the ${taker} takes them from there, each call having run once (decision 161)`, () =>
        Effect.gen(function*() {
          const database = yield* dialect.database
          const store = SqlStore.layer().pipe(Layer.provide(database.client))
          let runs = 0
          const fast = Tool.make("fast", { description: "fast", parameters: Schema.Struct({}), success: Schema.String, handler: () => Effect.sync(() => `fast #${++runs}`) })
          const agent = Agent.make({ name: "worker", tools: [fast] })
          const asked = yield* Deferred.make<void>()
          let hung = false
          const model = ScriptedChatModel.layer((request) => {
            const last = request.messages.at(-1)
            if (last?._tag === "User" && last.text === "go") return ScriptedChatModel.toolCalls({ id: "f", name: "fast", args: {} })
            // the model call after the batch: hangs once, until the run is interrupted
            if (!hung) {
              hung = true
              return Effect.andThen(Deferred.succeed(asked, undefined), Effect.never)
            }
            return ScriptedChatModel.text(`saw ${request.messages.filter((m) => m._tag === "ToolResult").map((m) => JSON.stringify(m.content)).join(", ")}`)
          })
          const provided = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(Effect.provide(store), Effect.provide(model))
          const first = yield* Effect.forkChild(provided(Agent.run(agent, { input: "go", conversationId: "held" })))
          yield* Deferred.await(asked)
          yield* Fiber.interrupt(first)
          const [interrupted] = yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.list({ status: "running" })))
          // the memory follows the last record write (the batch): the result is the record's, not yet the memory's
          const tags = (messages: ReadonlyArray<Message.Message>) =>
            messages.map((m) => m._tag === "ToolResult" ? `${m.toolName}: ${JSON.stringify(m.content)}` : m._tag)
          expect(tags(yield* provided(Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("held"))))).toEqual(["User", "Assistant"])
          expect((yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.outcomes(interrupted!.runId)))).map((o) => o.callId)).toEqual(["f"])
          const exit = yield* provided(taker === "recover" ? Agent.recover(agent, interrupted!.runId) : Agent.run(agent, { input: "and now?", conversationId: "held" }))
          expect(exit._tag === "Completed" && exit.text).toBe(`saw "fast #1"`)
          expect(runs).toBe(1)
          expect(tags(yield* provided(Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("held"))))).toEqual(
            taker === "recover" ? ["User", "Assistant", `fast: "fast #1"`, "Assistant"] : ["User", "Assistant", `fast: "fast #1"`, "User", "Assistant"]
          )
          const record = yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.get(interrupted!.runId)))
          expect(Option.map(record, (r) => r.status)).toEqual(Option.some(taker === "recover" ? "completed" : "failed"))
        }).pipe(Effect.scoped))
    }

    it.effect("a run that fails after its batch (the model refuses): its end, failed, writes the results it held, as the memory had them before (decision 161)", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const store = SqlStore.layer().pipe(Layer.provide(database.client))
        const fast = Tool.make("fast", { description: "fast", parameters: Schema.Struct({}), success: Schema.String, handler: () => Effect.succeed("fast #1") })
        const agent = Agent.make({ name: "worker", tools: [fast] })
        const model = ScriptedChatModel.layer((request) =>
          request.messages.at(-1)?._tag === "User"
            ? ScriptedChatModel.toolCalls({ id: "f", name: "fast", args: {} })
            : Effect.fail(new ChatModel.ModelError({ reason: "invalid-request", message: "HTTP 400", status: 400 })))
        const provided = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(Effect.provide(store), Effect.provide(model))
        const failed = yield* Effect.flip(provided(Agent.run(agent, { input: "go", conversationId: "fails" })))
        expect((failed as { readonly _tag: string })._tag).toBe("ModelError")
        const history = yield* provided(Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("fails")))
        expect(history.map((m) => m._tag === "ToolResult" ? `${m.toolName}: ${JSON.stringify(m.content)}` : m._tag)).toEqual(["User", "Assistant", `fast: "fast #1"`])
        const records = yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.list({ conversationId: "fails" })))
        expect(records.map((r) => r.status)).toEqual(["failed"])
      }).pipe(Effect.scoped))

    it.effect("the next turn supersedes a run interrupted in a model call: marked failed, so a late recover cannot write its older conversation back", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const store = SqlStore.layer().pipe(Layer.provide(database.client))
        const { agent } = bank()
        const asked = yield* Deferred.make<void>()
        let calls = 0
        const model = ScriptedChatModel.layer((request) =>
          ++calls === 1
            ? Effect.andThen(Deferred.succeed(asked, undefined), Effect.never)
            : ScriptedChatModel.text(`answered ${request.messages.filter((m) => m._tag === "User").length} questions`)
        )
        const provided = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(Effect.provide(store), Effect.provide(model))
        const first = yield* Effect.forkChild(provided(Agent.run(agent, { input: "first", conversationId: "m-1" })))
        yield* Deferred.await(asked)
        yield* Fiber.interrupt(first)
        const [crashed] = yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.list({ status: "running" })))
        const next = yield* provided(Agent.run(agent, { input: "second", conversationId: "m-1" }))
        expect(next._tag === "Completed" && next.text).toBe("answered 2 questions")
        const record = yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.get(crashed!.runId)))
        expect(Option.map(record, (r) => r.status)).toEqual(Option.some("failed"))
        const late = (yield* Effect.flip(provided(Agent.recover(agent, crashed!.runId)))) as Error & { readonly _tag: string }
        expect(late._tag).toBe("RunAlreadyResumed")
        const history = yield* provided(Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("m-1")))
        expect(history.map((m) => m._tag === "User" ? `User: ${m.text}` : m._tag)).toEqual(["User: first", "User: second", "Assistant"])
      }).pipe(Effect.scoped))

    it.effect("a signed copy of a run that finished as it paused is refused until the retention has passed, then expired: the transfer runs once", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const store = SqlStore.layer({ retention: "1 hour" }).pipe(Layer.provide(database.client))
        const sql = Context.get(yield* Layer.build(database.client), SqlClient.SqlClient)
        const { agent: unsigned, executions } = bank()
        const agent = Agent.make({
          name: "bank",
          tools: [...unsigned.toolkit.entries.values()].map((entry) => entry.tool),
          checkpointSecret: Redacted.make("a-secret-of-at-least-thirty-two-bytes!")
        })
        const paused = yield* inProcess(store, Agent.run(agent, { input: "pay" }))
        if (paused._tag !== "Paused") throw new Error("expected a pause")
        const copy = JSON.parse(JSON.stringify(paused.checkpoint))
        const replay = (checkpoint: unknown) => inProcess(store, Agent.resume(agent, checkpoint, Decision.approveAll())).pipe(Effect.match({ onFailure: refusal, onSuccess: (exit) => exit._tag }))
        // resumed and completed at once
        expect(yield* replay(copy)).toBe("Completed")
        // a second before the retention has passed on the database's clock, then when it has: the copy, stamped by that clock, ages with it
        yield* elapse(sql, 3_599_000)
        expect(yield* replay(yield* pausedEarlier(agent, copy, 3_599_000))).toBe("completed")
        yield* elapse(sql, 1_000)
        expect(yield* replay(yield* pausedEarlier(agent, copy, 3_600_000))).toBe("expired")
        expect(executions).toEqual({ lookup: 1, transfer: 1 })
      }).pipe(Effect.scoped))

    it.effect("a process whose clock runs 2 hours ahead deletes no finished run early: a copy of it (an ephemeral run: no conversation to tell) is refused through that process and through the others, its transfer runs once", () =>
      Effect.gen(function*() {
        const { executions, replays } = yield* replaysOfAFinishedRun(yield* dialect.database, 7_200_000, "right")
        expect(replays).toEqual(["completed", "completed"])
        expect(executions).toEqual({ lookup: 1, transfer: 1 })
      }).pipe(Effect.scoped))

    it.effect("a process whose clock runs 2 hours behind finishes a run: a copy of it (an ephemeral run: no conversation to tell) is refused through that process and through the others, its transfer runs once", () =>
      Effect.gen(function*() {
        const { executions, replays } = yield* replaysOfAFinishedRun(yield* dialect.database, -7_200_000, "skewed")
        expect(replays).toEqual(["completed", "completed"])
        expect(executions).toEqual({ lookup: 1, transfer: 1 })
      }).pipe(Effect.scoped))

    it.effect("Agent.cancel from another process fences a running run: the call it runs ends unrecorded, the next one never starts, the run fails", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const store = SqlStore.layer().pipe(Layer.provide(database.client))
        const entered = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const counts = { first: 0, second: 0 }
        const first = Tool.make("first", {
          description: "Ends when told",
          parameters: Schema.Struct({}),
          success: Schema.String,
          handler: () => Effect.sync(() => counts.first++).pipe(Effect.andThen(Deferred.succeed(entered, undefined)), Effect.andThen(Deferred.await(release)), Effect.as("one"))
        })
        const second = Tool.make("second", { description: "Counts", parameters: Schema.Struct({}), success: Schema.String, handler: () => Effect.sync(() => counts.second++).pipe(Effect.as("two")) })
        const agent = Agent.make({ name: "cancelled", tools: [first, second] })
        const model = ScriptedChatModel.layer((request) =>
          request.messages.at(-1)?._tag === "User" ? ScriptedChatModel.toolCalls({ id: "a", name: "first", args: {} }, { id: "b", name: "second", args: {} }) : ScriptedChatModel.text("done")
        )
        const provided = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(Effect.provide(store), Effect.provide(model))
        const running = yield* Effect.forkChild(provided(Agent.run(agent, { input: "go", conversationId: "x-1", runId: "run-x" })))
        yield* Deferred.await(entered)
        // another process: its own store Layer on the same database
        yield* provided(Agent.cancel(agent, "run-x", { cancelledBy: "ops" }))
        yield* Deferred.succeed(release, undefined)
        const refused = (yield* Effect.flip(Fiber.join(running))) as { readonly _tag: string; readonly status?: string; readonly decidedBy?: string }
        expect([refused._tag, refused.status, refused.decidedBy]).toEqual(["RunAlreadyResumed", "failed", "ops"])
        expect(counts).toEqual({ first: 1, second: 0 })
        expect(yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.outcomes("run-x")))).toEqual([])
        const record = yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.get("run-x")))
        expect(Option.map(record, (r) => [r.status, r.decidedBy])).toEqual(Option.some(["failed", "ops"]))
        const again = (yield* Effect.flip(provided(Agent.run(agent, { input: "go", conversationId: "x-2", runId: "run-x" })))) as Error
        expect(again.message).toContain(`run id "run-x" is taken: the run store has a run with this id (failed)`)
      }).pipe(Effect.scoped))

    it.effect("a writer that lost its run (another took it over) records no result: its run fails with RunAlreadyResumed", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const store = SqlStore.layer().pipe(Layer.provide(database.client))
        const entered = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const slow = Tool.make("slow", {
          description: "Ends when told",
          parameters: Schema.Struct({}),
          success: Schema.String,
          handler: () => Effect.andThen(Deferred.succeed(entered, undefined), Effect.as(Deferred.await(release), "late result"))
        })
        const agent = Agent.make({ name: "stale", tools: [slow] })
        const model = ScriptedChatModel.layer((request) =>
          request.messages.at(-1)?._tag === "User" ? ScriptedChatModel.toolCalls({ id: "x", name: "slow", args: {} }) : ScriptedChatModel.text("done")
        )
        const provided = <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(Effect.provide(store), Effect.provide(model))
        const stale = yield* Effect.forkChild(provided(Agent.run(agent, { input: "go", conversationId: "s-1" })))
        yield* Deferred.await(entered)
        // its lease lapsed meanwhile: another process's recovery claimed the record (running@v → running@v+1)
        const [running] = yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.list({ status: "running" })))
        const taken = yield* provided(Effect.flatMap(RunStore.RunStore, (s) =>
          s.transition(running!.runId, { from: { status: "running", version: running!.version }, to: "running", checkpoint: running!.checkpoint })))
        expect(taken?.version).toBe(running!.version + 1)
        yield* Deferred.succeed(release, undefined)
        const refused = (yield* Effect.flip(Fiber.join(stale))) as Error & { readonly _tag: string }
        expect([refused._tag, refused.message]).toEqual(["RunAlreadyResumed", `Run ${running!.runId} was already decided: it is running now`])
        const outcomes = yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.outcomes(running!.runId)))
        expect(outcomes).toEqual([])
        const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT count(*) AS n FROM agentfx_outcomes`).pipe(Effect.provide(database.client))
        expect(Number(rows[0]!.n)).toBe(0)
        const record = yield* provided(Effect.flatMap(RunStore.RunStore, (s) => s.get(running!.runId)))
        expect(Option.map(record, (r) => [r.status, r.version])).toEqual(Option.some(["running", running!.version + 1]))
      }).pipe(Effect.scoped))
  })
}

/**
 * A run's process, alive though its leases lapsed, goes on while another process takes its
 * run over. Its batch — `a` ended, `b` running, `c` not started — lets it go on at one point of
 * the taker's sequence of store calls (the `at`-th), where it ends `b` and starts `c` if the
 * store still lets it (then holds `c` until the taker is done). Whatever the point, every call
 * runs exactly once.
 */
const lapsedWriterRace = (database: { readonly client: Layer.Layer<SqlClient.SqlClient, unknown> }, taker: "recover" | "next turn", at: number) =>
  Effect.gen(function*() {
    const counts = { a: 0, b: 0, c: 0 }
    const bEntered = yield* Deferred.make<void>()
    const releaseB = yield* Deferred.make<void>()
    const cEntered = yield* Deferred.make<void>()
    const releaseC = yield* Deferred.make<void>()
    let holdC = false
    const tool = (name: "a" | "b" | "c", body: Effect.Effect<void>) =>
      Tool.make(name, { description: name, parameters: Schema.Struct({}), success: Schema.String, handler: () => Effect.as(Effect.andThen(Effect.sync(() => counts[name]++), body), `${name} done`) })
    const agent = Agent.make({
      name: "race",
      tools: [
        tool("a", Effect.void),
        tool("b", Effect.andThen(Deferred.succeed(bEntered, undefined), Deferred.await(releaseB))),
        tool("c", Effect.suspend(() => holdC ? Effect.andThen(Deferred.succeed(cEntered, undefined), Deferred.await(releaseC)) : Effect.void))
      ]
    })
    const model = ScriptedChatModel.layer((request) => {
      const last = request.messages.at(-1)
      return last?._tag === "User" && last.text === "go"
        ? ScriptedChatModel.toolCalls({ id: "a", name: "a", args: {} }, { id: "b", name: "b", args: {} }, { id: "c", name: "c", args: {} })
        : ScriptedChatModel.text("done")
    })
    const staleStore = SqlStore.layer().pipe(Layer.provide(database.client))
    const stale = yield* Effect.forkChild(Agent.run(agent, { input: "go", conversationId: "race" }).pipe(
      Effect.provide(staleStore),
      Effect.provide(model),
      Effect.provide(ToolCallingManager.sequential())
    ))
    yield* Deferred.await(bEntered)
    const [running] = yield* Effect.flatMap(RunStore.RunStore, (s) => s.list({ status: "running" })).pipe(Effect.provide(staleStore))
    // the stale writer goes on: it ends `b`, then starts `c` (held there) or is refused
    const letStaleGoOn = Effect.gen(function*() {
      holdC = true
      yield* Deferred.succeed(releaseB, undefined)
      yield* Effect.race(Deferred.await(cEntered), Effect.asVoid(Fiber.await(stale)))
      holdC = false
    })
    const built = yield* Layer.build(SqlStore.layer().pipe(Layer.provide(database.client)))
    const inner = Context.get(built, RunStore.RunStore)
    let calls = 0
    const atPoint = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.suspend(() => calls++ === at ? Effect.andThen(letStaleGoOn, effect) : effect)
    const taking: RunStore.RunStore.Service = {
      ...inner,
      get: (runId) => atPoint(inner.get(runId)),
      list: (filter) => atPoint(inner.list(filter)),
      insert: (record) => atPoint(inner.insert(record)),
      transition: (runId, transition) => atPoint(inner.transition(runId, transition)),
      takeOver: (runId, version) => atPoint(inner.takeOver(runId, version)),
      recordStarted: (runId, version, callId) => atPoint(inner.recordStarted(runId, version, callId)),
      started: (runId) => atPoint(inner.started(runId)),
      recordOutcome: (runId, version, outcome) => atPoint(inner.recordOutcome(runId, version, outcome)),
      outcomes: (runId) => atPoint(inner.outcomes(runId)),
      // the stale writer's leases lapsed: the taker gets them
      lease: () => atPoint(Effect.succeed(true)),
      holder: (key) => atPoint(inner.holder(key))
    }
    const taken = yield* (taker === "recover" ? Agent.recover(agent, running!.runId) : Agent.run(agent, { input: "and now?", conversationId: "race" })).pipe(
      Effect.provideService(RunStore.RunStore, taking),
      Effect.provideService(ChatMemory.ChatMemory, Context.get(built, ChatMemory.ChatMemory)),
      Effect.provide(model),
      Effect.provide(ToolCallingManager.sequential()),
      Effect.result
    )
    yield* Deferred.succeed(releaseB, undefined)
    yield* Deferred.succeed(releaseC, undefined)
    yield* Fiber.await(stale)
    return { counts, taken: taken._tag === "Success" ? taken.success._tag : (taken.failure as { readonly _tag: string })._tag, points: calls }
  })

for (const dialect of dialects) {
  describe(`SqlStore on ${dialect.name}: a writer whose leases lapsed, still alive, racing the takeover`, () => {
    for (const taker of ["recover", "next turn"] as const) {
      it.effect(`${taker}: at every point of the taker's store calls, each call of the batch runs exactly once`, () =>
        Effect.gen(function*() {
          const seen: Array<string> = []
          for (let at = 0;; at++) {
            const { counts, points, taken } = yield* Effect.scoped(Effect.flatMap(dialect.database, (database) => lapsedWriterRace(database, taker, at)))
            seen.push(taken)
            expect([at, counts]).toEqual([at, { a: 1, b: 1, c: 1 }])
            if (at >= points) break
          }
          expect(seen.length).toBeGreaterThan(5)
          expect(seen.filter((tag) => tag === "Completed").length).toBeGreaterThan(0)
          expect(seen.every((tag) => tag === "Completed" || tag === "RunAlreadyResumed")).toBe(true)
        }), 120_000)
    }
  })
}

describe("SqlStore and the conversation's lease", () => {
  it.effect("a conversation let go between a refused lease and the look at its holder is taken on a second try, not ConversationBusy", () =>
    Effect.gen(function*() {
      const database = yield* dialects[0]!.database
      const sql = yield* Layer.build(SqlStore.layer().pipe(Layer.provide(database.client)))
      const inner = Context.get(sql, RunStore.RunStore)
      let raced = 0
      // another turn holds the conversation for the first attempt only, and lets it go right after
      const racing: RunStore.RunStore.Service = {
        ...inner,
        lease: (key, options) =>
          key.startsWith("conversation:") && raced++ === 0
            ? Effect.scoped(Effect.andThen(inner.lease(key, { owner: "other-turn", wait: false }), Effect.scoped(inner.lease(key, options))))
            : inner.lease(key, options)
      }
      const { agent } = bank()
      const exit = yield* Agent.run(agent, { input: "pay", conversationId: "c-race" }).pipe(
        Effect.provideService(RunStore.RunStore, racing),
        Effect.provideService(ChatMemory.ChatMemory, Context.get(sql, ChatMemory.ChatMemory)),
        Effect.provide(script)
      )
      expect([exit._tag, raced]).toEqual(["Paused", 2])
    }).pipe(Effect.scoped))
})

describe("SqlStore and a resume that lost the race", () => {
  for (const read of ["get, then lease", "getHolding"] as const) {
    it.effect(`a resume that read the run paused, but holds the conversation only after another resume completed it, is RunAlreadyResumed, not ConversationDiverged (${read})`, () =>
      Effect.gen(function*() {
        const database = yield* dialects[0]!.database
        const sql = yield* Layer.build(SqlStore.layer().pipe(Layer.provide(database.client)))
        const inner = Context.get(sql, RunStore.RunStore)
        const { agent, executions } = bank()
        const provided = <A, E, R>(effect: Effect.Effect<A, E, R>, store: RunStore.RunStore.Service) =>
          effect.pipe(
            Effect.provideService(RunStore.RunStore, store),
            Effect.provideService(ChatMemory.ChatMemory, Context.get(sql, ChatMemory.ChatMemory)),
            Effect.provide(script)
          )
        const paused = yield* provided(Agent.run(agent, { input: "pay", conversationId: "c-lost" }), inner)
        if (paused._tag !== "Paused") throw new Error("expected a pause")
        let overtaken = false
        // the other resume claims and completes the run between this one's read and its hold of the conversation
        const overtake = Effect.sync(() => void (overtaken = true)).pipe(
          Effect.andThen(provided(Agent.resume(agent, paused.runId, Decision.approveAll()), inner)),
          Effect.orDie
        )
        const { getHolding: _, ...withoutGetHolding } = inner
        const racing: RunStore.RunStore.Service = read === "get, then lease"
          ? {
            ...withoutGetHolding,
            lease: (key, options) =>
              key.startsWith("conversation:") && !overtaken ? Effect.andThen(overtake, inner.lease(key, options)) : inner.lease(key, options)
          }
          : {
            ...inner,
            // one step that read the record in a snapshot older than the lease it took (PostgreSQL's `WITH`)
            getHolding: (runId) =>
              Effect.gen(function*() {
                const record = yield* inner.get(runId)
                yield* overtake
                const held = Option.isSome(record) && record.value.status === "paused"
                  ? yield* inner.lease(`conversation:${record.value.conversationId}`, { owner: runId, wait: false })
                  : false
                return { record, held }
              })
          }
        const lost = yield* Effect.flip(provided(Agent.resume(agent, paused.runId, Decision.approveAll()), racing))
        expect([lost._tag, lost.message, overtaken]).toEqual(["RunAlreadyResumed", `Run ${paused.runId} was already decided: it is completed now`, true])
        expect(executions).toEqual({ lookup: 1, transfer: 1 })
      }).pipe(Effect.scoped))
  }
})

describe("SqlStore layers", () => {
  it.effect("SqliteStore.layerClient opens the file in WAL mode with a busy timeout of 5 s, synchronous FULL unless told \"normal\"; anything else is refused", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const pragmas = (options: SqliteStore.ClientOptions) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.all([sql`PRAGMA journal_mode`, sql`PRAGMA busy_timeout`, sql`PRAGMA synchronous`])).pipe(
          Effect.provide(SqliteStore.layerClient(options))
        )
      expect(yield* pragmas({ filename: join(dir, "full.db") })).toEqual([[{ journal_mode: "wal" }], [{ timeout: 5000 }], [{ synchronous: 2 }]])
      expect(yield* pragmas({ filename: join(dir, "normal.db"), synchronous: "normal" })).toEqual([[{ journal_mode: "wal" }], [{ timeout: 5000 }], [{ synchronous: 1 }]])
      const refused = yield* Effect.flip(Layer.build(SqliteStore.layer({ filename: join(dir, "x.db"), synchronous: "off" as never })))
      expect(refused.message).toBe(`Invalid SQLite option: synchronous must be "full" or "normal" (got "off")`)
    }).pipe(Effect.scoped))

  // real time: the store that finds another migrating waits for it (100 ms apart)
  it.live("SqliteStore.layer: stores opening one new file at once all start, each on the whole schema (one migrates, the others wait for it)", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "new.db")
      const start = Effect.flatMap(RunStore.RunStore, (store) => store.list()).pipe(Effect.provide(SqliteStore.layer({ filename })))
      expect(yield* Effect.all([start, start, start], { concurrency: "unbounded" })).toEqual([[], [], []])
    }).pipe(Effect.scoped))

  it.effect("SqliteStore.layer: a file that cannot be opened is a StoreError with SQLite's message", () =>
    Effect.gen(function*() {
      const missing = join(yield* tempDir, "no", "such", "dir", "agentfx.db")
      const error = yield* Effect.flip(Layer.build(SqliteStore.layer({ filename: missing })))
      expect([error._tag, error.message]).toEqual([
        "StoreError",
        `Could not open SQLite database ${missing} (its directory does not exist): Failed to open database: unable to open database file (SQLITE_CANTOPEN)`
      ])
    }).pipe(Effect.scoped))

  it.live("PgStore.layer: a server that does not answer is a StoreError with the driver's message", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(PgStore.layer({ url: Redacted.make("postgres://nobody@127.0.0.1:1/none") })))
      expect(error._tag).toBe("StoreError")
      expect(error.message).toBe("Could not open PostgreSQL: PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:1")
    }).pipe(Effect.scoped))

  it.live(`PgStore.layer takes PgClient's options as they are (host, port, username, database)`, () =>
    Effect.gen(function*() {
      const url = new URL(pgUrl)
      const context = yield* Layer.build(PgStore.layer({
        host: url.hostname,
        port: Number(url.port),
        username: decodeURIComponent(url.username),
        database: url.pathname.slice(1),
        retention: "2 hours"
      }))
      expect(Context.get(context, RunStore.RunStore).retentionMillis).toBe(7_200_000)
      expect(Option.isNone(yield* Context.get(context, RunStore.RunStore).get("no-such-run"))).toBe(true)
    }).pipe(Effect.scoped))
})
