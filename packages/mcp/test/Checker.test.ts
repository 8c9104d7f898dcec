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

  it.live("a schema of JSON Schema 2020-12 (MCP's default dialect) is checked as 2020-12: prefixItems with items: false takes a pair (draft-07 refused every array)", () =>
    Effect.gen(function*() {
      const checker = yield* Checker.make()
      const pair = {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], items: false } },
        required: ["point"]
      }
      const schema = yield* checker.compile(pair, "its input schema")
      expect(yield* checker.check(schema, { point: [3, 4] })).toEqual({ valid: true, errorMessage: undefined })
      expect(yield* checker.check(schema, { point: ["x", 4] })).toEqual({ valid: false, errorMessage: "data/point/0 must be number" })
      expect((yield* checker.check(schema, { point: [3, 4, 5] })).valid).toBe(false)
      // 2019-09 and draft-07 (no $schema) still check as before
      const draft7 = yield* checker.compile({ type: "object", properties: { tags: { type: "array", items: { type: "string" } } } }, "its input schema")
      expect(yield* checker.check(draft7, { tags: ["a", 1] })).toEqual({ valid: false, errorMessage: "data/tags/1 must be string" })
      const draft2019 = yield* checker.compile({ $schema: "https://json-schema.org/draft/2019-09/schema", type: "object", properties: { n: { type: "integer" } } }, "its input schema")
      expect(yield* checker.check(draft2019, { n: 1.5 })).toEqual({ valid: false, errorMessage: "data/n must be integer" })
    }).pipe(Effect.scoped), 30_000)
})
