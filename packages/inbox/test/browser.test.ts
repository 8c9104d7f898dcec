/**
 * The inbox in a real browser: headless Chromium (`launchChromium` of @agentfx/testing, the
 * browser of @sparticuz/chromium) driven by playwright-core. Two people open one paused run,
 * which says why it waits; the first edits an argument to an invalid value (the page refuses
 * it inline, nothing is sent; the change is shown against the model's arguments), then to one
 * only the server refuses (its error is shown inline), fixes it and approves by keyboard: the
 * panel's heading says who decided, what was decided replaces the form (the change, as a
 * diff), and the run completes in the live events, and in the heading; the second then
 * decides the same run and is told who decided, and its panel is marked decided. By keyboard:
 * a refresh keeps the focus on the run's button; one call is rejected with a reason and
 * another answered in its place. A tab left open on a pause that someone decided (and the run
 * paused again) is refused, and names who decided; what the new pause asks (a hostile
 * argument) is shown as text.
 * Screenshots of each state: packages/inbox/test-artifacts/ (git-ignored).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { mkdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"
import { launchChromium } from "@agentfx/testing/Chromium"
import { Agent, type Message, Part, ScriptedChatModel } from "@agentfx/core"
import { bank, model, request, serve } from "./fixtures.js"

const artifacts = fileURLToPath(new URL("../test-artifacts/", import.meta.url))

let browser: Browser
beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true })
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
})

const shot = (page: Page, name: string) => page.screenshot({ path: `${artifacts}${name}.png` })

/** The changes shown under a call's edited arguments, one line each. */
const changes = (page: Page, callId: string) =>
  page.$$eval(`[data-changes-for="${callId}"]:not([hidden]) li`, (items) => items.map((item) => item.textContent))

/** A person: their own browser context (storage, cookies), the inbox page, their name typed in. */
const person = async (origin: string, name: string) => {
  const context = await browser.newContext({ viewport: { width: 1200, height: 760 } })
  const page = await context.newPage()
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(error.message))
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text())
  })
  await page.goto(`${origin}/inbox`)
  await page.fill("#reviewer", name)
  await page.press("#reviewer", "Tab") // commits the name (change event)
  await page.waitForSelector("#runs button")
  return { page, errors }
}

describe("the inbox in Chromium", () => {
  it("edit to an invalid value (inline error), to one the server refuses (inline), fix, approve, watch it complete; a second person is told who decided", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const { agent, executed } = bank()
      const inbox = await Effect.runPromise(Scope.provide(serve([agent]), scope))
      const runId = await Effect.runPromise(inbox.pause(agent, "pay Ada 250", "c-browser"))

      const ada = await person(inbox.origin, "Ada")
      const bob = await person(inbox.origin, "Bob")
      expect(await ada.page.textContent("#runs")).toContain("bank · approval")
      await shot(ada.page, "1-paused-runs")

      // Ada opens the run by keyboard
      await ada.page.focus(`#runs button[data-run-id="${runId}"]`)
      await ada.page.keyboard.press("Enter")
      await ada.page.waitForSelector(`fieldset[data-call-id="t1"]`)
      expect(await ada.page.textContent("fieldset.call .description")).toBe("Sends money to a person")
      expect(await ada.page.textContent(`[data-why-for="t1"]`)).toBe("Why it waits: transfer needs approval for every call (needsApproval: true)")
      expect(await ada.page.$$eval(".facts dt, .facts dd", (items) => items.slice(0, 2).map((item) => item.textContent))).toEqual([
        "Why it waits",
        "its gate asked a person about 1 call: nothing of the batch runs before they are decided"
      ])
      expect(JSON.parse(await ada.page.inputValue(`[data-args-for="t1"]`))).toEqual({ to: "Ada", amount: 250 })
      expect(await ada.page.isHidden(`[data-changes-for="t1"]`)).toBe(true)
      await shot(ada.page, "2-run")
      await bob.page.click(`#runs button[data-run-id="${runId}"]`)
      await bob.page.waitForSelector(`fieldset[data-call-id="t1"]`)

      // an invalid amount: the page says so at once, and refuses to send it
      await ada.page.fill(`[data-args-for="t1"]`, `{ "to": "Ada", "amount": -5 }`)
      expect(await ada.page.textContent(`[data-error-for="t1"]`)).toBe("amount: must be greater than 0")
      expect(await ada.page.getAttribute(`[data-args-for="t1"]`, "aria-invalid")).toBe("true")
      expect(await changes(ada.page, "t1")).toEqual(["amount: 250 → -5"])
      await ada.page.focus("#submit")
      await ada.page.keyboard.press("Enter")
      expect(await ada.page.textContent("#status")).toBe("Fix the arguments marked in red before deciding.")
      expect(await ada.page.evaluate(() => document.activeElement?.getAttribute("data-args-for"))).toBe("t1")
      await shot(ada.page, "3-invalid-argument")
      expect((await Effect.runPromise(request(`${inbox.origin}/inbox/api/runs`))).body.map((r: any) => r.runId)).toEqual([runId])

      // a value JSON Schema cannot catch: the server refuses it, and the page shows why, on the call
      await ada.page.fill(`[data-args-for="t1"]`, `{ "to": "Mallory", "amount": 300 }`)
      expect(await ada.page.textContent(`[data-error-for="t1"]`)).toBe("")
      expect(await changes(ada.page, "t1")).toEqual([`to: "Ada" → "Mallory"`, "amount: 250 → 300"])
      await ada.page.click("#submit")
      await ada.page.waitForFunction(() => document.querySelector(`[data-error-for="t1"]`)?.textContent?.startsWith("Refused by the server"))
      expect(await ada.page.textContent(`[data-error-for="t1"]`)).toContain("transfers to Mallory are blocked")
      await shot(ada.page, "4-refused-by-the-server")

      // fixed and approved: the heading says who decided, what was decided replaces the form, the run completes in the live events
      await ada.page.fill(`[data-args-for="t1"]`, `{ "to": "Ada", "amount": 300 }`)
      expect(await changes(ada.page, "t1")).toEqual(["amount: 250 → 300"])
      await shot(ada.page, "4b-edited-arguments")
      await ada.page.focus("#submit")
      await ada.page.keyboard.press("Enter")
      await ada.page.waitForSelector("#decided")
      expect(await ada.page.$$eval("#decided [data-decided-for]", (items) => items.map((item) => item.textContent))).toEqual([
        "transfer · t1 — approved with changes:amount: 250 → 300"
      ])
      expect(await ada.page.$$eval("#decided del, #decided ins", (items) => items.map((item) => `${item.tagName} ${item.textContent}`))).toEqual([
        "DEL 250",
        "INS 300"
      ])
      expect(await ada.page.$("#decision")).toBeNull()
      expect(await ada.page.textContent(".facts dt")).toBe("Why it waited")
      await ada.page.waitForSelector("#events li.final")
      const lines = await ada.page.$$eval("#events li", (items) => items.map((item) => item.textContent))
      expect(lines).toEqual([
        "resumed: ByCall by Ada",
        `→ transfer({"to":"Ada","amount":300})`,
        `✓ transfer: "sent 300 to Ada"`,
        "model call #2",
        `model answered: Done: "sent 300 to Ada"`,
        `completed: Done: "sent 300 to Ada"`
      ])
      expect(await ada.page.textContent("#status")).toBe(`completed: Done: "sent 300 to Ada"`)
      expect(await ada.page.textContent("#run-heading")).toMatch(/^bank — decided by Ada \(at .+\) · completed$/)
      await ada.page.waitForSelector("#empty:not([hidden])")
      await shot(ada.page, "5-completed")

      // Bob, still looking at the run, approves it too: told who decided, nothing runs again
      await bob.page.click("#approve-all")
      await bob.page.waitForFunction(() => document.querySelector("#status")?.textContent?.includes("already decided"))
      expect(await bob.page.textContent("#status")).toMatch(
        new RegExp(`^Run ${runId} was already decided by Ada: it is completed now \\(at .+\\)$`)
      )
      // the run's panel no longer waits for approval: it says who decided and when, and its controls are off
      expect(await bob.page.textContent("#run-heading")).toMatch(/^bank — decided by Ada \(at .+\)$/)
      const controls = await bob.page.$$eval("#decision button, #decision input, #decision textarea", (elements) =>
        elements.map((element) => (element as HTMLButtonElement).disabled))
      expect(controls.length).toBeGreaterThan(0)
      expect(controls.filter((disabled) => !disabled)).toEqual([])
      expect(await bob.page.evaluate(() => document.activeElement?.id)).toBe("run-heading")
      expect(await bob.page.textContent(".facts dt")).toBe("Why it waited")
      await shot(bob.page, "6-already-decided")
      expect(executed).toEqual(["t1 Ada 300"])
      expect([...ada.errors, ...bob.errors]).toEqual([
        "Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)",
        "Failed to load resource: the server responded with a status of 409 (Conflict)"
      ])
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 60_000)

  it("by keyboard: a refresh keeps the focus on the run's button; one call rejected with a reason, the other answered in its place", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const { agent, executed } = bank()
      const twoCalls = ScriptedChatModel.layer((request) => {
        if (request.messages.at(-1)?._tag === "User") {
          return ScriptedChatModel.toolCalls(
            { id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } },
            { id: "t2", name: "transfer", args: { to: "Bob", amount: 99 } }
          )
        }
        const results = request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult")
        return ScriptedChatModel.text(results.map((r) => `${r.callId}${r.isError ? " (error)" : ""}: ${JSON.stringify(r.content)}`).join("; "))
      })
      const inbox = await Effect.runPromise(Scope.provide(serve([agent], { model: twoCalls }), scope))
      const paused = await Effect.runPromise(inbox.inStores(Agent.run(agent, { input: "pay Ada and Bob", conversationId: "c-two" }).pipe(Effect.provide(twoCalls))))
      if (paused._tag !== "Paused") throw new Error("expected a pause")
      const runId = paused.runId
      // another run, listed first: the focused button is not the first one
      await Effect.runPromise(inbox.pause(agent, "pay Ada 10", "c-other"))

      const ada = await person(inbox.origin, "Ada")
      await ada.page.focus(`#runs button[data-run-id="${runId}"]`)
      await ada.page.evaluate(() => void ((window as any).listed = document.querySelector("#runs button")))
      await ada.page.keyboard.press("r")
      await ada.page.waitForFunction(() => document.querySelector("#runs button") !== (window as any).listed)
      expect(await ada.page.$$eval("#runs button", (buttons) => buttons.length)).toBe(2)
      expect(await ada.page.evaluate(() => document.activeElement?.getAttribute("data-run-id"))).toBe(runId)

      // opened by Enter; t1 rejected (arrow keys in its radio group), with a reason; t2 answered in its place
      await ada.page.keyboard.press("Enter")
      await ada.page.waitForSelector(`fieldset[data-call-id="t2"]`)
      await ada.page.focus("#choice-0-approve")
      await ada.page.keyboard.press("ArrowRight")
      await ada.page.keyboard.press("Tab")
      expect(await ada.page.evaluate(() => document.activeElement?.id)).toBe("reject-0")
      await ada.page.keyboard.type("not to Ada today")
      await ada.page.focus("#choice-1-approve")
      await ada.page.keyboard.press("ArrowRight")
      await ada.page.keyboard.press("ArrowRight")
      await ada.page.keyboard.press("Tab")
      expect(await ada.page.evaluate(() => document.activeElement?.id)).toBe("reply-1")
      await ada.page.keyboard.type(`{ "status": "queued" }`)
      await shot(ada.page, "7-reject-and-reply")
      await ada.page.focus("#submit")
      await ada.page.keyboard.press("Enter")
      await ada.page.waitForSelector("#events li.final")
      expect(await ada.page.$$eval("#decided [data-decided-for]", (items) => items.map((item) => item.textContent))).toEqual([
        "transfer · t1 — rejected: not to Ada today",
        `transfer · t2 — answered in its place: {"status":"queued"}`
      ])
      expect(await ada.page.textContent("#run-heading")).toMatch(/^bank — decided by Ada \(at .+\) · completed$/)
      const answer = `t1 (error): "rejected: not to Ada today"; t2: {"status":"queued"}`
      expect(await ada.page.$$eval("#events li", (items) => items.map((item) => item.textContent))).toEqual([
        "resumed: ByCall by Ada",
        "model call #2",
        `model answered: ${answer}`,
        `completed: ${answer}`
      ])
      await shot(ada.page, "8-rejected-and-replied")
      expect(executed).toEqual([])
      expect(ada.errors).toEqual([])
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 60_000)
  it("a tab left open on a pause that was decided and paused again: its \"approve all\" is refused, naming who decided; what the new pause asks shows as text", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const { agent, executed } = bank()
      const hostile = `<img src=x onerror="window.pwned=1">`
      const twice = ScriptedChatModel.layer((request) => {
        const results = request.messages.filter((m) => m._tag === "ToolResult").length
        if (results === 0) return ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Ada", amount: 250 } })
        if (results === 1) return ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: hostile, amount: 9000 } })
        return ScriptedChatModel.text("Both sent")
      })
      const inbox = await Effect.runPromise(Scope.provide(serve([agent], { model: twice }), scope))
      const paused = await Effect.runPromise(inbox.inStores(Agent.run(agent, { input: "pay Ada 250", conversationId: "c-stale" }).pipe(Effect.provide(twice))))
      if (paused._tag !== "Paused") throw new Error("expected a pause")
      const open = async (who: Awaited<ReturnType<typeof person>>) => {
        await who.page.click(`#runs button[data-run-id="${paused.runId}"]`)
        await who.page.waitForSelector("#approve-all:not([disabled])") // a panel marked decided has a disabled one
      }
      const bob = await person(inbox.origin, "Bob")
      const alice = await person(inbox.origin, "Alice <b>")
      await open(bob)
      await open(alice)
      await bob.page.click("#approve-all")
      await bob.page.waitForSelector("#events li.final")
      expect(await bob.page.textContent("#events li.final")).toBe("paused again (approval): transfer")
      expect(await bob.page.textContent("#run-heading")).toMatch(/^bank — decided by Bob \(at .+\) · paused again for approval$/)
      expect(await bob.page.$$eval("#decided [data-decided-for]", (items) => items.map((item) => item.textContent))).toEqual(["transfer · t1 — approved as asked"])
      expect(executed).toEqual(["t1 Ada 250"])

      // Alice's panel still shows Ada's transfer
      await alice.page.click("#approve-all")
      await alice.page.waitForSelector("#status.bad, #status.good")
      expect(await alice.page.textContent("#run-heading")).toMatch(/^bank — decided by Bob \(at .+\)$/)
      expect(await alice.page.textContent("#status")).toMatch(new RegExp(`^Run ${paused.runId} was resumed already by Bob and paused again: decide on its current pause`))
      await shot(alice.page, "9-stale-tab-refused")
      expect(executed).toEqual(["t1 Ada 250"])

      // the new pause, opened afresh: the hostile argument is text, nothing ran
      await open(alice)
      expect(JSON.parse(await alice.page.inputValue("#args-0"))).toEqual({ to: hostile, amount: 9000 })
      expect(await alice.page.evaluate(() => (window as any).pwned)).toBeUndefined()
      expect(await alice.page.$$eval("#run img", (images) => images.length)).toBe(0)
      await alice.page.click("#reject-all")
      await alice.page.waitForSelector("#events li.final")
      expect(await alice.page.$$eval("#events li", (items) => items.map((item) => item.textContent))).toEqual([
        "resumed: RejectAll by Alice <b>",
        "model call #3",
        "model answered: Both sent",
        "completed: Both sent"
      ])
      expect(executed).toEqual(["t1 Ada 250"])
      expect([...bob.errors, ...alice.errors]).toEqual(["Failed to load resource: the server responded with a status of 409 (Conflict)"])
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 60_000)

  it("a conversation's inline images show as images (the page admits data: images only), its other files as text", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const { agent } = bank()
      const inbox = await Effect.runPromise(Scope.provide(serve([agent]), scope))
      const dot = Part.image({ name: "dot.png", data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==" })
      const input = [Part.text("pay Ada 250"), dot, Part.image({ url: "https://example.com/elsewhere.png" }), Part.file({ mediaType: "application/pdf", name: "invoice.pdf", data: "JVBERi0=" })]
      const paused = await Effect.runPromise(inbox.inStores(Agent.run(agent, { input, conversationId: "c-files" }).pipe(Effect.provide(model))))
      if (paused._tag !== "Paused") throw new Error("expected a pause")
      const ada = await person(inbox.origin, "Ada")
      await ada.page.click(`#runs button[data-run-id="${paused.runId}"]`)
      await ada.page.waitForSelector(".conversation img.file")
      expect(await ada.page.$$eval(".conversation img", (images) =>
        images.map((image) => [(image as HTMLImageElement).alt, (image as HTMLImageElement).src.slice(0, 22), (image as HTMLImageElement).naturalWidth])
      )).toEqual([["dot.png", "data:image/png;base64,", 1]])
      expect(await ada.page.$$eval(".conversation span.file", (spans) => spans.map((span) => span.textContent))).toEqual([
        "[image/*, https://example.com/elsewhere.png]",
        "[invoice.pdf: application/pdf, 5 bytes]"
      ])
      await shot(ada.page, "10-files")
      expect(ada.errors).toEqual([])
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 60_000)
})
