import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { RunOutcome } from "../src/index.js"

describe("RunOutcome", () => {
  it.effect("a paused reply says kind and why; it is stored with the keys replies always had (reason), so one stored before decision 166 decodes", () =>
    Effect.gen(function*() {
      const stored = {
        _tag: "Paused",
        runId: "r-1",
        conversationId: "c-1",
        reason: "approval",
        revision: 3,
        pending: [{ callId: "t1", toolName: "transfer", args: { amount: 500 }, reason: "transfers are checked by a person" }]
      }
      const decoded = yield* Schema.decodeUnknownEffect(RunOutcome.RunOutcome)(stored)
      expect(decoded._tag === "Paused" && [decoded.kind, decoded.pending.map((p) => p.why), "reason" in decoded]).toEqual([
        "approval",
        ["transfers are checked by a person"],
        false
      ])
      expect(yield* Schema.encodeEffect(RunOutcome.RunOutcome)(decoded)).toEqual(stored)
    }))
})
