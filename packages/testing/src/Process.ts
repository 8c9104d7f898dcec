/**
 * Real Node processes for tests and benches that kill them: a child is `node` itself (never a
 * wrapper such as `npx tsx`, whose SIGKILL leaves the real process running), its stdout read
 * line by line (a line that parses as JSON is a message; any other is log), killed with its
 * scope.
 */
import { Data, Effect, type Scope } from "effect"
import { type ChildProcess, spawn as spawnProcess } from "node:child_process"
import { createServer } from "node:net"

/**
 * A child that exited, or said nothing matching in time: names what was awaited, with the end
 * of its output.
 *
 * @since 0.0.0
 * @category errors
 */
export class ChildError extends Data.TaggedError("ChildError")<{ readonly message: string }> {}

/**
 * A running child process.
 *
 * @since 0.0.0
 * @category models
 */
export interface Child {
  readonly pid: number
  readonly process: ChildProcess
  /**
   * The first message (a JSON line, since the child started) for which `match` returns a value:
   * that value, once it came. Fails when the child exits first, or after `timeout` ms.
   */
  readonly waitFor: <A>(what: string, match: (message: unknown) => A | undefined, timeout?: number) => Effect.Effect<A, ChildError>
  /** Every message so far (JSON lines, parsed). */
  readonly messages: () => ReadonlyArray<unknown>
  /** Writes `line` and a newline to its stdin. */
  readonly send: (line: string) => Effect.Effect<void>
  /** Sends `signal` (default SIGKILL) and waits for the exit: its code (null when killed). */
  readonly kill: (signal?: NodeJS.Signals) => Effect.Effect<number | null>
  /**
   * Sends `signal` without waiting for anything (`SIGSTOP` freezes the process, `SIGCONT` wakes
   * it; the scope's SIGKILL ends a frozen one too). Dies if the process has already exited.
   */
  readonly signal: (signal: NodeJS.Signals) => Effect.Effect<void>
  /** Waits for the exit: its code (null when killed by a signal). */
  readonly exited: Effect.Effect<number | null>
  /** Everything it printed that is not a message (stdout's other lines, stderr). */
  readonly log: () => string
}

/**
 * Options of {@link spawn}.
 *
 * @since 0.0.0
 * @category models
 */
export interface SpawnOptions {
  /** Run TypeScript through tsx (`--import tsx`), resolving workspace packages to their sources. Default: true. */
  readonly typescript?: boolean
  /** More flags for node (`--expose-gc`). */
  readonly nodeFlags?: ReadonlyArray<string>
  readonly cwd?: string
  /** Added to this process's environment. */
  readonly env?: Record<string, string>
}

/**
 * Starts `node <script> ...args`; SIGKILLed when the scope closes, if still running.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { spawn } from "@agentfx/testing/Process"
 *
 * const program = Effect.gen(function*() {
 *   const runner = yield* spawn("./runner.ts", ["--port", "4001"])
 *   yield* runner.waitFor("ready", (m) => (m as { ready?: boolean }).ready)
 *   yield* runner.kill()
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.0.0
 * @category constructors
 */
export const spawn = (
  script: string,
  args: ReadonlyArray<string> = [],
  options: SpawnOptions = {}
): Effect.Effect<Child, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const flags = options.typescript === false ? [] : ["--conditions=@agentfx/source", "--import", "tsx"]
      const child = spawnProcess(process.execPath, [...flags, ...(options.nodeFlags ?? []), script, ...args], {
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        env: { ...process.env, ...options.env },
        stdio: ["pipe", "pipe", "pipe"]
      })
      const messages: Array<unknown> = []
      let log = ""
      let buffered = ""
      let exitCode: number | null | undefined
      const waiting = new Set<() => void>()
      const wake = () => [...waiting].forEach((f) => f())
      child.stdout!.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8")
        const lines = buffered.split("\n")
        buffered = lines.pop()!
        for (const line of lines) {
          const parsed = parse(line)
          if (parsed === undefined) log += `${line}\n`
          else messages.push(parsed)
        }
        wake()
      })
      child.stderr!.on("data", (chunk: Buffer) => void (log += chunk.toString("utf8")))
      const exit = new Promise<number | null>((resolve) =>
        child.on("exit", (code) => {
          exitCode = code
          wake()
          resolve(code)
        })
      )
      const tail = () => log.split("\n").slice(-40).join("\n")
      const waitFor = <A>(what: string, match: (message: unknown) => A | undefined, timeout = 30_000) =>
        Effect.callback<A, ChildError>((resume) => {
          const check = () => {
            for (const message of messages) {
              const found = match(message)
              if (found !== undefined) {
                done()
                return resume(Effect.succeed(found))
              }
            }
            if (exitCode !== undefined) {
              done()
              resume(Effect.fail(new ChildError({ message: `process ${child.pid} exited (${exitCode}) before ${what}; its output:\n${tail()}` })))
            }
          }
          const timer = setTimeout(() => {
            done()
            resume(Effect.fail(new ChildError({ message: `no ${what} from process ${child.pid} in ${timeout} ms; its output:\n${tail()}` })))
          }, timeout)
          const done = () => {
            clearTimeout(timer)
            waiting.delete(check)
          }
          waiting.add(check)
          check()
          return Effect.sync(done)
        })
      const exited = Effect.promise(() => exit)
      return {
        pid: child.pid!,
        process: child,
        waitFor,
        messages: () => messages,
        send: (line: string) => Effect.sync(() => void child.stdin!.write(`${line}\n`)),
        kill: (signal: NodeJS.Signals = "SIGKILL") => Effect.andThen(Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill(signal)), exited),
        signal: (signal: NodeJS.Signals) =>
          Effect.suspend(() =>
            exitCode === undefined && child.kill(signal)
              ? Effect.void
              : Effect.die(new Error(`could not send ${signal} to process ${child.pid}: it has exited (${exitCode})`))
          ),
        exited,
        log: () => log
      } satisfies Child
    }),
    (child) => child.kill()
  )

/** A line that is a JSON object or array, parsed; else undefined. */
const parse = (line: string): unknown => {
  const trimmed = line.trim()
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return undefined
  try {
    return JSON.parse(trimmed)
  } catch {
    return undefined
  }
}

/**
 * A TCP port on 127.0.0.1 that nobody listens on now (for a child's server: a cluster runner,
 * a database).
 *
 * @example
 * ```ts
 * import { freePort } from "@agentfx/testing/Process"
 *
 * const port = await freePort()
 * ```
 *
 * @since 0.0.0
 * @category utils
 */
export const freePort = (): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })
