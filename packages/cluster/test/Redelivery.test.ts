/**
 * A decision redelivered after a crash, told apart from a second decision by the same person:
 * the claim records the message's request id (`decisionId`), which a redelivered message keeps
 * and no other message has.
 */
import { describe, expect, it } from "@effect/vitest"
import { Decision } from "@agentfx/core"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { Effect, Layer, Option } from "effect"
import type { Entity } from "effect/cluster"
import { join } from "node:path"
import { AgentCluster } from "../src/index.js"
import type { Decide, Start } from "../src/internal/protocol.js"
import { Bank, bankAgent, bankModel, bankRunnerOn, executions, handlersOn, request, tempDir } from "./fixtures.js"

describe("a decision delivered twice", () => {
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
})
