/**
 * A program in a real pseudo-terminal, as a person sees it: `node-pty` runs it on a pty (so it
 * sees a TTY, reads keys in raw mode, gets SIGINT from Ctrl-C), and `@xterm/headless` renders
 * what it writes (cursor moves and erased lines included) into the screen a person would read.
 */
import xterm from "@xterm/headless"
import { spawnSync } from "node:child_process"
import { spawn } from "node-pty"

/**
 * A key a person presses.
 *
 * @since 0.0.0
 * @category models
 */
export type Key = "Enter" | "Tab" | "Backspace" | "Escape" | "Up" | "Down" | "Right" | "Left" | "Ctrl-C" | "Ctrl-D"

/** What a key sends; arrows as the terminal's cursor-key mode has them (`CSI` or, in application mode, `SS3`). */
const bytes = (key: Key, application: boolean): string => {
  switch (key) {
    case "Enter":
      return "\r"
    case "Tab":
      return "\t"
    case "Backspace":
      return "\x7f"
    case "Escape":
      return "\x1b"
    case "Ctrl-C":
      return "\x03"
    case "Ctrl-D":
      return "\x04"
    default:
      return `${application ? "\x1bO" : "\x1b["}${{ Up: "A", Down: "B", Right: "C", Left: "D" }[key]}`
  }
}

/**
 * A program running in a terminal.
 *
 * @since 0.0.0
 * @category models
 */
export interface Terminal {
  /** What the terminal shows, scrollback included: wrapped lines joined, each trimmed on the right. */
  readonly screen: () => Promise<string>
  /** Waits until the terminal shows `text`; returns the screen. Fails after `timeoutMs`, quoting the screen. */
  readonly waitFor: (text: string | RegExp, timeoutMs?: number) => Promise<string>
  /** Presses keys, one after the other. */
  readonly press: (...keys: ReadonlyArray<Key>) => Promise<void>
  /** Types text as it is. */
  readonly type: (text: string) => Promise<void>
  /**
   * Waits until the program has exited; returns its exit status, or `undefined` if a signal
   * ended it. Fails after `timeoutMs`, quoting the screen.
   */
  readonly exited: (timeoutMs?: number) => Promise<number | undefined>
  /** Kills whatever still runs in the terminal (its process group), and closes it. */
  readonly close: () => Promise<void>
}

/**
 * What to run, and the terminal's size.
 *
 * @since 0.0.0
 * @category models
 */
export interface TerminalOptions {
  readonly command: string
  readonly args?: ReadonlyArray<string>
  readonly cwd?: string
  /** The program's whole environment: a variable set to `undefined` is left out. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Default 120. */
  readonly cols?: number
  /** Default 50. */
  readonly rows?: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Starts `command` in a new pseudo-terminal (`TERM=xterm-256color`) as the leader of its own
 * session, so Ctrl-C reaches it and its children as from a person's keyboard.
 *
 * @example
 * ```ts
 * import { openTerminal } from "@agentfx/testing/Terminal"
 *
 * const tty = openTerminal({ command: "sh", args: ["-c", "read -p 'name? ' name; echo \"hi $name\""] })
 * try {
 *   await tty.waitFor("name?")
 *   await tty.type("Ada")
 *   await tty.press("Enter")
 *   console.log(await tty.exited(), await tty.waitFor("hi Ada")) // 0, the screen
 * } finally {
 *   await tty.close()
 * }
 * ```
 *
 * @since 0.0.0
 * @category constructors
 */
export const openTerminal = (options: TerminalOptions): Terminal => {
  const cols = options.cols ?? 120
  const rows = options.rows ?? 50
  const view = new xterm.Terminal({ cols, rows, scrollback: 10_000, allowProposedApi: true })
  const env = Object.fromEntries(Object.entries(options.env ?? process.env).filter((entry): entry is [string, string] => entry[1] !== undefined))
  const child = spawn(options.command, [...(options.args ?? [])], {
    name: "xterm-256color",
    cols,
    rows,
    cwd: options.cwd ?? process.cwd(),
    env
  })
  let ended = false
  const status = new Promise<number | undefined>((resolve) =>
    child.onExit(({ exitCode, signal }) => {
      ended = true
      resolve(signal !== undefined && signal !== 0 ? undefined : exitCode)
    })
  )
  child.onData((data) => view.write(data))
  // the terminal's own answers (a cursor position report, say) go back to the program
  view.onData((data) => void (ended || child.write(data)))

  const send = async (data: string) => {
    if (!ended) child.write(data)
    await sleep(10) // as typed: each write is read on its own
  }
  const screen = () =>
    new Promise<string>((resolve) =>
      view.write("", () => {
        const buffer = view.buffer.active
        const lines: Array<string> = []
        for (let y = 0; y < buffer.length; y++) {
          const line = buffer.getLine(y)!
          const text = line.translateToString(true)
          if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text
          else lines.push(text)
        }
        resolve(lines.map((line) => line.trimEnd()).join("\n").trimEnd())
      })
    )
  /** The processes of the terminal's session (`ps` lines: pid, state, command), for a failure's message. */
  const processes = () => spawnSync("ps", ["-o", "pid=,stat=,args=", "--forest", "-s", String(child.pid)], { encoding: "utf8" }).stdout ?? "(no ps here)"
  const failure = async (what: string, timeoutMs: number) =>
    new Error(`${options.command} ${(options.args ?? []).join(" ")}: ${what} after ${timeoutMs} ms; the terminal shows:\n${await screen()}\n--- its processes ---\n${processes()}`)

  return {
    screen,
    waitFor: async (text, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs
      while (true) {
        const shown = await screen()
        if (typeof text === "string" ? shown.includes(text) : text.test(shown)) return shown
        if (Date.now() > deadline) throw await failure(`no ${String(text)}`, timeoutMs)
        await sleep(20)
      }
    },
    press: async (...keys) => {
      for (const key of keys) await send(bytes(key, view.modes.applicationCursorKeysMode))
    },
    type: (text) => send(text),
    exited: async (timeoutMs = 20_000) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), timeoutMs)))
      const result = await Promise.race([status, late])
      clearTimeout(timer)
      if (result === "late") throw await failure("still running", timeoutMs)
      return result
    },
    close: async () => {
      if (!ended) {
        try {
          process.kill(-child.pid, "SIGKILL")
        } catch {
          // it ended meanwhile
        }
        await Promise.race([status, sleep(5_000)])
      }
      view.dispose()
    }
  }
}
