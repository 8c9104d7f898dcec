/**
 * The chat endpoint behind a real `useChat` page in headless Chromium (`launchChromium` of
 * @agentfx/testing): `test/page/app.tsx` — React, `@ai-sdk/react` 4 and `ai` 7 (npm's latest),
 * bundled with esbuild — served beside `Chat.routes` on 127.0.0.1. A person asks for a transfer,
 * sees the text and the approval request, approves, and the run completes; a second tab opened on
 * the paused chat gets the pause replayed, approves after the first, and is refused (useChat
 * shows the refusal's sentence); a page of another site whose name resolves to 127.0.0.1 (DNS
 * rebinding) is refused; a page reloaded while a tool runs reattaches and shows the whole
 * message as the run ends; a page reloaded while an approval waits shows the whole thread, and
 * approves.
 * Screenshots: packages/ui-stream/test-artifacts/ (git-ignored).
 */
import { launchChromium } from "@agentfx/testing/Chromium"
import { ScriptedChatModel } from "@agentfx/core"
import { Effect, type Layer } from "effect"
import { mkdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Chat } from "../src/index.js"
import { payments } from "./fixtures.js"
import { bundle, servePage } from "./pageFixtures.js"

const artifacts = fileURLToPath(new URL("../test-artifacts/", import.meta.url))
const html = `<!doctype html><html><head><meta charset="utf-8"><title>chat</title></head><body><div id="root"></div><script type="module" src="/app.js"></script></body></html>`

let browser: Browser
/** The page on each major of the AI SDK: `@ai-sdk/react` 4 and `ai` 7 (npm's latest), `@ai-sdk/react` 3 and `ai` 6 (installed as `@ai-sdk/react3`, `ai6`). */
let scripts: { readonly latest: string; readonly previous: string }
const majors = [{ name: "@ai-sdk/react 4, ai 7", page: "latest" }, { name: "@ai-sdk/react 3, ai 6", page: "previous" }] as const
beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true })
  scripts = {
    latest: await bundle("./page/app.tsx"),
    previous: await bundle("./page/app.tsx", { "@ai-sdk/react": "@ai-sdk/react3", ai: "ai6" })
  }
  // evil.example resolves to this machine, as a site's name does after DNS rebinding
  browser = await launchChromium({ args: ["--host-resolver-rules=MAP evil.example 127.0.0.1"] })
}, 60_000)
afterAll(async () => {
  await browser?.close()
})

const screenshot = (page: Page, name: string) => page.screenshot({ path: `${artifacts}${name}.png` })
const shot = screenshot

/** The page and the chat endpoint on one server, over fresh in-memory stores. */
const serve = (agent: ReturnType<typeof payments>["agent"], model: Layer.Layer<any>, script = scripts.latest) =>
  servePage(Chat.routes({ agent }), { html, path: "/app.js", script }, model)

/** A tab on the chat; errors of the page fail the test. */
const open = async (origin: string, chat: string) => {
  const page = await browser.newPage({ viewport: { width: 900, height: 600 } })
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(error.message))
  await page.goto(`${origin}/?chat=${chat}`)
  return { page, errors }
}

const say = async (page: Page, text: string) => {
  await page.fill("#input", text)
  await page.click("#send")
}

describe("the chat endpoint behind useChat in Chromium", () => {
  it.each(majors)("text and an approval request arrive; approving resumes the run to its end; a second tab's approval is refused ($name)", async ({ page }) => {
    const { agent, executed } = payments()
    const server = await serve(agent, ScriptedChatModel.layer([
      { chunks: ["I will ", "send it."], toolCalls: [{ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }] },
      { chunks: ["Sent 250 ", "to Ada."] }
    ], { index: "run" }), scripts[page])
    const shot = (tab: Page, name: string) => screenshot(tab, page === "latest" ? name : `${page}-${name}`)
    try {
      const ada = await open(server.origin, "c-browser")
      await say(ada.page, "Send 250 to Ada")
      await ada.page.waitForSelector(`.tool[data-call="t1"][data-state="approval-requested"]`)
      expect(await ada.page.textContent(`li[data-role="assistant"] .text`)).toBe("I will send it.")
      expect(await ada.page.textContent(`.tool[data-call="t1"] code`)).toBe(`transfer({"to":"Ada","amount":250})`)
      await shot(ada.page, "1-approval-requested")

      // a second tab on the paused chat: useChat's resume gets the pause replayed
      const bob = await open(server.origin, "c-browser")
      await bob.page.waitForSelector(`.tool[data-call="t1"][data-state="approval-requested"]`)

      await ada.page.click(`.tool[data-call="t1"] .approve`)
      await ada.page.waitForSelector(`.tool[data-call="t1"][data-state="output-available"]`)
      await ada.page.waitForFunction(() => document.querySelector("#status")?.textContent === "ready")
      expect(await ada.page.$$eval(`li[data-role="assistant"] .text`, (ps) => ps.map((p) => p.textContent))).toEqual(["I will send it.", "Sent 250 to Ada."])
      expect(await ada.page.textContent(`.tool[data-call="t1"] .output`)).toBe(`"sent 250 to Ada"`)
      expect(executed).toEqual(["Ada 250"])
      await shot(ada.page, "2-completed")

      await bob.page.click(`.tool[data-call="t1"] .approve`)
      await bob.page.waitForSelector("#error")
      // useChat's error is the refusal's sentence, not its JSON
      const runId = await ada.page.getAttribute(`li[data-role="assistant"]`, "data-id")
      expect(await bob.page.textContent("#error")).toBe(`Run ${runId} was already decided by local: it is completed now`)
      expect(executed).toEqual(["Ada 250"])
      await shot(bob.page, "3-second-approval-refused")
      expect([...ada.errors, ...bob.errors]).toEqual([])
    } finally {
      await server.close()
    }
  }, 60_000)

  it("a page of another site whose name resolves to 127.0.0.1 (DNS rebinding) cannot start a run: useChat shows the refusal's sentence, nothing runs", async () => {
    const { agent, executed } = payments()
    let asked = 0
    const server = await serve(agent, ScriptedChatModel.layer(() => Effect.sync(() => {
      asked += 1
      return ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Mallory", amount: 9000 } })
    })))
    try {
      const port = new URL(server.origin).port
      const page = await browser.newPage({ viewport: { width: 900, height: 600 } })
      const errors: Array<string> = []
      page.on("pageerror", (error) => errors.push(error.message))
      // the page's own origin is evil.example: its requests to /api/chat are same-origin, and reach the endpoint on 127.0.0.1
      await page.goto(`http://evil.example:${port}/?chat=c-rebound`)
      await say(page, "Send 9000 to Mallory")
      await page.waitForSelector(`#error, .tool[data-call="t1"]`)
      expect(await page.textContent("#error")).toBe(`Host "evil.example:${port}" is not a loopback name: open the chat at 127.0.0.1 or localhost`)
      expect(await page.$$eval(`li[data-role="assistant"]`, (lis) => lis.length)).toBe(0)
      await shot(page, "6-rebinding-refused")
      expect([asked, executed]).toEqual([0, []])
      // the same page on this machine's name starts the run
      const local = await open(server.origin, "c-rebound")
      await say(local.page, "Send 9000 to Mallory")
      await local.page.waitForSelector(`.tool[data-call="t1"][data-state="approval-requested"]`)
      expect(asked).toBe(1)
      expect([...errors, ...local.errors]).toEqual([])
    } finally {
      await server.close()
    }
  }, 60_000)

  it.each(majors)("a page reloaded while an approval waits shows the whole thread — the turns before it too — and its approval resumes the run once ($name)", async ({ page }) => {
    const { agent, executed } = payments()
    const server = await serve(agent, ScriptedChatModel.layer([
      { chunks: ["Let me ", "look."], toolCalls: [{ id: "b1", name: "balance", args: {} }] },
      { chunks: ["You have ", "1000."] },
      { chunks: ["I will ", "send it."], toolCalls: [{ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }] },
      { chunks: ["Sent 250 ", "to Ada."] }
    ]), scripts[page])
    const shot = (tab: Page, name: string) => screenshot(tab, page === "latest" ? name : `${page}-${name}`)
    try {
      const tab = await open(server.origin, "c-reload-thread")
      await say(tab.page, "What is my balance?")
      await tab.page.waitForSelector(`.tool[data-call="b1"][data-state="output-available"]`)
      await tab.page.waitForFunction(() => document.querySelector("#status")?.textContent === "ready")
      await say(tab.page, "Send 250 to Ada")
      await tab.page.waitForSelector(`.tool[data-call="t1"][data-state="approval-requested"]`)
      const before = await tab.page.$$eval("li", (lis) => lis.map((li) => `${li.dataset["role"]}: ${li.textContent}`))

      await tab.page.reload() // the page goes; its thread is the server's
      await tab.page.waitForSelector(`.tool[data-call="t1"][data-state="approval-requested"]`)
      expect(await tab.page.$$eval("li", (lis) => lis.map((li) => `${li.dataset["role"]}: ${li.textContent}`))).toEqual(before)
      expect(before).toEqual([
        "user: What is my balance?",
        "assistant: Let me look.balance({})1000You have 1000.",
        "user: Send 250 to Ada",
        `assistant: I will send it.transfer({"to":"Ada","amount":250})ApproveDeny`
      ])
      await shot(tab.page, "7-reloaded-thread")

      await tab.page.click(`.tool[data-call="t1"] .approve`)
      await tab.page.waitForSelector(`.tool[data-call="t1"][data-state="output-available"]`)
      await tab.page.waitForFunction(() => document.querySelector("#status")?.textContent === "ready")
      expect(await tab.page.$$eval(`li[data-role="assistant"] .text`, (ps) => ps.map((p) => p.textContent))).toEqual([
        "Let me look.",
        "You have 1000.",
        "I will send it.",
        "Sent 250 to Ada."
      ])
      expect(executed).toEqual(["Ada 250"])
      expect(await tab.page.$$eval("li", (lis) => lis.length)).toBe(4)
      await shot(tab.page, "8-reloaded-approved")
      expect(tab.errors).toEqual([])
    } finally {
      await server.close()
    }
  }, 60_000)

  it("a page reloaded while a tool runs reattaches: the whole message, then its end, live", async () => {
    const { agent, release } = payments()
    const server = await serve(agent, ScriptedChatModel.layer([
      { chunks: ["Let me ", "look."], toolCalls: [{ id: "r1", name: "slow_report", args: {} }] },
      { chunks: ["The report ", "is ready."] }
    ], { index: "run" }))
    try {
      const tab = await open(server.origin, "c-reload")
      await say(tab.page, "Report please")
      await tab.page.waitForSelector(`.tool[data-call="r1"][data-state="input-available"]`)
      await tab.page.reload() // the connection goes; the run goes on
      await tab.page.waitForSelector(`.tool[data-call="r1"][data-state="input-available"]`)
      expect(await tab.page.textContent(`li[data-role="assistant"] .text`)).toBe("Let me look.")
      await shot(tab.page, "4-reattached")
      release()
      await tab.page.waitForSelector(`.tool[data-call="r1"][data-state="output-available"]`)
      await tab.page.waitForFunction(() => document.querySelector("#status")?.textContent === "ready")
      expect(await tab.page.$$eval(`li[data-role="assistant"] .text`, (ps) => ps.map((p) => p.textContent))).toEqual(["Let me look.", "The report is ready."])
      // the thread loaded (the user's message too), and the replay continued its last message: nothing twice
      expect(await tab.page.$$eval("li", (lis) => lis.map((li) => li.dataset["role"]))).toEqual(["user", "assistant"])
      await shot(tab.page, "5-reattached-completed")
      expect(tab.errors).toEqual([])
    } finally {
      await server.close()
    }
  }, 60_000)
})
