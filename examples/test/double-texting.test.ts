import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

describe("examples/double-texting.ts", () => {
  it("steers a second message into the running turn, rolls a cancelled turn back, then interrupts a turn on a cluster", () => {
    const output = execFileSync("pnpm", ["-s", "tsx", "examples/double-texting.ts"], {
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      encoding: "utf8",
      timeout: 60_000
    })
    expect(output.trim().split("\n")).toEqual([
      `second message: Steered (The input joined run "booking", which was running on conversation "steer": it was added before that run's next model call, and that run answers it)`,
      "first turn: Completed: Booked at Luigi's for four, 8 pm.",
      "  user: Book a table at Luigi's tonight",
      "  assistant: (tool calls)",
      "  tool: booked",
      "  user: For four people, please",
      "  assistant: Booked at Luigi's for four, 8 pm.",
      "  [search_everything] interrupted",
      `first turn: TurnInterrupted (Run "search" was cancelled: run "birth-year" took conversation "rollback" over (onConversationBusy: "rollback"); its messages were removed from the conversation)`,
      "second turn: Completed: Ada Lovelace was born in 1815.",
      "  user: Never mind: just her birth year",
      "  assistant: Ada Lovelace was born in 1815.",
      "  [search_everything] interrupted",
      `first reply: Failed (TurnInterrupted: Run "search" was cancelled: run "birth-year" took conversation "cluster" over (onConversationBusy: "interrupt"))`,
      "second reply: Completed: Ada Lovelace was born in 1815.",
      "  user: Search every archive for Ada",
      "  assistant: (tool calls)",
      "  tool: cancelled: the call was interrupted before it returned a result",
      "  user: Never mind: just her birth year",
      "  assistant: Ada Lovelace was born in 1815."
    ])
  }, 60_000)
})
