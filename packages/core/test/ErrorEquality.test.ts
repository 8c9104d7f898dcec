import { describe, expect, it } from "@effect/vitest"
import { ToolError } from "../src/index.js"

describe("error equality in tests (vitest.setup.ts)", () => {
  it("two tagged errors whose messages differ are not equal, alone or inside a value: a test that pins a message pins it", () => {
    expect(ToolError.semantic("one")).toEqual(ToolError.semantic("one"))
    expect(ToolError.semantic("one")).not.toEqual(ToolError.semantic("two"))
    expect({ results: [ToolError.semantic("one")] }).not.toEqual({ results: [ToolError.semantic("two")] })
  })
})
