import { ChatModel, Mask } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { maskError } from "../src/internal/mask.js"

describe("maskError", () => {
  it("masks, then cuts the message at 1,000 characters: a key across the cut is hidden whole, never in part", () => {
    const key = "sk-proj-abcdef123456"
    const error = new ChatModel.ModelError({ reason: "invalid-request", status: 400, message: `${"x".repeat(990)}${key} and more` })
    const masked = maskError(Mask.make([key]))(error)
    expect([masked.message, masked.reason, masked.status]).toEqual([`${"x".repeat(990)}*** and mo…`, "invalid-request", 400])
    const short = new ChatModel.ModelError({ reason: "other", message: "nothing to hide" })
    expect(maskError(Mask.make([key]))(short)).toBe(short)
  })
})
