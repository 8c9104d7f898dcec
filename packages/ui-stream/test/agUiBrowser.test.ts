/**
 * The AG-UI endpoint behind a real page in headless Chromium (`launchChromium` of
 * @agentfx/testing): `test/page/agui.ts` — `HttpAgent` of `@ag-ui/client`, bundled with esbuild
 * — served beside `AgUi.routes` on 127.0.0.1. A person asks for a transfer, sees the text and
 * the interrupt, approves, and the run completes, its transfer made once; a second tab opened
 * on the paused thread gets the run replayed with its interrupt, answers after the first, and
 * is refused (the page shows the refusal's sentence).
 * Screenshots: packages/ui-stream/test-artifacts/ (git-ignored).
 */
import { launchChromium } from "@agentfx/testing/Chromium"
import { ScriptedChatModel } from "@agentfx/core"
import type { Layer } from "effect"
import { mkdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AgUi } from "../src/index.js"
import { payments } from "./fixtures.js"
import { bundle, servePage } from "./pageFixtures.js"

const artifacts = fileURLToPath(new URL("../test-artifacts/", import.meta.url))
const html = `<!doctype html><html><head><meta charset="utf-8"><title>agent</title></head><body><script type="module" src="/agui.js"></script></body></html>`

let browser: Browser
let script: string
beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true })
  script = await bundle("./page/agui.ts")
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
})

const shot = (page: Page, name: string) => page.screenshot({ path: `${artifacts}agui-${name}.png` })

/** The page and the AG-UI endpoint on one server, over fresh in-memory stores. */
const serve = (agent: ReturnType<typeof payments>["agent"], model: Layer.Layer<any>) =>
  servePage(AgUi.routes({ agent }), { html, path: "/agui.js", script }, model)

/** A tab on the thread, once it connected; errors of the page fail the test. */
const open = async (origin: string, thread: string) => {
  const page = await browser.newPage({ viewport: { width: 900, height: 600 } })
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(error.message))
  await page.goto(`${origin}/?thread=${thread}`)
  await page.waitForFunction(() => document.querySelector("#status")?.textContent === "ready")
  return { page, errors }
}

describe("the AG-UI endpoint behind an HttpAgent page in Chromium", () => {
  it("text and an interrupt arrive; approving resumes the run to its end, the transfer made once; a second tab's approval is refused", async () => {
    const { agent, executed } = payments()
    const server = await serve(agent, ScriptedChatModel.layer([
      { chunks: ["I will ", "send it."], toolCalls: [{ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } }] },
      { chunks: ["Sent 250 ", "to Ada."] }
    ], { index: "run" }))
    try {
      const ada = await open(server.origin, "t-browser")
      await ada.page.fill("#input", "Send 250 to Ada")
      await ada.page.click("#send")
      await ada.page.waitForSelector(`.tool[data-call="t1"][data-state="interrupted"]`)
      expect(await ada.page.textContent(`li[data-role="assistant"] .text`)).toBe("I will send it.")
      expect(await ada.page.textContent(`.tool[data-call="t1"] code`)).toBe(`transfer({"to":"Ada","amount":250})`)
      expect(await ada.page.textContent(`.tool[data-call="t1"] .why`)).toBe("the needsApproval rule of transfer asked for approval of these arguments")
      await shot(ada.page, "1-interrupted")

      // a second tab on the paused thread: the run replayed, its interrupt answerable there
      const bob = await open(server.origin, "t-browser")
      await bob.page.waitForSelector(`.tool[data-call="t1"][data-state="interrupted"]`)

      await ada.page.click(`.tool[data-call="t1"] .approve`)
      await ada.page.waitForSelector(`.tool[data-call="t1"][data-state="done"]`)
      await ada.page.waitForFunction(() => document.querySelector("#status")?.textContent === "ready")
      expect(await ada.page.$$eval(`li[data-role="assistant"] .text`, (ps) => ps.map((p) => p.textContent))).toEqual(["I will send it.", "Sent 250 to Ada."])
      expect(await ada.page.textContent(`.result[data-call="t1"]`)).toBe("sent 250 to Ada")
      expect(executed).toEqual(["Ada 250"])
      await shot(ada.page, "2-completed")

      await bob.page.click(`.tool[data-call="t1"] .approve`)
      await bob.page.waitForSelector("#error")
      const runId = (await ada.page.getAttribute(`li[data-role="assistant"]`, "data-id"))!.replace(/-1$/, "")
      expect(await bob.page.textContent("#error")).toBe(`HTTP 409: Run ${runId} was already decided by local: it is completed now`)
      expect(executed).toEqual(["Ada 250"])
      await shot(bob.page, "3-second-approval-refused")
      expect([...ada.errors, ...bob.errors]).toEqual([])
    } finally {
      await server.close()
    }
  }, 60_000)
})
