import { afterEach, describe, expect, it } from "vitest"
import { expectInOrder, normalize, offlineBanner } from "./run.js"
import type { Key, Terminal } from "@agentfx/testing/Terminal"
import { openExample } from "./terminal.js"

let terminal: Terminal | undefined
const open = (script: string) => (terminal = openExample(script))
afterEach(async () => {
  await terminal?.close()
  terminal = undefined
})

/** The choices of approval.ts's select prompt, from the first (selected when it opens). */
const choose = async (tty: Terminal, choice: "approve" | "edit" | "reject" | "reply") => {
  const downs = ["approve", "edit", "reject", "reply"].indexOf(choice)
  await tty.press(...Array<Key>(downs).fill("Down"), "Enter")
}

const answer = async (tty: Terminal, prompt: string, text: string) => {
  await tty.waitFor(prompt)
  await tty.type(text)
  await tty.press("Enter")
}

/** Answers the edit prompt, which opens on the call's arguments as editable text: erases them, types `text`, presses Enter. */
const edit = async (tty: Terminal, shown: string, text: string) => {
  await tty.waitFor(`new arguments (JSON) › ${shown}`)
  await tty.press(...Array<Key>(shown.length).fill("Backspace"))
  await tty.type(text)
  await tty.press("Enter")
}

const count = (lines: ReadonlyArray<string>, part: string) => lines.filter((line) => line.includes(part)).length

describe("examples in a terminal", () => {
  it("approval.ts: edit (JSON asked again until it parses), reject with a reason, reply instead; exits when done", async () => {
    const tty = open("approval.ts")
    await tty.waitFor("? send_email(")
    await choose(tty, "edit")
    await edit(tty, `{"to":"team@example.com","body":"Release is out"}`, `{"to": `)
    await tty.waitFor("that is not JSON")
    await tty.press(...Array<Key>(`{"to": `.length).fill("Backspace"))
    await tty.type(`{"to":"ada@example.com","body":"Release 1.2 is out"}`)
    await tty.press("Enter")
    await tty.waitFor("? delete_file(")
    await choose(tty, "reject")
    await answer(tty, "reason (optional)", "keep the logs for the audit")
    await tty.waitFor("? charge_card(")
    await choose(tty, "reply")
    await answer(tty, "reply for the model", "The card was already charged yesterday.")
    expect(await tty.exited()).toBe(0)
    const lines = normalize(await tty.screen())
    expectInOrder(lines, [
      offlineBanner,
      "paused (approval):",
      `  call_1 send_email({"to":"team@example.com","body":"Release is out"})`,
      `  call_2 delete_file({"path":"/var/log/app.log"})`,
      `  call_3 charge_card({"amount":120})`,
      "  tool send_email [call_1] started",
      `  result call_1 send_email: sent to ada@example.com: "Release 1.2 is out"`,
      "  result call_2 delete_file: ERROR rejected: keep the logs for the audit",
      "  result call_3 charge_card: The card was already charged yesterday.",
      "completed: 3 tool call(s), 0 tokens",
      `answer: send_email: sent to ada@example.com: "Release 1.2 is out"`,
      "delete_file: not done — rejected: keep the logs for the audit",
      "charge_card: The card was already charged yesterday."
    ])
    expect(count(lines, "tool delete_file") + count(lines, "tool charge_card")).toBe(0)
  }, 120_000)

  it("approval.ts: edited arguments the tool refuses are shown and only that call is asked again; the other decisions stand", async () => {
    const tty = open("approval.ts")
    await tty.waitFor("? send_email(")
    await choose(tty, "approve")
    await tty.waitFor("? delete_file(")
    await choose(tty, "edit")
    await edit(tty, `{"path":"/var/log/app.log"}`, `{"path": 5}`)
    await tty.waitFor("? charge_card(")
    await choose(tty, "approve")
    const refused = `  call_2: Invalid arguments for tool "delete_file": path: Expected string, got 5`
    await tty.waitFor(refused)
    await tty.waitFor(/call_2: Invalid arguments[^]*\? delete_file\(/)
    await choose(tty, "reject")
    await answer(tty, "reason (optional)", "")
    expect(await tty.exited()).toBe(0)
    const lines = normalize(await tty.screen())
    const after = lines.slice(lines.indexOf(refused))
    expect(count(after, "send_email({") + count(after, "charge_card({")).toBe(0) // not asked again
    expectInOrder(lines, [
      refused,
      `  result call_1 send_email: sent to team@example.com: "Release is out"`,
      "  result call_2 delete_file: ERROR rejected",
      "  result call_3 charge_card: charged €120",
      "completed: 3 tool call(s), 0 tokens"
    ])
    expect(count(lines, "tool send_email [call_1] started")).toBe(1)
  }, 120_000)

  it("approval.ts: Ctrl-C at a prompt quits at once, as an interruption (exit code 130); nothing is decided and no tool runs", async () => {
    const tty = open("approval.ts")
    await tty.waitFor("? send_email(")
    await tty.press("Ctrl-C")
    expect(await tty.exited()).toBe(130)
    const lines = normalize(await tty.screen())
    expect(lines).toContain("paused (approval):")
    expect([count(lines, "tool "), count(lines, "completed:"), count(lines, "ERROR")]).toEqual([0, 0, 0])
  }, 120_000)

  it("demo.ts: Ctrl-C while tools run interrupts the run and its tools", async () => {
    const tty = open("demo.ts")
    // the forecast runs until its 500 ms timeout: Ctrl-C comes first
    await tty.waitFor("tool get_forecast [call_f1] started")
    await tty.press("Ctrl-C")
    await tty.exited()
    const lines = normalize(await tty.screen())
    expect(lines).toContain("  tool get_forecast [call_f1] interrupted after N ms")
    expect([count(lines, "result call_f1"), count(lines, "model call #2"), count(lines, "completed:")]).toEqual([0, 0, 0])
  }, 120_000)
})
