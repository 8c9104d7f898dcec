/**
 * launchChromium on a machine where nothing is unpacked yet (a fresh TMPDIR), from two
 * processes at once — as two test files of a run start: each gets a whole browser. (With
 * @sparticuz/chromium's own `executablePath()`, the second one starts the binary the first is
 * still writing: `spawn ETXTBSY`.)
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { launchChromium } from "../src/Chromium.js"

const chromium = fileURLToPath(new URL("../src/Chromium.ts", import.meta.url))
const script = `
import { launchChromium } from ${JSON.stringify(chromium)}
const browser = await launchChromium()
const page = await browser.newPage()
await page.setContent("<p id=out></p><script>document.getElementById('out').textContent = String(6 * 7)</script>")
console.log(await page.textContent("#out"))
await browser.close()
`

/** Runs the script in a new node process with `TMPDIR` set: its output, or its error. */
const launchIn = (dir: string) =>
  new Promise<string>((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      env: { ...process.env, TMPDIR: dir },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => void (out += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => void (out += chunk.toString("utf8")))
    child.on("exit", () => resolve(out.trim()))
  })

describe("launchChromium", () => {
  it("two processes at once on a machine with nothing unpacked: both get a browser; one folder per version is left, no staging", async () => {
    const dir = mkdtempSync(join(tmpdir(), "agentfx-chromium-test-"))
    try {
      expect(await Promise.all([launchIn(dir), launchIn(dir)])).toEqual(["42", "42"])
      expect(readdirSync(dir).filter((name) => name.startsWith("agentfx-chromium"))).toEqual([expect.stringMatching(/^agentfx-chromium-\d+\.\d+\.\d+$/)])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it("a browser outlives the contexts a test closes: a second context after the first one's close still loads pages (no --single-process)", async () => {
    const browser = await launchChromium()
    try {
      for (const n of [1, 2, 3]) {
        const context = await browser.newContext()
        const page = await context.newPage()
        await page.setContent(`<p id=out></p><script>document.getElementById('out').textContent = String(${n} * 7)</script>`)
        expect(await page.textContent("#out")).toBe(String(n * 7))
        await context.close()
      }
      expect(browser.isConnected()).toBe(true)
    } finally {
      await browser.close()
    }
  }, 120_000)
})
