/**
 * Measuring helpers shared by both implementations: clocks, GC and heap, live timers, OS
 * threads, a main-thread ticker, exact-count checks, and the behavioural probes (suspended
 * heap, free permits).
 */
import { existsSync, readdirSync } from "node:fs"
import { setImmediate as nextMacrotask } from "node:timers/promises"
import { Worker } from "node:worker_threads"

/** A pass/fail fact a scenario asserts (counts, leaks). Any failed check fails the bench. */
export interface Check {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

/** What a scenario process reports: samples per metric (one per repetition) and its checks. */
export interface ScenarioResult {
  readonly samples: { readonly [metric: string]: ReadonlyArray<number> }
  readonly checks: ReadonlyArray<Check>
}

/** The median of `xs` (NaN when empty). */
export const median = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return Number.NaN
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Microseconds since an arbitrary origin. */
export const nowUs = (): number => performance.now() * 1000

/** Two full collections (the second sweeps what the first's finalisation freed); needs `--expose-gc`. */
export const fullGc = (): void => {
  if (globalThis.gc === undefined) throw new Error("run with node --expose-gc")
  globalThis.gc()
  globalThis.gc()
}

/** Heap in use after a full GC, in bytes. */
export const heapAfterGc = (): number => {
  fullGc()
  return process.memoryUsage().heapUsed
}

/** Live `setTimeout`/`setInterval` handles of this process. */
export const liveTimers = (): number => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length

/**
 * The live timers beyond `baseline`, once short-lived ones had a chance to end (up to 1 s):
 * a leaked timer stays, while the test runner's and the scheduler's own come and go — on a
 * busy machine one of them may be live at the instant of a single look.
 */
export const timersLeft = async (baseline: number): Promise<number> => {
  for (let i = 0; i < 20 && liveTimers() > baseline; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  return Math.max(0, liveTimers() - baseline)
}

/** The leak check on timers: none left beyond `baseline`. */
export const noTimersLeft = async (baseline: number) => {
  const left = await timersLeft(baseline)
  return { name: "no live timers", ok: left === 0, detail: `${left} left` }
}

/** Whether this platform lets {@link osThreads} count (Linux). */
export const canCountThreads = existsSync("/proc/self/task")

/** OS threads of this process (Linux): each live worker is one. */
export const osThreads = (): number => readdirSync("/proc/self/task").length

const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * The fewest OS threads seen over `windowMs`, read every 2 ms (the main thread blocked): a
 * baseline that a thread still leaving `/proc/self/task` (seen for a moment after a worker's
 * exit event on a busy machine) does not inflate.
 */
export const leastThreads = (windowMs: number): number => {
  const until = performance.now() + windowMs
  let least = osThreads()
  while (performance.now() < until) {
    Atomics.wait(pause, 0, 0, 2)
    least = Math.min(least, osThreads())
  }
  return least
}

/** Threads above `baseline`, read again every 2 ms (the main thread blocked) until none or 100 ms have passed. */
export const settledThreads = (baseline: number): number => {
  const until = performance.now() + 100
  let extra = osThreads() - baseline
  while (extra > 0 && performance.now() < until) {
    Atomics.wait(pause, 0, 0, 2)
    extra = osThreads() - baseline
  }
  return extra
}

/**
 * A `setInterval` of `everyMs` on the main thread; `stop()` ends it and returns the largest gap
 * between two ticks (the start and the stop count as ticks), in ms. A blocked event loop shows
 * as a gap as long as the block.
 */
export const ticker = (everyMs = 10): { readonly stop: () => number } => {
  let last = performance.now()
  let largest = 0
  const tick = () => {
    const now = performance.now()
    largest = Math.max(largest, now - last)
    last = now
  }
  const timer = setInterval(tick, everyMs)
  return {
    stop: () => {
      clearInterval(timer)
      tick()
      return largest
    }
  }
}

/**
 * The planted leak of `--inject=terminate`: the next `Worker#terminate()` in this process, by
 * whoever calls it (agentfx's pool or the floor), resolves at once and leaves the thread
 * running. `restore` puts `terminate` back and really terminates the spared worker.
 */
export const skipNextTerminate = (): { readonly restore: () => Promise<void> } => {
  const original = Worker.prototype.terminate
  const spared: Array<Worker> = []
  Worker.prototype.terminate = function(this: Worker) {
    Worker.prototype.terminate = original
    spared.push(this)
    return Promise.resolve(1)
  }
  return {
    restore: async () => {
      Worker.prototype.terminate = original
      await Promise.all(spared.map((worker) => original.call(worker)))
    }
  }
}

/** Resolves `true` once `condition()` holds, polling once per macrotask, or `false` after `timeoutMs`. */
export const waitUntil = async (condition: () => boolean, timeoutMs: number): Promise<boolean> => {
  const deadline = performance.now() + timeoutMs
  while (!condition()) {
    if (performance.now() > deadline) return false
    await nextMacrotask()
  }
  return true
}

/** Resolves after `ms` of real time. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Collects checks; `expect` compares exactly. */
export class Checks {
  readonly list: Array<Check> = []
  expect(name: string, actual: unknown, expected: unknown): void {
    const ok = Object.is(actual, expected)
    this.list.push({ name, ok, detail: ok ? `${String(actual)}` : `got ${String(actual)}, expected ${String(expected)}` })
  }
  that(name: string, ok: boolean, detail: string): void {
    this.list.push({ name, ok, detail })
  }
}

/**
 * One kill of scenario W: a `while (true) {}` call stopped at its deadline, then the next call,
 * which needs a fresh worker.
 */
export interface Kill {
  /** The call ended by its deadline (agentfx: a `ToolTimeout` result; the floor: its timer fired and the worker was terminated). */
  readonly timedOut: boolean
  /**
   * From the call's start to its result, minus the deadline, ms. agentfx's deadline starts after
   * the worker is reserved (a few hundred µs into the call); the floor's at `postMessage`.
   */
  readonly overshootMs: number
  /** The largest gap of a 10 ms main-thread ticker while the call ran, ms. */
  readonly maxGapMs: number
  /** Workers not yet exited right after the result (agentfx: the pool's `stats.live`; the floor: spawned minus 'exit' events). */
  readonly liveWorkers: number
  /** The next call, on a fresh worker, succeeded. */
  readonly served: boolean
  /** That call's time: spawn + import + first call, ms. */
  readonly spawnMs: number
}

/** Counts of one run compared with what it must be. */
export interface RunCounts {
  readonly text: string
  readonly modelCalls: number
  readonly toolCalls: number
}

/** Adds one check per field of `expected`, summing mismatches over many runs into one line each. */
export const expectRuns = (checks: Checks, label: string, runs: ReadonlyArray<RunCounts>, expected: (i: number) => RunCounts) => {
  for (const field of ["text", "modelCalls", "toolCalls"] as const) {
    const wrong = runs.map((run, i) => ({ i, got: run[field], want: expected(i)[field] })).filter((r) => r.got !== r.want)
    checks.that(
      `${label}: ${field} of ${runs.length} run(s)`,
      wrong.length === 0,
      wrong.length === 0 ? "exact" : `${wrong.length} wrong, e.g. run ${wrong[0]!.i}: got ${wrong[0]!.got}, expected ${wrong[0]!.want}`
    )
  }
}

/** Per-step figures of one long run, from the timestamp (µs) of each model call. */
export const stepMetrics = (stamps: ReadonlyArray<number>) => {
  const steps = stamps.length - 1
  return {
    perStep: (stamps[steps]! - stamps[0]!) / steps,
    first10: (stamps[10]! - stamps[0]!) / 10,
    last10: (stamps[steps]! - stamps[steps - 10]!) / 10
  }
}

/** One batch of runs that suspend in their tool until released. */
export interface SuspendedRuns<A = RunCounts> {
  /** How many runs are suspended in their tool right now. */
  readonly suspended: () => number
  /** Lets every suspended tool return. */
  readonly release: () => void
  /** Settles when every run has ended, with their counts. */
  readonly done: Promise<ReadonlyArray<A>>
}

/**
 * Retained heap per run while `runs` runs are all suspended in their tool: heap after a full
 * GC with every run suspended, minus the heap after a full GC before they started, divided by
 * `runs`. `check` sees the runs' counts; the heap before and after (once they all ended and
 * nothing refers to them) is returned too.
 */
export const suspendedHeap = async <A>(
  runs: number,
  start: () => SuspendedRuns<A>,
  check: (counts: ReadonlyArray<A>) => void
) => {
  const before = heapAfterGc()
  let batch: SuspendedRuns<A> | undefined = start()
  const allSuspended = await waitUntil(() => batch!.suspended() === runs, 30_000)
  const during = heapAfterGc()
  batch.release()
  check(await batch.done)
  batch = undefined // what is left after this belongs to nobody
  const after = heapAfterGc()
  return { allSuspended, perRun: (during - before) / runs, before, after }
}

/** A run whose tools wait on a latch, used to see how many calls a bulkhead lets start at once. */
export interface PermitProbe {
  /** Starts a run making `calls` calls that each count themselves started, then wait for `release`. */
  readonly start: (calls: number) => Promise<RunCounts>
  readonly started: () => number
  readonly release: () => void
}

/**
 * Behavioural permit check: with `permits` free permits, `permits + 1` latched calls must
 * start exactly `permits` at once (fewer: permits leaked; more: a permit was released twice),
 * and all must finish once released.
 */
export const probePermits = async (checks: Checks, permits: number, probe: PermitProbe) => {
  const run = probe.start(permits + 1)
  const reached = await waitUntil(() => probe.started() >= permits, 2_000)
  await sleep(50)
  const startedAtOnce = probe.started()
  probe.release()
  const counts = await Promise.race([run, sleep(10_000).then(() => undefined)])
  checks.that(
    "D: no leaked permits (exactly `permits` latched calls start at once)",
    reached && startedAtOnce === permits,
    `${startedAtOnce} of ${permits + 1} latched calls started at once (expected exactly ${permits})`
  )
  checks.expect("D: probe run finished with all its tool calls", counts?.toolCalls, permits + 1)
  checks.expect("D: probe run's model calls", counts?.modelCalls, 2)
}
