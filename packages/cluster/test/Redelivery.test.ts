/**
 * A start or a decision delivered again after a crash. A start is refused by its run's first
 * write and answered from the record; a decision is told apart from a second decision by the
 * same person: the claim records the message's request id (`decisionId`), which a redelivered
 * message keeps and no other message has.
 */
import { describe, expect, it } from "@effect/vitest"
import { Decision } from "@agentfx/core"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { Effect, Layer, Option, Stream } from "effect"
import type { Entity } from "effect/cluster"
import { join } from "node:path"
import { AgentCluster } from "../src/index.js"
import type { Decide, Start, Watch } from "../src/internal/protocol.js"
import { Bank, bankAgent, bankModel, bankRunnerOn, executions, handlersOf, handlersOn, request, tempDir } from "./fixtures.js"

/** What a watch of the handlers' runner gives of a run's start segment: the elements' tags, heartbeats left out. */
const startSegment = (handlers: Effect.Success<ReturnType<typeof handlersOf>>, runId: string) =>
  Effect.map(
    Stream.runCollect(Stream.filter(handlers.Watch(request<Entity.Request<typeof Watch>>(9n, { runId })), (w) => w._tag !== "Alive")),
    (watched) => watched.map((w) => w._tag === "Event" ? (w.event as { readonly _tag: string })._tag : w._tag === "Outcome" ? `Outcome:${w.outcome._tag}` : w._tag)
  )

describe("a message delivered twice", () => {
  it.live("the same person deciding twice — approving, then rejecting or approving again — is refused RunAlreadyResumed naming the decision; the call ran once", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "cluster.db")
      yield* Effect.gen(function*() {
        const paused = yield* AgentCluster.run(Bank, { input: "pay 41", conversationId: "c-41" })
        if (paused._tag !== "Paused") return expect.fail(`expected Paused, got ${paused._tag}`)
        const done = yield* AgentCluster.decide(Bank, paused.runId, Decision.approveAll(), { decidedBy: "ada" })
        expect(done).toMatchObject({ _tag: "Completed", runId: paused.runId })
        for (const decision of [Decision.rejectAll({ message: "changed my mind" }), Decision.approveAll()]) {
          const again = yield* Effect.flip(AgentCluster.decide(Bank, paused.runId, decision, { decidedBy: "ada" }))
          expect(again).toMatchObject({ _tag: "RunAlreadyResumed", runId: paused.runId, status: "completed", decidedBy: "ada" })
        }
        expect(executions.get("transfer-41")).toBe(1)
      }).pipe(Effect.provide(bankRunnerOn(filename)))
    }).pipe(Effect.scoped), 60_000)

  it.live("the handler answers a redelivered decision (same request id) with how its run ended, and refuses another message of the same person", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "handler.db")
      const handlers = yield* handlersOn(bankAgent, bankModel, filename, "c-42")
      const paused = yield* handlers.Start(request<Entity.Request<typeof Start>>(1n, { runId: "r-42", input: "pay 42", conversationId: "c-42" }))
      expect(paused._tag).toBe("Paused")
      const decide = request<Entity.Request<typeof Decide>>(2n, { runId: "r-42", decision: Decision.approveAll(), decidedBy: "ada" })
      expect(yield* handlers.Decide(decide)).toMatchObject({ _tag: "Completed", runId: "r-42" })
      // the runner crashed before the reply was stored: the engine delivers the same message again
      expect(yield* handlers.Decide(decide)).toMatchObject({ _tag: "Ended", runId: "r-42", status: "completed", decidedBy: "ada" })
      const other = yield* Effect.flip(handlers.Decide(request<Entity.Request<typeof Decide>>(3n, { runId: "r-42", decision: Decision.rejectAll({}), decidedBy: "ada" })))
      expect(other).toMatchObject({ _tag: "Refused", runId: "r-42", reason: "RunAlreadyResumed" })
      const record = yield* Effect.provide(AgentCluster.get("r-42"), Layer.fresh(SqliteStore.layer({ filename })))
      expect(Option.map(record, (r) => [r.status, r.decidedBy, r.decisionId])).toEqual(Option.some(["completed", "ada", "2"]))
      expect(executions.get("transfer-42")).toBe(1)
    }).pipe(Effect.scoped), 60_000)

  it.live("a start delivered again (its runner crashed before the reply was stored) is answered from the record, before anything runs again: the run's first write refuses its id, and no RunStarted of the refused start is kept for watchers", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "start.db")
      for (const [runId, conversationId] of [["r-43", "c-43"], ["r-44", undefined]] as const) {
        const entityId = conversationId === undefined ? `run:${runId}` : `conversation:${conversationId}`
        const start = request<Entity.Request<typeof Start>>(1n, { runId, input: `pay ${runId.slice(2)}`, ...(conversationId === undefined ? {} : { conversationId }) })
        const first = yield* handlersOf(bankAgent, bankModel, filename, entityId)
        expect(yield* first.Start(start)).toMatchObject({ _tag: "Paused", runId })
        // another runner (what it keeps for watchers starts empty) is given the same message
        const next = yield* handlersOf(bankAgent, bankModel, filename, entityId)
        expect(yield* next.Start(start)).toMatchObject({ _tag: "Paused", runId })
        expect(executions.get(`lookup-${runId.slice(2)}`)).toBe(1)
        expect(yield* startSegment(next, runId)).toEqual(["Gap", "Outcome:Paused"])
        expect(yield* startSegment(first, runId)).toEqual(["RunStarted", "ModelCalled", "ModelResponded", "ToolStarted", "ToolSucceeded", "ModelCalled", "ModelResponded", "RunPaused"])
      }
    }).pipe(Effect.scoped), 60_000)
})
