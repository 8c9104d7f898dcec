/**
 * What every `RunStore` must do — the in-memory one, `@agentfx/sql`'s SQLite and PostgreSQL
 * ones. `conformance(name, layer, elapse)` declares the suite for a Layer that provides a fresh,
 * empty store each time it is built, and the way to make its clock (`RunStore.now`) move on.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Layer } from "effect"
import { Deferred, Effect, Exit, Fiber, Option, Schema, Scope } from "effect"
import { TestClock } from "effect/testing"
import { Agent, ChatMemory, Decision, RunStore, ScriptedChatModel, Tool } from "../src/index.js"

/** A record for the tests: paused at version 1 unless `overrides` say otherwise. */
export const record = (runId: string, overrides: Partial<RunStore.RunRecord> = {}): RunStore.RunRecord => ({
  runId,
  agent: "agent",
  conversationId: `conversation-${runId}`,
  ephemeral: false,
  status: "paused",
  version: 1,
  createdAt: 0,
  updatedAt: 0,
  checkpoint: { some: "checkpoint" },
  ...overrides
})

const outcome = (callId: string) => ({ _tag: "Succeeded" as const, callId, toolName: "t", value: callId })

/** A tool that counts its executions, and an agent whose gate pauses it. */
const transferAgent = () => {
  let executions = 0
  const transfer = Tool.make("transfer", {
    description: "Sends money",
    parameters: Schema.Struct({ amount: Schema.Number }),
    success: Schema.String,
    needsApproval: true,
    handler: ({ amount }) => Effect.sync(() => `sent ${amount} (#${++executions})`)
  })
  return { agent: Agent.make({ name: "bank", tools: [transfer] }), executions: () => executions }
}

const transferScript = ScriptedChatModel.layer((request) =>
  request.messages.at(-1)?._tag === "User"
    ? ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { amount: 100 } })
    : ScriptedChatModel.text("done")
)

/** `effect`'s value, with the store's clock read just before and just after it. */
const timed = <A, E, R>(store: RunStore.RunStore.Service, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const before = yield* store.now
    const value = yield* effect
    return { value, before, after: yield* store.now }
  })

/** That `at` (a time of the store's) was stamped within `span`. */
const within = (at: number | undefined, span: { readonly before: number; readonly after: number }) => {
  expect(at).toBeGreaterThanOrEqual(span.before)
  expect(at).toBeLessThanOrEqual(span.after)
}

/**
 * That `at`, stamped no earlier than `since` on the store's clock, is `elapsed` old by it: at least
 * that, at most that and what the store's clock moved since (a database's goes on in real time).
 */
const agedBy = (store: RunStore.RunStore.Service, at: number | undefined, elapsed: number, since: number) =>
  Effect.map(store.now, (now) => {
    expect(now - at!).toBeGreaterThanOrEqual(elapsed)
    expect(now - at!).toBeLessThanOrEqual(elapsed + now - since)
  })

/**
 * The suite, for a Layer that builds a fresh, empty store, and `elapse`: how its clock moves on
 * by some milliseconds (by default the `TestClock`'s; a database's clock cannot be moved, so a
 * SQL store's suite moves what the store wrote into the past instead).
 */
export const conformance = <R>(
  name: string,
  layer: Layer.Layer<R, unknown>,
  elapse: (millis: number) => Effect.Effect<void, never, R> = TestClock.adjust as (millis: number) => Effect.Effect<void, never, R>
) => {
  const withStore = <A, E>(body: (store: RunStore.RunStore.Service) => Effect.Effect<A, E, Scope.Scope | any>) =>
    Effect.flatMap(RunStore.RunStore, body).pipe(Effect.provide(layer), Effect.scoped)

  describe(`RunStore conformance: ${name}`, () => {
    it.effect("insert, get, list by status, agent and conversation, most recently updated first", () =>
      withStore((store) =>
        Effect.gen(function*() {
          expect(yield* store.insert(record("a", { updatedAt: 1 }))).toBe(true)
          expect(yield* store.insert(record("b", { status: "running", updatedAt: 3, agent: "other" }))).toBe(true)
          expect(yield* store.insert(record("c", { updatedAt: 2, conversationId: "shared" }))).toBe(true)
          expect(yield* store.insert(record("a"))).toBe(false)
          expect(Option.map(yield* store.get("a"), (r) => [r.status, r.version, r.checkpoint])).toEqual(
            Option.some(["paused", 1, { some: "checkpoint" }])
          )
          expect(yield* store.get("nope")).toEqual(Option.none())
          expect((yield* store.list()).map((r) => r.runId)).toEqual(["b", "c", "a"])
          expect((yield* store.list({ status: "paused" })).map((r) => r.runId)).toEqual(["c", "a"])
          expect((yield* store.list({ agent: "other" })).map((r) => r.runId)).toEqual(["b"])
          expect((yield* store.list({ conversationId: "shared" })).map((r) => r.runId)).toEqual(["c"])
          expect((yield* store.list({ limit: 1 })).map((r) => r.runId)).toEqual(["b"])
        })
      ))

    it.effect("a transition is a compare-and-set: of 8 claims of one version exactly one succeeds", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* store.insert(record("r"))
          const claims = yield* Effect.all(
            Array.from({ length: 8 }, () => store.transition("r", { from: { status: "paused", version: 1 }, to: "running" })),
            { concurrency: "unbounded" }
          )
          const won = claims.filter((next) => next !== undefined)
          expect(won.map((next) => [next!.status, next!.version])).toEqual([["running", 2]])
          expect(won[0]!.checkpoint).toBeUndefined()
          expect(yield* store.transition("r", { from: { status: "paused", version: 1 }, to: "running" })).toBeUndefined()
          expect(yield* store.transition("missing", { from: { status: "paused", version: 1 }, to: "running" })).toBeUndefined()
          const paused = yield* store.transition("r", { from: { status: "running", version: 2 }, to: "paused", checkpoint: { again: true } })
          expect([paused?.version, paused?.checkpoint]).toEqual([3, { again: true }])
        })
      ))

    it.effect("a finished run is remembered: its id cannot be inserted again, and finished says how it ended", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* store.insert(record("done", { status: "running" }))
          expect((yield* store.transition("done", { from: { status: "running", version: 1 }, to: "completed" }))?.status).toBe("completed")
          expect(yield* store.finished("done")).toEqual(Option.some({ status: "completed" }))
          expect(yield* store.finished("never")).toEqual(Option.none())
          expect(yield* store.insert(record("done"))).toBe(false)
          expect((yield* store.list({ status: "paused" })).map((r) => r.runId)).toEqual([])
        })
      ))

    it.effect("decidedBy is set by a transition, decidedAt by a claim; both kept until the run pauses again, and remembered with a finished run", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* store.insert(record("d"))
          const claimed = yield* timed(store, store.transition("d", { from: { status: "paused", version: 1 }, to: "running", decidedBy: "ada" }))
          expect(claimed.value?.decidedBy).toBe("ada")
          within(claimed.value?.decidedAt, claimed)
          yield* elapse(1_000)
          const kept = yield* timed(store, store.transition("d", { from: { status: "running", version: 2 }, to: "running", checkpoint: { batch: 2 } }))
          expect(kept.value?.decidedBy).toBe("ada")
          within(kept.value?.updatedAt, kept)
          // the claim's time, a second older than this transition's
          yield* agedBy(store, kept.value?.decidedAt, 1_000, claimed.before)
          expect(Option.map(yield* store.get("d"), (r) => [r.decidedBy, r.decidedAt])).toEqual(Option.some(["ada", kept.value?.decidedAt]))
          const pausedAgain = yield* store.transition("d", { from: { status: "running", version: 3 }, to: "paused", checkpoint: {} })
          expect([pausedAgain?.decidedBy, pausedAgain?.decidedAt]).toEqual([undefined, undefined])
          expect(Option.map(yield* store.get("d"), (r) => "decidedAt" in r || "decidedBy" in r)).toEqual(Option.some(false))
          const reclaimed = yield* timed(store, store.transition("d", { from: { status: "paused", version: 4 }, to: "running", decidedBy: "bob" }))
          yield* elapse(1_000)
          yield* store.transition("d", { from: { status: "running", version: 5 }, to: "completed" })
          const finished = yield* store.finished("d")
          expect(Option.map(finished, ({ decidedAt: _, ...rest }) => rest)).toEqual(Option.some({ status: "completed", decidedBy: "bob" }))
          yield* agedBy(store, Option.getOrThrow(finished).decidedAt, 1_000, reclaimed.before)
          // a claim without a name is still timed; a run never claimed has neither
          yield* store.insert(record("anonymous"))
          const anonymous = yield* timed(store, store.transition("anonymous", { from: { status: "paused", version: 1 }, to: "running" }))
          expect(anonymous.value?.decidedBy).toBeUndefined()
          within(anonymous.value?.decidedAt, anonymous)
          yield* store.insert(record("never", { status: "running" }))
          yield* store.transition("never", { from: { status: "running", version: 1 }, to: "failed" })
          expect(yield* store.finished("never")).toEqual(Option.some({ status: "failed" }))
        })
      ))

    it.effect("decisionId is set by a claim and kept until the run pauses again, so an ended record (where kept) names the decision that claimed it", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* store.insert(record("i"))
          const claimed = yield* store.transition("i", { from: { status: "paused", version: 1 }, to: "running", decidedBy: "ada", decisionId: "d-1" })
          expect([claimed?.decidedBy, claimed?.decisionId]).toEqual(["ada", "d-1"])
          yield* store.transition("i", { from: { status: "running", version: 2 }, to: "running", checkpoint: { batch: 2 } })
          expect(Option.map(yield* store.get("i"), (r) => r.decisionId)).toEqual(Option.some("d-1"))
          const pausedAgain = yield* store.transition("i", { from: { status: "running", version: 3 }, to: "paused", checkpoint: {} })
          expect(pausedAgain !== undefined && "decisionId" in pausedAgain).toBe(false)
          const unnamed = yield* store.transition("i", { from: { status: "paused", version: 4 }, to: "running", decidedBy: "ada" })
          expect(unnamed !== undefined && "decisionId" in unnamed).toBe(false)
          yield* store.transition("i", { from: { status: "running", version: 5 }, to: "paused", checkpoint: {} })
          yield* store.transition("i", { from: { status: "paused", version: 6 }, to: "running", decidedBy: "ada", decisionId: "d-2" })
          const ended = yield* store.transition("i", { from: { status: "running", version: 7 }, to: "completed" })
          expect(ended?.decisionId).toBe("d-2")
          const kept = yield* store.get("i")
          if (Option.isSome(kept)) expect([kept.value.status, kept.value.decisionId]).toEqual(["completed", "d-2"])
        })
      ))

    it.effect("after the retention a finished run is forgotten", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* store.insert(record("old", { status: "running" }))
          yield* store.transition("old", { from: { status: "running", version: 1 }, to: "failed" })
          yield* elapse(store.retentionMillis - 1_000)
          expect(yield* store.finished("old")).toEqual(Option.some({ status: "failed" }))
          expect(yield* store.insert(record("old"))).toBe(false)
          yield* elapse(1_000)
          expect(yield* store.finished("old")).toEqual(Option.none())
          expect(yield* store.insert(record("old"))).toBe(true)
        })
      ))

    it.effect("outcomes and started calls are recorded in order and forgotten at the next transition", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* store.insert(record("o", { status: "running" }))
          expect(yield* store.recordStarted("o", 1, "c2")).toBe(true)
          expect(yield* store.recordOutcome("o", 1, outcome("c2"))).toBe(true)
          yield* store.recordStarted("o", 1, "c1")
          yield* store.recordOutcome("o", 1, outcome("c1"))
          yield* store.recordStarted("o", 1, "c3")
          expect((yield* store.outcomes("o")).map((o) => o.callId)).toEqual(["c2", "c1"])
          expect(yield* store.started("o")).toEqual(["c2", "c1", "c3"])
          expect(yield* store.outcomes("other")).toEqual([])
          expect(yield* store.started("other")).toEqual([])
          yield* store.transition("o", { from: { status: "running", version: 1 }, to: "running", checkpoint: { next: "batch" } })
          expect(yield* store.outcomes("o")).toEqual([])
          expect(yield* store.started("o")).toEqual([])
        })
      ))

    it.effect("started: a transition to running records the starts it carries at the new version, in order, after clearing the batch's older rows — none when refused", () =>
      withStore((store) =>
        Effect.gen(function*() {
          expect(store.transitionStarts).toBe(true)
          yield* store.insert(record("s", { status: "running" }))
          yield* store.recordStarted("s", 1, "old")
          yield* store.recordOutcome("s", 1, outcome("old"))
          const next = yield* store.transition("s", { from: { status: "running", version: 1 }, to: "running", checkpoint: { batch: 2 }, started: ["b", "a"] })
          expect(next?.version).toBe(2)
          expect(yield* store.started("s")).toEqual(["b", "a"])
          expect(yield* store.outcomes("s")).toEqual([])
          // the version they were recorded at is the writer's: its next start and result are recorded beside them
          expect(yield* store.recordStarted("s", 2, "c")).toBe(true)
          expect(yield* store.started("s")).toEqual(["b", "a", "c"])
          expect(yield* store.transition("s", { from: { status: "running", version: 1 }, to: "running", checkpoint: {}, started: ["late"] })).toBeUndefined()
          expect(yield* store.started("s")).toEqual(["b", "a", "c"])
        })
      ))

    it.effect("a writer that no longer holds the running version records nothing: started calls and outcomes are refused", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* store.insert(record("w", { status: "running" }))
          // another process took the run over (recovery's claim: running@1 → running@2)
          yield* store.transition("w", { from: { status: "running", version: 1 }, to: "running", checkpoint: { taken: "over" } })
          expect(yield* store.recordStarted("w", 1, "late")).toBe(false)
          expect(yield* store.recordOutcome("w", 1, outcome("late"))).toBe(false)
          expect(yield* store.recordOutcome("w", 2, outcome("mine"))).toBe(true)
          expect((yield* store.outcomes("w")).map((o) => o.callId)).toEqual(["mine"])
          expect(yield* store.started("w")).toEqual([])
          // a paused record, a missing one: nothing is running there
          yield* store.insert(record("p"))
          expect(yield* store.recordOutcome("p", 1, outcome("x"))).toBe(false)
          expect(yield* store.recordStarted("p", 1, "x")).toBe(false)
          expect(yield* store.recordOutcome("missing", 1, outcome("x"))).toBe(false)
          expect(yield* store.outcomes("p")).toEqual([])
        })
      ))

    it.effect("takeOver: the record moves to the next version with its checkpoint; what was recorded is kept, its old writer records nothing more", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* store.insert(record("t", { status: "running", checkpoint: { the: "batch" } }))
          yield* store.recordStarted("t", 1, "a")
          yield* store.recordOutcome("t", 1, outcome("a"))
          yield* store.recordStarted("t", 1, "b")
          const taken = yield* timed(store, store.takeOver("t", 1))
          expect(taken.value === undefined ? undefined : [taken.value.status, taken.value.version, taken.value.checkpoint])
            .toEqual(["running", 2, { the: "batch" }])
          within(taken.value?.updatedAt, taken)
          expect(Option.map(yield* store.get("t"), (r) => [r.status, r.version, r.checkpoint])).toEqual(Option.some(["running", 2, { the: "batch" }]))
          // the writer of version 1, alive after all: refused
          expect(yield* store.recordStarted("t", 1, "c")).toBe(false)
          expect(yield* store.recordOutcome("t", 1, outcome("b"))).toBe(false)
          expect(yield* store.started("t")).toEqual(["a", "b"])
          expect((yield* store.outcomes("t")).map((o) => o.callId)).toEqual(["a"])
          // the taker writes at the new version, beside what it kept
          expect(yield* store.recordStarted("t", 2, "c")).toBe(true)
          expect(yield* store.recordOutcome("t", 2, outcome("c"))).toBe(true)
          expect(yield* store.started("t")).toEqual(["a", "b", "c"])
          expect((yield* store.outcomes("t")).map((o) => o.callId)).toEqual(["a", "c"])
          // a second taker of version 1 lost; a takeover of version 2 keeps it all again
          expect(yield* store.takeOver("t", 1)).toBeUndefined()
          expect((yield* store.takeOver("t", 2))?.version).toBe(3)
          expect(yield* store.started("t")).toEqual(["a", "b", "c"])
          // an ordinary transition forgets it
          yield* store.transition("t", { from: { status: "running", version: 3 }, to: "running", checkpoint: { next: "batch" } })
          expect(yield* store.started("t")).toEqual([])
          expect(yield* store.outcomes("t")).toEqual([])
          // nothing running there: refused, nothing written
          yield* store.insert(record("p"))
          expect(yield* store.takeOver("p", 1)).toBeUndefined()
          expect(yield* store.takeOver("missing", 1)).toBeUndefined()
          expect(Option.map(yield* store.get("p"), (r) => [r.status, r.version])).toEqual(Option.some(["paused", 1]))
        })
      ))

    it.effect("takeOver racing 8 writers of the old version: every start the store accepted is read afterwards, none is accepted after it", () =>
      withStore((store) =>
        Effect.gen(function*() {
          for (let round = 0; round < 5; round++) {
            const runId = `race-${round}`
            const accepted: Array<string> = []
            const enough = yield* Deferred.make<void>()
            // each until refused, or 100 starts (a store that runs one writer at a time may serve the takeover last)
            const writer = (w: number) =>
              Effect.gen(function*() {
                for (let n = 0; n < 100; n++) {
                  yield* Effect.yieldNow
                  if (!(yield* store.recordStarted(runId, 1, `w${w}-${n}`))) return
                  accepted.push(`w${w}-${n}`)
                  if (accepted.length === 40) Deferred.doneUnsafe(enough, Exit.void)
                }
              })
            yield* store.insert(record(runId, { status: "running" }))
            const writers = yield* Effect.forkChild(Effect.all(Array.from({ length: 8 }, (_, w) => writer(w)), { concurrency: "unbounded" }))
            yield* Deferred.await(enough)
            expect((yield* store.takeOver(runId, 1))?.version).toBe(2)
            const read = yield* store.started(runId)
            yield* Fiber.join(writers)
            expect(new Set(read)).toEqual(new Set(accepted))
            expect(yield* store.started(runId)).toEqual(read)
          }
        })
      ))

    it.effect("a lease is held for its scope: another owner is refused, or waits for it", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const first = yield* Scope.make()
          expect(yield* Scope.provide(store.lease("conversation:c", { owner: "a", wait: false }), first)).toBe(true)
          expect(yield* Effect.scoped(store.lease("conversation:c", { owner: "b", wait: false }))).toBe(false)
          expect(yield* Effect.scoped(store.lease("conversation:other", { owner: "b", wait: false }))).toBe(true)
          const waited = yield* Deferred.make<boolean>()
          const waiter = yield* Effect.forkChild(
            Effect.scoped(Effect.flatMap(store.lease("conversation:c", { owner: "b", wait: true }), (held) => Deferred.succeed(waited, held)))
          )
          yield* TestClock.adjust("1 second")
          expect(yield* Deferred.isDone(waited)).toBe(false)
          yield* Scope.close(first, Exit.void)
          yield* TestClock.adjust("1 second")
          expect(yield* Deferred.await(waited)).toBe(true)
          yield* Fiber.join(waiter)
        })
      ))

    it.effect("getHolding: the record, and its conversation held for the scope when it is paused and not ephemeral", () =>
      withStore((store) =>
        Effect.gen(function*() {
          if (store.getHolding === undefined) return
          const getHolding = store.getHolding
          yield* store.insert(record("g"))
          yield* store.insert(record("e", { ephemeral: true }))
          yield* store.insert(record("r", { status: "running", conversationId: "conversation-r" }))
          const first = yield* Scope.make()
          const got = yield* Scope.provide(getHolding("g"), first)
          expect([Option.map(got.record, (r) => [r.runId, r.status, r.checkpoint]), got.held]).toEqual([Option.some(["g", "paused", { some: "checkpoint" }]), true])
          expect(yield* store.holder("conversation:conversation-g")).toEqual(Option.some("g"))
          // held: a second read does not hold it (another owner, or the same one: no re-entrancy)
          const again = yield* Effect.scoped(getHolding("g"))
          expect([Option.isSome(again.record), again.held]).toEqual([true, false])
          expect(yield* Effect.scoped(store.lease("conversation:conversation-g", { owner: "other", wait: false }))).toBe(false)
          yield* Scope.close(first, Exit.void)
          expect(yield* store.holder("conversation:conversation-g")).toEqual(Option.none())
          // not paused, ephemeral, missing: nothing held
          for (const runId of ["r", "e", "missing"]) {
            const read = yield* Effect.scoped(getHolding(runId))
            expect([runId, Option.isSome(read.record), read.held]).toEqual([runId, runId !== "missing", false])
          }
          expect(yield* store.holder("conversation:conversation-r")).toEqual(Option.none())
          expect(yield* store.holder("conversation:conversation-e")).toEqual(Option.none())
        })
      ))

    it.effect("transitionHolding: the transition, and the key held for the scope when it applied", () =>
      withStore((store) =>
        Effect.gen(function*() {
          if (store.transitionHolding === undefined) return
          const transitionHolding = store.transitionHolding
          yield* store.insert(record("h"))
          const claim = { from: { status: "paused" as const, version: 1 }, to: "running" as const, checkpoint: { the: "batch" }, decidedBy: "ada" }
          const scope = yield* Scope.make()
          const claimed = yield* Scope.provide(transitionHolding("h", claim, { key: "run:h", owner: "h" }), scope)
          expect([claimed.record?.status, claimed.record?.version, claimed.record?.checkpoint, claimed.record?.decidedBy, claimed.held])
            .toEqual(["running", 2, { the: "batch" }, "ada", true])
          expect(yield* store.holder("run:h")).toEqual(Option.some("h"))
          // refused: nothing written, nothing held
          const refused = yield* Effect.scoped(transitionHolding("h", claim, { key: "run:other", owner: "h" }))
          expect(refused).toEqual({ record: undefined, held: false })
          expect(yield* store.holder("run:other")).toEqual(Option.none())
          // applied, the key held by another owner: moved, not held
          const paused = yield* store.transition("h", { from: { status: "running", version: 2 }, to: "paused", checkpoint: {} })
          expect(paused?.version).toBe(3)
          const busy = yield* Effect.scoped(transitionHolding("h", { ...claim, from: { status: "paused", version: 3 } }, { key: "run:h", owner: "another" }))
          expect([busy.record?.version, busy.held]).toEqual([4, false])
          yield* Scope.close(scope, Exit.void)
          expect(yield* store.holder("run:h")).toEqual(Option.none())
        })
      ))

    it.effect("letGo: the leases of the current scope it names are let go of with a transition that applies; its scope's end deletes no later holder's", () =>
      withStore((store) =>
        Effect.gen(function*() {
          yield* store.insert(record("l", { status: "running" }))
          const turn = yield* Scope.make()
          const hold = (key: string) => Scope.provide(store.lease(key, { owner: "l", wait: false }), turn)
          expect([yield* hold("run:l"), yield* hold("conversation:conversation-l"), yield* hold("other:l")]).toEqual([true, true, true])
          const keys = ["run:l", "conversation:conversation-l"]
          // refused: still held
          expect(yield* Scope.provide(store.transition("l", { from: { status: "running", version: 9 }, to: "completed", letGo: keys }), turn)).toBeUndefined()
          expect(yield* store.holder("run:l")).toEqual(Option.some("l"))
          // from another scope: not this one's leases
          yield* Effect.scoped(store.transition("l", { from: { status: "running", version: 1 }, to: "running", checkpoint: {}, letGo: keys }))
          expect(yield* store.holder("run:l")).toEqual(Option.some("l"))
          // applied, in the turn's scope: let go of at once, but for the one it does not name
          const ended = yield* Scope.provide(store.transition("l", { from: { status: "running", version: 2 }, to: "completed", letGo: keys }), turn)
          expect(ended?.status).toBe("completed")
          expect([yield* store.holder("run:l"), yield* store.holder("conversation:conversation-l"), yield* store.holder("other:l")])
            .toEqual([Option.none(), Option.none(), Option.some("l")])
          // another turn takes the conversation; the first scope's end leaves it held
          const next = yield* Scope.make()
          expect(yield* Scope.provide(store.lease("conversation:conversation-l", { owner: "next", wait: false }), next)).toBe(true)
          yield* Scope.close(turn, Exit.void)
          expect([yield* store.holder("conversation:conversation-l"), yield* store.holder("other:l")]).toEqual([Option.some("next"), Option.none()])
          yield* Scope.close(next, Exit.void)
        })
      ))

    it.effect("messages: a transition of a store that writes conversations appends them, in order, when it applies — neither when refused", () =>
      withStore((store) =>
        Effect.gen(function*() {
          const conversations = store.conversations
          if (conversations === undefined) return
          yield* store.insert(record("m", { status: "running", conversationId: "c-m" }))
          yield* conversations.append("c-m", [{ _tag: "User", text: "before" }])
          const messages = Array.from({ length: 3 }, (_, i) => ({ _tag: "User" as const, text: `m${i}` }))
          expect(yield* store.transition("m", { from: { status: "running", version: 7 }, to: "running", checkpoint: {}, messages })).toBeUndefined()
          expect((yield* conversations.get("c-m")).map((m) => m._tag === "User" ? m.text : "")).toEqual(["before"])
          const next = yield* store.transition("m", { from: { status: "running", version: 1 }, to: "completed", messages })
          expect(next?.status).toBe("completed")
          expect((yield* conversations.get("c-m")).map((m) => m._tag === "User" ? m.text : "")).toEqual(["before", "m0", "m1", "m2"])
        })
      ))

    it.effect("Agent.resume: 5 resumes of one paused run at once (2 from copies of the checkpoint): one runs the call, 4 are refused", () =>
      Effect.gen(function*() {
        const { agent, executions } = transferAgent()
        const paused = yield* Agent.run(agent, { input: "pay", conversationId: "c-5" })
        if (paused._tag !== "Paused") throw new Error("expected a pause")
        const copy = JSON.parse(JSON.stringify(paused.checkpoint))
        const results = yield* Effect.all(
          [paused.runId, copy, paused.runId, copy, paused.runId].map((target) => Effect.result(Agent.resume(agent, target, Decision.approveAll()))),
          { concurrency: "unbounded" }
        )
        expect(results.filter((r) => r._tag === "Success").map((r) => r.success._tag)).toEqual(["Completed"])
        expect(results.filter((r) => r._tag === "Failure").map((r) => r.failure._tag)).toEqual(Array(4).fill("RunAlreadyResumed"))
        expect(executions()).toBe(1)
        const memory = yield* ChatMemory.ChatMemory
        const results_ = (yield* memory.get("c-5")).filter((m) => m._tag === "ToolResult")
        expect(results_).toHaveLength(1)
      }).pipe(Effect.provide(layer), Effect.provide(ChatMemory.layerMemory), Effect.provide(transferScript)))

    it.effect("Agent.resume by run id: the run's own settings come back from its record; its first call's tool choice is not forced again", () =>
      Effect.gen(function*() {
        const { agent } = transferAgent()
        const settings = { temperature: 0.1, maxOutputTokens: 64 }
        const paused = yield* Agent.run(agent, { input: "pay", conversationId: "c-s", settings, toolChoice: { tool: "transfer" } })
        if (paused._tag !== "Paused") throw new Error("expected a pause")
        const resumed = yield* Agent.resume(agent, paused.runId, Decision.approveAll())
        expect(resumed._tag).toBe("Completed")
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(requests.map((r) => [r.toolChoice, r.settings])).toEqual([[{ tool: "transfer" }, settings], ["auto", settings]])
      }).pipe(Effect.provide(layer), Effect.provide(ChatMemory.layerMemory), Effect.provide(transferScript)))
  })
}
