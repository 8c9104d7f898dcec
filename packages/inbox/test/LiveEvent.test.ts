import { AgentEvent, Part } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { LiveEvent } from "../src/index.js"

describe("LiveEvent", () => {
  it("a run's and a tool's files are summed up — media type, name, size or URL — never sent as bytes", () => {
    const chart = Part.image({ name: "chart.png", data: Buffer.alloc(2048) })
    const linked = Part.file({ mediaType: "application/pdf", url: "https://example.com/a.pdf" })
    const meta = { runId: "r1", conversationId: "c1", timestamp: 0 }
    const started = LiveEvent.fromAgentEvent(AgentEvent.RunStarted({ ...meta, agent: "a", input: "look", files: [chart, linked] }))
    const succeeded = LiveEvent.fromAgentEvent(AgentEvent.ToolSucceeded({ ...meta, callId: "t1", toolName: "draw", value: "done", files: [chart], durationMillis: 3 }))
    expect(started).toEqual({
      _tag: "RunStarted",
      ...meta,
      agent: "a",
      input: "look",
      files: [{ mediaType: "image/*", name: "chart.png", bytes: 2048 }, { mediaType: "application/pdf", url: "https://example.com/a.pdf" }]
    })
    expect(succeeded).toMatchObject({ files: [{ mediaType: "image/*", name: "chart.png", bytes: 2048 }] })
    expect(JSON.stringify(Schema.encodeSync(LiveEvent.LiveEvent)(succeeded))).not.toContain("AAAA")
    expect(LiveEvent.fromAgentEvent(AgentEvent.RunStarted({ ...meta, agent: "a", input: "look" }))).not.toHaveProperty("files")
  })
})
