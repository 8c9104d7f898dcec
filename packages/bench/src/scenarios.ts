/**
 * The scenario drivers, shared by both implementations: warm-up, repetitions, timing, heap
 * and the exact checks. A driver never judges speed; it only fails on wrong counts and leaks.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { effectLoop } from "./effectLoop.js"
import type { Impl, Inject, Peer } from "./impl.js"
import type { RunCounts, ScenarioResult } from "./measure.js"
import {
  canCountThreads,
  leastThreads,
  Checks,
  expectRuns,
  fullGc,
  nowUs,
  settledThreads,
  probePermits,
  skipNextTerminate,
  stepMetrics,
  suspendedHeap
} from "./measure.js"
import type { Config, ScenarioId } from "./workload.js"
import {
  cancelMetric,
  concurrentExpected,
  longLoopExpected,
  peerConfig,
  peerShortNames,
  runningCalls,
  timeoutExpected,
  wideBatchExpected
} from "./workload.js"

type Samples = { [metric: string]: Array<number> }

/** CPU time of this process (every thread: GC helpers included) since `start`, in µs. */
const cpuUs = (start: NodeJS.CpuUsage): number => {
  const { user, system } = process.cpuUsage(start)
  return user + system
}

const samplesOf = (...metrics: ReadonlyArray<string>): Samples => Object.fromEntries(metrics.map((m) => [m, []]))

/** A: µs per step over the whole run, over its first 10 and its last 10 steps. */
const longLoop = async (impl: Pick<Impl, "longLoop">, config: Config): Promise<ScenarioResult> => {
  const checks = new Checks()
  const samples = samplesOf("perStepUs", "first10Us", "last10Us", "growth", "cpuPerStepUs")
  const runs: Array<RunCounts> = []
  for (let rep = 0; rep < config.aWarmup + config.aReps; rep++) {
    const stamps: Array<number> = []
    const cpu = process.cpuUsage()
    runs.push(await impl.longLoop(config.steps, stamps))
    if (rep < config.aWarmup) continue
    const { first10, last10, perStep } = stepMetrics(stamps)
    samples.perStepUs!.push(perStep)
    samples.cpuPerStepUs!.push(cpuUs(cpu) / config.steps)
    samples.first10Us!.push(first10)
    samples.last10Us!.push(last10)
    samples.growth!.push(last10 / first10)
  }
  expectRuns(checks, "A", runs, () => longLoopExpected(config.steps))
  return { samples, checks: checks.list }
}

/** B: µs per tool call of the batch (from the first model call to the second, over the width), and µs per whole run. */
const wideBatch = async (impl: Pick<Impl, "wideBatch">, config: Config): Promise<ScenarioResult> => {
  const checks = new Checks()
  const samples = samplesOf("perCallUs", "runUs", "cpuRunUs")
  const runs: Array<RunCounts> = []
  for (let rep = 0; rep < config.bWarmup + config.bReps; rep++) {
    const stamps: Array<number> = []
    const start = nowUs()
    const cpu = process.cpuUsage()
    runs.push(await impl.wideBatch(config.width, stamps))
    const end = nowUs()
    if (rep < config.bWarmup) continue
    samples.perCallUs!.push((stamps[1]! - stamps[0]!) / config.width)
    samples.runUs!.push(end - start)
    samples.cpuRunUs!.push(cpuUs(cpu))
  }
  expectRuns(checks, "B", runs, () => wideBatchExpected(config.width))
  return { samples, checks: checks.list }
}

/**
 * C: wall time of `runs` runs started at once (tools on a timer); retained heap per run while
 * all are suspended (tools on a latch). For an implementation with `effectAlone` (agentfx),
 * the same figures for bare fibers doing only what the tool does, and the heap with the tool
 * on an Effect `Deferred` latch: references, no target.
 */
const concurrent = async (impl: Pick<Impl, "concurrent" | "effectAlone">, config: Config): Promise<ScenarioResult> => {
  const checks = new Checks()
  const samples = samplesOf("wallMs", "heapPerRunBytes", "leftPerRunBytes", "effectWallMs", "effectHeapPerRunBytes", "deferredHeapPerRunBytes")
  const alone = impl.effectAlone
  const expectAll = (label: string) => (done: ReadonlyArray<unknown>) =>
    checks.that(`${label}: all ${config.runs} fibers ended`, done.length === config.runs, `${done.length} ended`)
  // A full GC before each burst, on both sides, so every burst starts from the same heap.
  for (let rep = 0; rep < 1 + config.cWallReps; rep++) {
    fullGc()
    const start = nowUs()
    const counts = await impl.concurrent(config.runs, { timerMs: config.timerMs }).done
    const wall = (nowUs() - start) / 1000
    if (rep === 0) expectRuns(checks, "C (timer)", counts, concurrentExpected)
    else samples.wallMs!.push(wall)
  }
  for (let rep = 0; alone !== undefined && rep < 1 + config.cWallReps; rep++) {
    fullGc()
    const start = nowUs()
    const ended = await alone(config.runs, { timerMs: config.timerMs }).done
    if (rep === 0) expectAll("C, Effect alone (timer)")(ended)
    else samples.effectWallMs!.push((nowUs() - start) / 1000)
  }
  // warm the latch path on a small batch, so its first compilation is not counted as retained heap
  const warm = Math.min(200, config.runs)
  await suspendedHeap(warm, () => impl.concurrent(warm, "latch"), (counts) => expectRuns(checks, "C (latch, warm-up)", counts, concurrentExpected))
  let first: number | undefined
  let last = 0
  for (let rep = 0; rep < config.cHeapReps; rep++) {
    const heap = await suspendedHeap(
      config.runs,
      () => impl.concurrent(config.runs, "latch"),
      (counts) => expectRuns(checks, "C (latch)", counts, concurrentExpected)
    )
    checks.that(`C: all ${config.runs} runs suspended in their tool at once`, heap.allSuspended, heap.allSuspended ? "yes" : "no")
    samples.heapPerRunBytes!.push(heap.perRun)
    first ??= heap.before
    last = heap.after
  }
  // Over every measured batch, not one: a batch can leave ~1.5 MB of V8 tables that the next
  // one reuses (over 10 consecutive batches the heap plateaus), while a leak accumulates.
  samples.leftPerRunBytes!.push((last - first!) / (config.runs * config.cHeapReps))
  if (alone !== undefined) {
    await suspendedHeap(warm, () => alone(warm, "latch"), () => {})
    await suspendedHeap(warm, () => impl.concurrent(warm, "deferred-latch"), () => {})
    for (let rep = 0; rep < config.cHeapReps; rep++) {
      const bare = await suspendedHeap(config.runs, () => alone(config.runs, "latch"), expectAll("C, Effect alone (latch)"))
      samples.effectHeapPerRunBytes!.push(bare.perRun)
      const deferred = await suspendedHeap(
        config.runs,
        () => impl.concurrent(config.runs, "deferred-latch"),
        (counts) => expectRuns(checks, "C (Deferred latch)", counts, concurrentExpected)
      )
      samples.deferredHeapPerRunBytes!.push(deferred.perRun)
    }
  }
  return { samples, checks: checks.list }
}

/** D: `timeouts` calls that time out under a bounded manager: time per timeout, then leak checks. */
const timeouts = async (impl: Impl, config: Config, inject: Inject): Promise<ScenarioResult> => {
  const checks = new Checks()
  const samples = samplesOf("perTimeoutUs")
  const setup = await impl.timeouts(config, inject)
  const reps = 1 + config.dReps
  const perRun = config.timeouts / config.dRuns
  const runs: Array<RunCounts> = []
  let last = { started: 0, interrupted: 0 }
  for (let rep = 0; rep < reps; rep++) {
    const start = nowUs()
    const result = await setup.run()
    const elapsed = nowUs() - start
    if (rep > 0) samples.perTimeoutUs!.push(elapsed / config.timeouts)
    runs.push(...result.counts)
    last = result
  }
  expectRuns(checks, "D", runs, () => timeoutExpected(perRun))
  checks.expect("D: handlers started", last.started, reps * config.timeouts)
  checks.expect("D: handlers stopped by their timeout", last.interrupted, reps * config.timeouts)
  for (const check of await setup.leftovers()) checks.list.push({ ...check, name: `D: ${check.name}` })
  await probePermits(checks, config.permits, setup.probe)
  await setup.close()
  return { samples, checks: checks.list }
}

/**
 * E: for each way the implementation has and each width, `eWarmup` rounds, then `eReps`
 * measured ones (interleaved: every way and width once per repetition, so a busy spell of the
 * machine touches them all). Each round starts a batch, lets its calls take their resources
 * and cancels it; the times are the cancel's alone. Checks, per way, over every round: the
 * work ended cancelled, exactly the calls that should run held their resource, every one of
 * them was released by its finalizer, and the implementation's leak checks (no permit held
 * after every round; no live fiber after each warm-up round, which is tracked).
 */
const cancel = async (impl: Impl, config: Config, inject: Inject): Promise<ScenarioResult> => {
  const checks = new Checks()
  const samples: Samples = {}
  const setup = await impl.cancel(config, inject)
  /** Per check name: rounds seen, and the first failure's detail. */
  const tally = new Map<string, { rounds: number; failure: string | undefined }>()
  const count = (name: string, ok: boolean, failure: string) => {
    const entry = tally.get(name) ?? { rounds: 0, failure: undefined }
    entry.rounds++
    if (!ok) entry.failure ??= failure
    tally.set(name, entry)
  }
  for (let rep = 0; rep < config.eWarmup + config.eReps; rep++) {
    const warmup = rep < config.eWarmup
    for (const way of setup.ways) {
      for (const width of config.eWidths) {
        const round = await setup.round(way, width, warmup)
        const at = `width ${width}, round ${rep + 1}`
        const running = runningCalls(way, width, config.ePermits)
        count(`E (${way}): the batch ended cancelled`, round.cancelled, `not cancelled at ${at}`)
        count(`E (${way}): calls holding their resource at the cancel`, round.started === running, `${round.started} of ${running} expected at ${at}`)
        count(`E (${way}): every started call's finalizer ran`, round.released === round.started, `${round.released} of ${round.started} released at ${at}`)
        for (const check of round.leftovers) count(`E (${way}): ${check.name}`, check.ok, `${check.detail} at ${at}`)
        if (warmup) continue
        ;(samples[cancelMetric("wallUs", way, width)] ??= []).push(round.wallUs)
        ;(samples[cancelMetric("cpuUs", way, width)] ??= []).push(round.cpuUs)
      }
    }
  }
  await setup.close()
  for (const [name, { failure, rounds }] of tally) checks.that(name, failure === undefined, failure ?? `${rounds} rounds`)
  return { samples, checks: checks.list }
}

/**
 * W: one warm-up kill, then `kills` kills of a `while (true) {}` at a `deadlineMs` deadline,
 * each followed by a call on a fresh worker; then round trips on a warm worker. Checks: every
 * kill ended by its deadline, the next call was served after each, and no thread survived:
 * within 100 ms of each kill this process has exactly as many OS threads as after the warm-up
 * kill (the fewest seen over 200 ms: no worker is live then), and as many again once every
 * worker is closed. `--inject=terminate` spares the thread of the first measured kill.
 */
const workers = async (impl: Impl, config: Config, inject: Inject): Promise<ScenarioResult> => {
  const checks = new Checks()
  const kills = 1 + config.kills
  let baseline = 0
  const extra: Array<number> = []
  let planted: ReturnType<typeof skipNextTerminate> | undefined
  // a terminated thread may take a moment to leave /proc/self/task (seen with raw worker_threads on
  // a busy machine): a thread still there 100 ms after the kill is a leak
  const afterKill = (i: number) => {
    if (!canCountThreads) return
    if (i === 0) baseline = leastThreads(200)
    else extra.push(settledThreads(baseline))
    if (i === 0 && inject === "terminate") planted = skipNextTerminate()
  }
  const result = await impl.workers({
    kills,
    deadlineMs: config.deadlineMs,
    afterKill,
    warmup: config.wWarmup,
    calls: config.wCalls,
    reps: config.wReps
  })
  const leftAtEnd = canCountThreads ? settledThreads(baseline) : 0
  await planted?.restore()
  const measured = result.kills.slice(1)
  checks.expect("W: kills that ended by their deadline (ToolTimeout)", result.kills.filter((k) => k.timedOut).length, kills)
  checks.expect("W: kills after which the next call was served (on a fresh worker)", result.kills.filter((k) => k.served).length, kills)
  const live = result.kills.map((k) => k.liveWorkers)
  checks.that(
    "W: no worker live right after each kill (pool stats / exit events)",
    live.every((n) => n === 0),
    live.every((n) => n === 0) ? "0 after every kill" : `live after each kill: ${live.join(", ")}`
  )
  if (canCountThreads) {
    checks.that(
      "W: no extra OS thread 100 ms after each kill (/proc/self/task)",
      extra.every((n) => n === 0),
      extra.every((n) => n === 0) ? `0 after each of ${extra.length} kills` : `extra after each kill: ${extra.join(", ")}`
    )
    checks.expect("W: extra OS threads once every worker is closed", leftAtEnd, 0)
  }
  checks.expect("W: round-trip calls that failed", result.failedCalls, 0)
  return {
    samples: {
      overshootMs: measured.map((k) => k.overshootMs),
      tickGapMs: measured.map((k) => k.maxGapMs),
      spawnMs: measured.map((k) => k.spawnMs),
      ...result.roundTrips
    },
    checks: checks.list
  }
}

/** From the sources (the bench's own tests, under tsx), the cold starts run the sources too. */
const fromSources = import.meta.url.endsWith(".ts")
const sibling = (name: string) => fileURLToPath(new URL(`./${name}.${fromSources ? "ts" : "js"}`, import.meta.url))
const coldScript = sibling("cold")
const countModules = sibling("countModules")
const loader = fromSources ? ["--conditions=@agentfx/source", "--import", "tsx"] : []

/** Node's compile cache off in every cold start (issue 34's S: "no compile cache"), whatever this process's environment says. */
const coldEnv = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "NODE_COMPILE_CACHE")), NODE_DISABLE_COMPILE_CACHE: "1" }

/** One fresh `node cold.js <mode>` (preceded by `preload` node options): its JSON lines merged, and its whole wall time as the parent saw it. */
const coldProcess = (mode: string, preload: ReadonlyArray<string> = []) => {
  const start = nowUs()
  const result = spawnSync(process.execPath, [...loader, ...preload, coldScript, mode], { encoding: "utf8", timeout: 60_000, env: coldEnv })
  const processMs = (nowUs() - start) / 1000
  const lines = result.status === 0 ? result.stdout.trim().split("\n") : []
  const fields = Object.assign({}, ...lines.map((line) => JSON.parse(line) as Record<string, unknown>)) as {
    readonly importMs?: number
    readonly completedMs?: number
    readonly text?: string
    readonly modules?: number
  }
  return { ...fields, processMs, failure: result.status === 0 ? undefined : `exit ${result.status ?? result.signal}: ${result.stderr.slice(0, 300)}` }
}

/**
 * S: cold start — a fresh `node` process per sample (`cold.js`): import what the side needs,
 * then one run to its first answer. agentfx: `@agentfx/core` and `effect/Effect`, one
 * `Agent.run` on the scripted model to its `Completed`; the floor: a plain node process that
 * imports nothing. agentfx's side also times, interleaved, a process that imports
 * `effect/Effect` and `effect/Schema` alone (reference: what agentfx cannot load less than).
 * One more process per mode, unmeasured, counts the modules loaded (a loader hook, which slows
 * loading).
 */
const coldStart = async (impl: Impl, config: Config): Promise<ScenarioResult> => {
  const checks = new Checks()
  const samples = samplesOf("importMs", "completedMs", "processMs", "modules", "effectImportMs", "effectCompletedMs", "effectProcessMs", "effectModules")
  const modes = impl.id === "agentfx" ? [impl.id, "effect"] : [impl.id]
  const prefix = (mode: string) => (mode === "effect" ? "effect" : "")
  const key = (mode: string, metric: string) => prefix(mode) === "" ? metric : `${prefix(mode)}${metric[0]!.toUpperCase()}${metric.slice(1)}`
  const failures = new Map<string, string>()
  for (let rep = 0; rep <= config.coldStarts; rep++) {
    for (const mode of modes) {
      const run = coldProcess(mode)
      if (run.text !== "done") failures.set(mode, run.failure ?? `answered ${run.text}`)
      if (rep === 0) continue
      samples[key(mode, "importMs")]?.push(run.importMs!)
      samples[key(mode, "processMs")]?.push(run.processMs)
      samples[key(mode, "completedMs")]?.push(run.completedMs!)
    }
  }
  for (const mode of modes) {
    checks.that(`S: every ${mode} cold start answered "done"`, !failures.has(mode), failures.get(mode) ?? `${config.coldStarts + 1} processes`)
    const counted = coldProcess(mode, ["--import", countModules])
    checks.that(`S: ${mode} modules counted`, counted.modules !== undefined, counted.failure ?? "counted")
    samples[key(mode, "modules")]?.push(counted.modules ?? Number.NaN)
  }
  return { samples, checks: checks.list }
}

/** Every scenario driver by id. */
export const scenarios: Record<ScenarioId, (impl: Impl, config: Config, inject: Inject) => Promise<ScenarioResult>> = {
  A: longLoop,
  B: wideBatch,
  C: concurrent,
  D: timeouts,
  E: cancel,
  W: workers,
  S: coldStart
}

/** One metric of a reference's result, renamed, and its checks labelled with what ran. */
const asReference = (result: ScenarioResult, metric: string, as: string): ScenarioResult => ({
  samples: { [as]: result.samples[metric] ?? [] },
  checks: result.checks.map((check) => ({ ...check, name: `${check.name} (Effect alone)` }))
})

/**
 * A and B for reference, each in a process of its own beside agentfx's: the floor's loop on
 * Effect and Schema alone (`effectLoop.ts`), its headline figure reported on agentfx's side.
 */
export const references: Partial<Record<ScenarioId, (config: Config) => Promise<ScenarioResult>>> = {
  A: async (config) => asReference(await longLoop(effectLoop, config), "perStepUs", "effectPerStepUs"),
  B: async (config) => asReference(await wideBatch(effectLoop, config), "perCallUs", "effectPerCallUs")
}

/**
 * A, B or C run by a peer (`src/peers/`), in a process of its own beside agentfx's: the same
 * driver — warm-up, repetitions, timing, GC, heap, exact counts — at the peer's sizes
 * (`peerConfig`: agentfx's, fewer runs with `--quick`), its checks labelled with the peer.
 */
export const peerScenario = async (scenario: ScenarioId, peer: Peer, config: Config): Promise<ScenarioResult> => {
  const sized = peerConfig(config)
  const result = scenario === "A"
    ? await longLoop(peer, sized)
    : scenario === "B"
    ? await wideBatch(peer, sized)
    : scenario === "C"
    ? await concurrent(peer, sized)
    : undefined
  if (result === undefined) throw new Error(`peers run A, B and C, not ${scenario}`)
  return { samples: result.samples, checks: result.checks.map((check) => ({ ...check, name: `${check.name} (${peerShortNames[peer.id]})` })) }
}
