/**
 * The JSON Schema checks of a toolkit's tools, run on a thread of their own (`checker-worker.mjs`)
 * with a deadline: a check that does not finish in time — a server's `pattern` that backtracks
 * catastrophically on the value, say — ends the thread, not the event loop, and is a failed
 * check. The next request starts a new thread.
 */
import type { Scope } from "effect"
import { Duration, Effect, Fiber, Semaphore } from "effect"
import { Worker } from "node:worker_threads"
import { maxTools } from "./listing.js"

/**
 * How long one compile or check may take on the checker thread; then the thread is ended. An
 * ordinary check takes well under a millisecond: the bound leaves room for a busy machine and
 * for large structured content, not for a pattern that backtracks.
 */
export const deadline = Duration.seconds(5)

/** How long the thread may take to start (it loads Ajv); not part of any deadline. */
const startupTimeout = Duration.seconds(30)

const defaultEntry = new URL("./checker-worker.mjs", import.meta.url)

/** A schema the checker has compiled: checks against it name it by `key`. */
export interface Compiled {
  readonly key: number
  readonly schema: object
}

/** The outcome of a check: whether the value matches, and if not, why. */
export interface Checked {
  readonly valid: boolean
  readonly errorMessage: string | undefined
}

export interface Checker {
  /** Waits for the thread started with the checker to be ready; fails with why it could not start. */
  readonly ready: Effect.Effect<void, string>
  /**
   * Compiles a schema on the checker thread, or fails with why not, naming the schema as `what`
   * says: `<what> cannot be compiled (…)`, `compiling <what> did not finish within 5s and was stopped`.
   */
  readonly compile: (schema: object, what: string) => Effect.Effect<Compiled, string>
  /** Checks a value against a compiled schema; a check that fails to run is a failed check that says why. */
  readonly check: (compiled: Compiled, value: unknown) => Effect.Effect<Checked>
}

type Request =
  | { readonly kind: "compile"; readonly key: number; readonly schema: object }
  | { readonly kind: "check"; readonly key: number; readonly schema: object; readonly value: unknown }

interface Answer {
  readonly id?: number
  readonly ready?: true
  readonly error?: string
  readonly valid?: boolean
  readonly errorMessage?: string
}

/** Why a request got no answer: the value could not be sent (`threw`), the thread died, or the deadline passed. */
type Failure =
  | { readonly _tag: "Threw"; readonly error: string }
  | { readonly _tag: "ThreadLost"; readonly why: string }
  | { readonly _tag: "Late" }

const explain = (failure: Failure, what: string): string => {
  switch (failure._tag) {
    case "Threw":
      return `${what} threw ${failure.error}`
    case "ThreadLost":
      return `${what} could not run: ${failure.why}`
    case "Late":
      return `${what} did not finish within ${Duration.format(deadline)} and was stopped`
  }
}

/**
 * Posts `message` (when given) and waits for the thread's first answer that is `wanted`, for at
 * most `within` (a timer of its own: no fiber is forked for a check).
 */
const exchange = (worker: Worker, within: { readonly millis: number; readonly late: Failure }, wanted: (answer: Answer) => boolean, message?: unknown) =>
  Effect.callback<Answer, Failure>((resume) => {
    const settle = (outcome: Effect.Effect<Answer, Failure>) => {
      done()
      resume(outcome)
    }
    const onMessage = (answer: Answer) => {
      if (wanted(answer)) settle(Effect.succeed(answer))
    }
    const onError = (error: Error) => settle(Effect.fail({ _tag: "ThreadLost", why: `the checker thread failed: ${error.message}` }))
    const onExit = (code: number) => settle(Effect.fail({ _tag: "ThreadLost", why: `the checker thread exited (code ${code})` }))
    const timer = setTimeout(() => settle(Effect.fail(within.late)), within.millis)
    const done = () => {
      clearTimeout(timer)
      worker.off("message", onMessage).off("error", onError).off("exit", onExit)
    }
    worker.on("message", onMessage).on("error", onError).on("exit", onExit)
    if (message !== undefined) {
      try {
        worker.postMessage(message)
      } catch (error) {
        // a value too deep to copy to the thread
        settle(Effect.fail({ _tag: "Threw", error: String(error) }))
      }
    }
    return Effect.sync(done)
  })

const starting = {
  millis: Duration.toMillis(startupTimeout),
  late: { _tag: "ThreadLost", why: `the checker thread did not start within ${Duration.format(startupTimeout)}` }
} as const

const checking = { millis: Duration.toMillis(deadline), late: { _tag: "Late" } } as const

/**
 * A checker, its thread starting at once (await `ready`); ended when the scope closes. After a
 * thread is ended, the next request starts another. `entry` is the thread's module (tests only).
 */
export const make: (entry?: URL) => Effect.Effect<Checker, never, Scope.Scope> = Effect.fnUntraced(function*(entry: URL = defaultEntry) {
  const lock = yield* Semaphore.make(1)
  let current: Worker | undefined
  let closed = false
  let nextKey = 0
  let nextId = 0

  const end = (worker: Worker) => {
    if (current === worker) current = undefined
    void worker.terminate()
  }
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      closed = true
      if (current !== undefined) end(current)
    })
  )

  const thread: Effect.Effect<Worker, Failure> = Effect.suspend(() => {
    if (closed) return Effect.fail({ _tag: "ThreadLost", why: "the toolkit's scope is closed" } as const)
    if (current !== undefined) return Effect.succeed(current)
    // two schemas a tool at most: the cache holds a whole list's validators
    const worker = new Worker(entry, { workerData: { capacity: 2 * maxTools }, execArgv: [] })
    worker.unref()
    return exchange(worker, starting, (answer) => answer.ready === true).pipe(
      Effect.onError(() => Effect.sync(() => void worker.terminate())),
      Effect.map(() => {
        current = worker
        return worker
      })
    )
  })

  /** One request, under the lock and the deadline; the thread is ended when the answer does not come. */
  const ask = (request: Request): Effect.Effect<Answer, Failure> =>
    lock.withPermits(1)(Effect.flatMap(thread, (worker) => {
      const id = ++nextId
      return exchange(worker, checking, (answer) => answer.id === id, { id, ...request }).pipe(
        // a value that could not be sent leaves the thread as it was; any other failure ends it
        Effect.tapError((failure) => failure._tag === "Threw" ? Effect.void : Effect.sync(() => end(worker))),
        Effect.onInterrupt(() => Effect.sync(() => end(worker)))
      )
    }))

  const first = yield* Effect.forkScoped(lock.withPermits(1)(thread))
  return {
    ready: Effect.mapError(Fiber.join(first), (failure) => failure._tag === "ThreadLost" ? failure.why : explain(failure, "starting it")).pipe(
      Effect.asVoid
    ),
    compile: (schema, what) => {
      const compiled = { key: ++nextKey, schema }
      return ask({ kind: "compile", ...compiled }).pipe(
        Effect.mapError((failure) => explain(failure, `compiling ${what}`)),
        Effect.flatMap((answer) => answer.error === undefined ? Effect.succeed(compiled) : Effect.fail(`${what} cannot be compiled (${answer.error})`))
      )
    },
    check: (compiled, value) =>
      ask({ kind: "check", ...compiled, value }).pipe(
        Effect.map((answer): Checked => ({ valid: answer.valid === true, errorMessage: answer.errorMessage })),
        Effect.catch((failure) => Effect.succeed<Checked>({ valid: false, errorMessage: explain(failure, "the check") }))
      )
  }
})
