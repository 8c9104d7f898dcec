import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { readFileSync } from "node:fs"
import { Agent, ChatMemory, Checkpoint, Decision, RunStore, ScriptedChatModel } from "../src/index.js"
import { mailer } from "./fixtures/mailer.js"

/** A checkpoint of format version 2, as main's code wrote it before version 3 (fixtures/README.md). */
const written = (): any => JSON.parse(readFileSync(new URL("./fixtures/checkpoint-v2.json", import.meta.url), "utf8"))

const fixture = mailer()
const { sent } = fixture

const layer = Layer.mergeAll(ScriptedChatModel.layer([ScriptedChatModel.text("Mailed Ada.")]), ChatMemory.layerMemory, RunStore.layerMemory())

const refusal = (input: unknown) =>
  Agent.resume(fixture.agent, input, Decision.approveAll()).pipe(
    Effect.flip,
    Effect.map((e) => e._tag === "InvalidCheckpoint" ? `${e.reason}: ${e.detail}` : e._tag)
  )

describe("Checkpoint migration", () => {
  it.effect("a run paused by the previous version (format 2, signed) resumes: its signature verifies, its history, state, budget and settings are kept", () =>
    Effect.gen(function*() {
      sent.length = 0
      const checkpoint = written()
      expect(checkpoint.version).toBe(2)
      const exit = yield* Agent.resume(fixture.agent, checkpoint, Decision.approveAll())
      expect(exit._tag).toBe("Completed")
      if (exit._tag !== "Completed") return
      expect(exit.text).toBe("Mailed Ada.")
      expect(exit.state).toEqual({ sent: 2 })
      expect(sent).toEqual([{ to: "ada@example.com", body: "Sunny in Oslo" }])
      expect(exit.messages.map((m) => m._tag)).toEqual(["User", "Assistant", "ToolResult", "Assistant", "ToolResult", "Assistant"])
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests.map((r) => r.settings)).toEqual([{ temperature: 0.2 }])
      expect(requests[0]!.messages.slice(0, 4)).toEqual(checkpoint.messages)
    }).pipe(Effect.provide(layer)))

  it.effect("its signature is checked on the JSON as it was signed: altered, or relabelled as version 3, it is refused and stays resumable", () =>
    Effect.gen(function*() {
      const checkpoint = written()
      const altered = structuredClone(checkpoint)
      altered.batch[0].call.args.to = "attacker@example.com"
      const mismatch = "signature: the signature does not match: the checkpoint was altered or signed with another secret"
      expect(yield* refusal(altered)).toBe(mismatch)
      expect(yield* refusal({ ...checkpoint, version: 3 })).toBe(mismatch)
      const { signature: _, ...unsigned } = checkpoint
      expect(yield* refusal(unsigned)).toBe("signature: the checkpoint is not signed, and this agent requires a signature")
      expect((yield* Agent.resume(fixture.agent, checkpoint, Decision.approveAll()))._tag).toBe("Completed")
    }).pipe(Effect.provide(layer)))

  it.effect("Checkpoint.AnyVersion reads version 2 as version 3 (what readers of a store's records use); Checkpoint.Checkpoint reads version 3 only", () =>
    Effect.gen(function*() {
      const checkpoint = written()
      const migrated = yield* Schema.decodeUnknownEffect(Checkpoint.AnyVersion)(checkpoint)
      expect(migrated.version).toBe(3)
      expect(migrated.messages).toEqual(checkpoint.messages)
      expect(Schema.is(Schema.toEncoded(Checkpoint.Checkpoint))(checkpoint)).toBe(false)
      expect(yield* Schema.encodeEffect(Checkpoint.AnyVersion)(migrated)).toMatchObject({ version: 3, runId: "run-v2-memory" })
    }))
})
