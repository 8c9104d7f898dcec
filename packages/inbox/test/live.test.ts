/**
 * The live runs' events are kept for late subscribers: every event of a run still going, and
 * those of the last `finishedKept` runs that finished.
 */
import type { Agent, ChatModel } from "@agentfx/core"
import { Decision } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Stream } from "effect"
import * as Live from "../src/internal/live.js"
import { bank, serve } from "./fixtures.js"

describe("live runs", () => {
  it.live(`the events of the last ${Live.finishedKept} finished runs are kept; older ones are forgotten`, () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const inbox = yield* serve([agent])
      const runIds: Array<string> = []
      for (let i = 0; i <= Live.finishedKept; i++) runIds.push(yield* inbox.pause(agent, `pay Ada ${i + 1}`))
      const context = yield* inbox.inStores(Effect.context<ChatModel.ChatModel>().pipe(Effect.provide(inbox.model)))
      const live = Live.make(context, yield* Effect.scope)
      for (const runId of runIds) {
        yield* live.resume(agent as Agent.Any, Option.getOrThrow(yield* inbox.store.get(runId)), Decision.approveAll(), "ada")
        const events = yield* live.subscribe(runId, undefined, undefined)
        expect(Option.isSome(events)).toBe(true)
        const all = yield* Stream.runCollect(Option.getOrThrow(events))
        expect(all.at(-1)!.event._tag).toBe("RunCompleted")
      }
      expect(executed).toHaveLength(Live.finishedKept + 1)
      expect(Option.isNone(yield* live.subscribe(runIds[0]!, undefined, undefined))).toBe(true)
      // after an id of this run's stream: the events after it; an id of another stream: all of them
      const ids = (lastEventId: string) =>
        Effect.flatMap(live.subscribe(runIds[1]!, lastEventId, undefined), (events) => Stream.runCollect(Option.getOrThrow(events))).pipe(
          Effect.map((all) => all.map((n) => n.id))
        )
      expect(yield* ids("2-3")).toEqual(["2-4", "2-5", "2-6"])
      expect(yield* ids("1-3")).toEqual(["2-0", "2-1", "2-2", "2-3", "2-4", "2-5", "2-6"])
    }), { timeout: 30_000 })
})
