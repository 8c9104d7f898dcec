/**
 * openTerminal: the program sees a real terminal of the size asked; text typed and keys
 * pressed reach it as a person's; Ctrl-C is SIGINT; close kills what still runs in it.
 */
import { spawnSync } from "node:child_process"
import { afterEach, describe, expect, it } from "vitest"
import { openTerminal, type Terminal } from "../src/Terminal.js"

let terminal: Terminal | undefined
const node = (code: string) => (terminal = openTerminal({ command: process.execPath, args: ["-e", code], cols: 100, rows: 30 }))
afterEach(async () => {
  await terminal?.close()
  terminal = undefined
})

const alive = (pid: number) => spawnSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).stdout.trim().replace(/^Z.*/, "")

describe("openTerminal", () => {
  it("a TTY of the size asked; typed text and Enter are read as a line; its exit status", async () => {
    const tty = node(`
      const { stdin, stdout } = process
      stdout.write(JSON.stringify([stdin.isTTY, stdout.isTTY, stdout.columns, stdout.rows, process.env.TERM]) + "\\nname? ")
      stdin.once("data", (line) => { stdout.write("hello " + String(line).trim() + "\\n"); process.exit(3) })
    `)
    await tty.waitFor("name?")
    await tty.type("Ada")
    await tty.press("Enter")
    expect(await tty.exited()).toBe(3)
    expect(await tty.screen()).toBe(`[true,true,100,30,"xterm-256color"]\nname? Ada\nhello Ada`)
  })

  it("keys in raw mode arrive as a terminal sends them (arrows as CSI, Backspace as DEL, Ctrl-C as ETX); the screen shows what the program drew last", async () => {
    const tty = node(`
      process.stdin.setRawMode(true)
      const seen = []
      process.stdout.write("ready")
      process.stdin.on("data", (chunk) => {
        seen.push([...String(chunk)].map((c) => c.charCodeAt(0)).join(","))
        process.stdout.write("\\r\\x1b[2K" + seen.join(" "))
        if (seen.length === 4) process.exit(0)
      })
    `)
    await tty.waitFor("ready")
    await tty.press("Down", "Up", "Backspace", "Ctrl-C")
    expect(await tty.exited()).toBe(0)
    expect(await tty.screen()).toBe("27,91,66 27,91,65 127 3") // ESC [ B, ESC [ A, DEL, ETX
  })

  it("Ctrl-C in cooked mode is SIGINT: a program that does not catch it ends by the signal", async () => {
    const tty = node(`process.stdout.write("waiting"); setInterval(() => {}, 1000)`)
    await tty.waitFor("waiting")
    await tty.press("Ctrl-C")
    expect(await tty.exited()).toBeUndefined()
  })

  it("close kills what still runs in the terminal, children included", async () => {
    const tty = node(`
      const child = require("node:child_process").spawn(process.execPath, ["-e", "process.on('SIGHUP', () => {}); setInterval(() => {}, 1000)"], { stdio: "ignore" })
      process.stdout.write("child " + child.pid)
      setInterval(() => {}, 1000)
    `)
    const pid = Number((await tty.waitFor(/child \d+/)).match(/child (\d+)/)![1])
    expect(alive(pid)).not.toBe("")
    await tty.close()
    terminal = undefined
    const deadline = Date.now() + 5_000
    while (alive(pid) !== "" && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(alive(pid)).toBe("")
  })
})
