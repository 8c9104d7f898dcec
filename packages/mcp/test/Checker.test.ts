import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Checker from "../src/internal/checker.js"

describe("the checker thread (internal/checker.ts)", () => {
  it.live("a thread that cannot start: ready fails saying why (McpToolkit.make turns it into ListTools), and so does every request", () =>
    Effect.gen(function*() {
      const checker = yield* Checker.make(new URL("./fixtures/nowhere.mjs", import.meta.url))
      const why = yield* Effect.flip(checker.ready)
      expect(why).toMatch(/^the checker thread failed: Cannot find module '.*\/fixtures\/nowhere\.mjs'/)
      const compiled = yield* Effect.flip(checker.compile({ type: "object" }, "its input schema"))
      expect(compiled).toMatch(/^compiling its input schema could not run: the checker thread failed: Cannot find module/)
    }).pipe(Effect.scoped), 30_000)

  it.live("a thread that starts: ready succeeds; a schema compiles and checks", () =>
    Effect.gen(function*() {
      const checker = yield* Checker.make()
      yield* checker.ready
      const schema = yield* checker.compile({ type: "object", properties: { n: { type: "number" } } }, "its input schema")
      expect(yield* checker.check(schema, { n: 1 })).toEqual({ valid: true, errorMessage: undefined })
      expect(yield* checker.check(schema, { n: "1" })).toEqual({ valid: false, errorMessage: "data/n must be number" })
    }).pipe(Effect.scoped), 30_000)
})
