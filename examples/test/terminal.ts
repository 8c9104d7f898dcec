/**
 * An example run in a real pseudo-terminal: a private tmux server (its own socket in a temp
 * directory) whose one pane runs `pnpm -s tsx examples/<script>`. Keys go in with
 * `send-keys`; what the pane shows (scrollback included) comes out with `capture-pane`. The
 * pane stays after the program exits, so its last screen can be read. The exit status is
 * written to a file by the pane's shell: on a loaded machine tmux was seen to leave the
 * pane's exited process unreaped (a zombie, the pane not yet dead) for over 20 s.
 */
import { execFile, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { offline, root } from "./run.js"

/** tmux is there (CI installs it; elsewhere the terminal tests are skipped without it). */
export const hasTmux = spawnSync("tmux", ["-V"]).status === 0

export interface Terminal {
  /** What the pane shows, scrollback included, wrapped lines joined, trimmed on the right. */
  readonly screen: () => Promise<string>
  /** Waits until the pane shows `text`; returns the screen. Fails after `timeoutMs`, quoting the screen. */
  readonly waitFor: (text: string | RegExp, timeoutMs?: number) => Promise<string>
  /** Presses keys, by tmux name: `"Down"`, `"Enter"`, `"BSpace"`, `"C-c"`. */
  readonly press: (...keys: ReadonlyArray<string>) => Promise<void>
  /** Types text as it is. */
  readonly type: (text: string) => Promise<void>
  /**
   * Waits until the program has exited; returns its exit status, or `undefined` if a signal
   * ended it (and the pane's shell with it). Fails after `timeoutMs`, quoting the screen.
   */
  readonly exited: (timeoutMs?: number) => Promise<number | undefined>
  /** Stops the tmux server and whatever still runs in it. */
  readonly close: () => Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Opens a 120×50 terminal running `pnpm -s tsx examples/<script>` offline (every provider variable unset). */
export const openTerminal = async (script: string): Promise<Terminal> => {
  const dir = mkdtempSync(join(tmpdir(), "agentfx-tty-"))
  const config = join(dir, "tmux.conf")
  writeFileSync(config, "set -g remain-on-exit on\nset -g history-limit 10000\n")
  const tmux = (...args: ReadonlyArray<string>) =>
    new Promise<string>((resolve, reject) => {
      execFile("tmux", ["-S", join(dir, "socket"), "-f", config, ...args], {
        encoding: "utf8",
        timeout: 10_000,
        env: { ...process.env, ...offline }
      }, (error, stdout, stderr) => (error === null ? resolve(stdout) : reject(new Error(`tmux ${args[0]}: ${stderr || error.message}`))))
    })
  const statusFile = join(dir, "status")
  await tmux("new-session", "-d", "-x", "120", "-y", "50", "-s", "example", "-c", root, `pnpm -s tsx examples/${script}; echo $? > ${statusFile}`)

  const screen = async () =>
    (await tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "example")).split("\n").map((line) => line.trimEnd()).join("\n").trimEnd()
  /** The processes of the pane's session (`ps` lines: pid, state, command). */
  const processes = async () => {
    const pid = (await tmux("display-message", "-p", "-t", "example", "#{pane_pid}")).trim()
    return spawnSync("ps", ["-o", "pid=,stat=,args=", "--forest", "-s", pid], { encoding: "utf8" }).stdout
  }
  const poll = async <A>(what: string, timeoutMs: number, check: () => Promise<A | undefined>): Promise<A> => {
    const deadline = Date.now() + timeoutMs
    while (true) {
      const found = await check()
      if (found !== undefined) return found
      if (Date.now() > deadline) {
        throw new Error(`${script}: ${what} after ${timeoutMs} ms; the terminal shows:\n${await screen()}\n--- its processes ---\n${await processes()}`)
      }
      await sleep(20)
    }
  }
  return {
    screen,
    waitFor: (text, timeoutMs = 60_000) =>
      poll(`no ${String(text)}`, timeoutMs, async () => {
        const shown = await screen()
        return (typeof text === "string" ? shown.includes(text) : text.test(shown)) ? shown : undefined
      }),
    press: async (...keys) => void (await tmux("send-keys", "-t", "example", ...keys)),
    type: async (text) => void (await tmux("send-keys", "-t", "example", "-l", text)),
    exited: (timeoutMs = 20_000) =>
      poll("still running", timeoutMs, async () => {
        if (existsSync(statusFile)) {
          const status = readFileSync(statusFile, "utf8").trim()
          if (status !== "") return { status: Number(status) }
        }
        // no status: done only once nothing of the pane's session runs any more (zombies aside)
        const running = (await processes()).split("\n").filter((line) => /^\s*\d+\s+[^Z\s]/.test(line))
        return running.length === 0 && !existsSync(statusFile) ? { status: undefined } : undefined
      }).then(({ status }) => status),
    close: async () => {
      await tmux("kill-server").catch(() => undefined)
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
