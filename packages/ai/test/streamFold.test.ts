import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { StreamFold, usageOf } from "../src/internal/streamFold.js"

const fold = () =>
  new StreamFold({ provider: "P", last: "the_end", usage: (counts) => usageOf(counts.input, counts.output) })

describe("StreamFold", () => {
  it("text and a refusal's text in order; a refusal with text decides the finish reason, one without does not", () => {
    const refused = fold()
    refused.addText("Well, ")
    refused.addRefusal("no.")
    refused.finish("stop", "stop")
    const empty = fold()
    empty.addText("Sunny.")
    empty.addRefusal("")
    empty.finish("stop", "stop")
    expect([refused.response(), empty.response()].map(Result.map((r) => [r.text, r.finishReason, r.providerFinishReasons]))).toEqual([
      Result.succeed(["Well, no.", "refusal", ["stop"]]),
      Result.succeed(["Sunny.", "stop", ["stop"]])
    ])
  })

  it("each usage field is its latest count; a count that is no count, or a field never sent, leaves the last good one or 0", () => {
    const answer = fold()
    answer.addUsage({ input: 30, output: 1 })
    answer.addUsage({ output: 7, input: -1 })
    answer.addUsage({ output: Number.POSITIVE_INFINITY, note: "x" })
    answer.end()
    expect(Result.map(answer.response(), (r) => r.usage)).toEqual(Result.succeed({ inputTokens: 30, outputTokens: 7, totalTokens: 37 }))
  })

  it("calls in the order they began, arguments from their text (parsed; not JSON: the raw string) or else their value", () => {
    const answer = fold()
    const first = answer.addCall({ id: "a", name: "f", args: undefined, input: { deep: [1] } })
    answer.addCall({ id: "b", name: "g", args: "{\"x\":", input: {} }).args += "1}"
    answer.addCall({ id: "c", name: "h", args: "not json", input: {} })
    first.name = "f2"
    answer.end()
    expect(Result.map(answer.response(), (r) => r.toolCalls)).toEqual(Result.succeed([
      { id: "a", name: "f2", args: { deep: [1] } },
      { id: "b", name: "g", args: { x: 1 } },
      { id: "c", name: "h", args: "not json" }
    ]))
  })

  it("the latest finish reason wins; with neither a finish reason nor the last event the stream was cut", () => {
    const cut = fold()
    cut.addText("It is")
    const stopped = fold()
    stopped.finish("length", "max_tokens")
    stopped.finish("tool-calls", undefined)
    const ended = fold()
    ended.end()
    expect(Result.mapError(cut.response(), (e) => [e.reason, e.message])).toEqual(
      Result.fail(["invalid-response", "P's stream ended before the answer did (no the_end): the connection was cut"])
    )
    expect([stopped.response(), ended.response()].map(Result.map((r) => [r.finishReason, r.providerFinishReasons]))).toEqual([
      Result.succeed(["tool-calls", undefined]),
      Result.succeed(["unknown", undefined])
    ])
  })
})
