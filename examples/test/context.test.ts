import { describe, expect, it } from "vitest"
import { expectInOrder, offlineBanner, run } from "./run.js"

describe("examples/context.ts", () => {
  it("summarize: one summary call once the limit is passed, the last messages kept with their tool call; trim: older groups left out; memory keeps everything and view reads back what was sent", async () => {
    const { lines } = await run("context.ts")
    expectInOrder(lines, [
      offlineBanner,
      "agent: summarize above 1,200 tokens, keep the last 2 messages (with their tool call)",
      "model call #4: sent 10 messages",
      "  summary call: the older messages, as one transcript",
      "  compacted: the first 10 entries replaced by the summary (about 1308 → 451 tokens)",
      "model call #5: sent 5 messages",
      "answer: Ten items moved, one per page; nothing else changed.",
      "memory: 18 entries kept (1 compaction entry); what the model was last sent, read back with ContextWindow.view:",
      "  [User] What changed in the quarterly report?",
      `  [Assistant] read_page({"page":6}) · read_page({"page":7})`,
      "the same question, this run trimming instead (RunOptions.context)",
      "  compacted: the first 4 entries left out (about 1308 → 1031 tokens)",
      "  compacted: the first 7 entries left out (about 1334 → 1031 tokens)",
      "memory: 19 entries kept (2 compaction entries); what the model was last sent, read back with ContextWindow.view:",
      "  [User] (The earlier part of this conversation was left out to fit the context window.)",
      "  [User] What changed in the quarterly report?",
      `  [Assistant] read_page({"page":4}) · read_page({"page":5})`
    ])
    expect(lines.find((line) => line.startsWith("  [User] Summary of the earlier part"))).toMatch(
      /^ {2}\[User\] Summary of the earlier part of this conversation, which it replaces: \/ The user asked what changed in the quarterly report\. Pages 0, 1, 2, 3, 4, 5 were read/
    )
    // one summary call in the first run, none in the second
    expect(lines.filter((line) => line === "  summary call: the older messages, as one transcript")).toHaveLength(1)
  }, 60_000)
})
