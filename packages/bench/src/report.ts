/**
 * Turns the samples of every scenario process into figures, ratios to the floor, verdicts
 * against issue 34's targets (with, for a miss, the reference row that shows the floor below
 * agentfx), and the Markdown of RESULTS.md.
 */
import { cancelSection, cancelSummary, cancelVerdict, flatWithin, issueLimitMs, issueWidth } from "./cancelReport.js"
import type { Check } from "./measure.js"
import { median } from "./measure.js"
import type { Config, ImplId, PeerId, ScenarioId } from "./workload.js"
import { peerConfig, peerIds, peerMaxSteps, peerNames, peerShortNames, scenarioIds } from "./workload.js"

/** What one side (the floor, agentfx, a peer) measured in one scenario, pooled over every process that ran it. */
export interface Side {
  samples: Record<string, Array<number>>
  checks: Array<Check>
}

/** Samples and checks of one scenario, per implementation (and per peer, in A, B and C when they ran). */
export type Collected = Record<ScenarioId, Record<ImplId, Side> & Partial<Record<PeerId, Side>>>

/** Where and how the bench ran. */
export interface Environment {
  readonly date: string
  readonly command: string
  readonly cpu: string
  readonly cores: number
  readonly memoryGb: number
  readonly loadAverage: string
  readonly node: string
  readonly effect: string
  /** The AI SDK the peer rows ran (`ai`). */
  readonly ai: string
  readonly commit: string
  readonly durationS: number
  readonly processes: number
}

interface Row {
  readonly scenario: ScenarioId
  readonly label: string
  /** Whose figure it is: agentfx's (its references' included) unless a peer's. */
  readonly peer?: PeerId
  readonly metric: string
  /** The floor's metric when it differs (a figure of agentfx's compared with the same floor). */
  readonly floorMetric?: string
  /** What the figure is of the pooled samples: the median unless said. */
  readonly stat?: "p90" | "max"
  readonly unit: string
  /** A limit on agentfx's figure; no limit: informative row. */
  readonly target?: {
    readonly text: string
    /** The highest figure that meets it, from the floor and the reference measured in the same run. */
    readonly limit: (floor: number, reference: number) => number
  }
  /** The metric (agentfx's side) of the reference row that shows the floor below agentfx: cited when the target is missed. */
  readonly reference?: string
}

/** A target: at most `times` the floor measured in the same run. */
const timesFloor = (times: number): NonNullable<Row["target"]> => ({
  text: `≤ ${times}× the floor`,
  limit: (floor) => times * floor
})

/** A target: at most `max` (in the row's unit). */
const atMost = (max: number, text: string): NonNullable<Row["target"]> => ({ text, limit: () => max })

/** W's rows of one metric, one per statistic of its pooled samples. */
const perStat = (
  stats: ReadonlyArray<"median" | NonNullable<Row["stat"]>>,
  metric: string,
  unit: string,
  label: (stat: string) => string
): Array<Row> =>
  stats.map((stat) => ({ scenario: "W", label: label(stat), metric, unit, ...(stat === "median" ? {} : { stat }) }))

/** A peer's rows in A, B and C: its headline figures, each beside the floor of the same run. */
const peerRows = (config: Config, peer: PeerId): Array<Row> => {
  const name = `peer — ${peerNames[peer]}`
  return [
    { scenario: "A", peer, label: `${name}: µs per step (${config.steps} steps of one tool call)`, metric: "perStepUs", unit: "µs" },
    { scenario: "A", peer, label: `${name}: growth, last-10 / first-10 (per run)`, metric: "growth", unit: "×" },
    { scenario: "B", peer, label: `${name}: µs per tool call (batch of ${config.width})`, metric: "perCallUs", unit: "µs" },
    { scenario: "B", peer, label: `${name}: µs per whole run`, metric: "runUs", unit: "µs" },
    {
      scenario: "C",
      peer,
      label: `${name}: wall time, ${config.runs} runs started at once (tool awaits ${config.timerMs} ms)`,
      metric: "wallMs",
      unit: "ms"
    },
    { scenario: "C", peer, label: `${name}: retained heap per suspended run (${config.runs} suspended, after full GC)`, metric: "heapPerRunBytes", unit: "B" },
    { scenario: "C", peer, label: `${name}: heap left per run once all ended (leak indicator)`, metric: "leftPerRunBytes", unit: "B" }
  ]
}

/** Rows in report order: each scenario's own, then the peers' (A, B and C). */
const rows = (config: Config): ReadonlyArray<Row> => {
  const own = ownRows(config)
  const peers = peerIds.flatMap((peer) => peerRows(config, peer))
  return scenarioIds.flatMap((scenario) => [...own, ...peers].filter((row) => row.scenario === scenario))
}

const ownRows = (config: Config): ReadonlyArray<Row> => [
  {
    scenario: "A",
    label: `µs per step (${config.steps} steps of one tool call)`,
    metric: "perStepUs",
    unit: "µs",
    target: timesFloor(1.6),
    reference: "effectPerStepUs"
  },
  { scenario: "A", label: "CPU µs per step (process CPU time of the run / steps; GC threads included)", metric: "cpuPerStepUs", unit: "µs" },
  {
    scenario: "A",
    label: "reference — Effect alone: µs per step of the floor's loop on Effect and Schema (arguments decoded, result encoded), no agent",
    metric: "effectPerStepUs",
    floorMetric: "perStepUs",
    unit: "µs"
  },
  { scenario: "A", label: "µs per step, first 10 steps", metric: "first10Us", unit: "µs" },
  { scenario: "A", label: "µs per step, last 10 steps", metric: "last10Us", unit: "µs" },
  {
    scenario: "A",
    label: "growth: last-10 / first-10 (per run)",
    metric: "growth",
    unit: "×",
    target: atMost(1.2, "≤ 1.2 (flat)")
  },
  {
    scenario: "B",
    label: `µs per tool call (batch of ${config.width}: first to second model call, / ${config.width})`,
    metric: "perCallUs",
    unit: "µs",
    target: timesFloor(4),
    reference: "effectPerCallUs"
  },
  {
    scenario: "B",
    label: "reference — Effect alone: µs per tool call of the floor's loop on Effect and Schema, each call in a fiber of its own (`Effect.runForkWith`), no agent",
    metric: "effectPerCallUs",
    floorMetric: "perCallUs",
    unit: "µs"
  },
  { scenario: "B", label: "µs per whole run (2 model calls, 50 tool calls)", metric: "runUs", unit: "µs" },
  { scenario: "B", label: "CPU µs per whole run (GC threads included)", metric: "cpuRunUs", unit: "µs" },
  {
    scenario: "C",
    label: `wall time, ${config.runs} runs started at once (tool awaits ${config.timerMs} ms)`,
    metric: "wallMs",
    unit: "ms",
    target: timesFloor(1.6),
    reference: "effectWallMs"
  },
  {
    scenario: "C",
    label: `retained heap per suspended run (${config.runs} suspended, after full GC)`,
    metric: "heapPerRunBytes",
    unit: "B",
    target: atMost(2.5 * 1024, "≤ 2.5 KB"),
    reference: "effectHeapPerRunBytes"
  },
  {
    scenario: "C",
    label: "heap left per run once all ended, over every measured batch (leak indicator)",
    metric: "leftPerRunBytes",
    unit: "B"
  },
  {
    scenario: "C",
    label: `reference — Effect alone: wall time of ${config.runs} bare fibers doing only what the tool does (\`Effect.sleep(${config.timerMs})\`), no agent`,
    metric: "effectWallMs",
    floorMetric: "wallMs",
    unit: "ms"
  },
  {
    scenario: "C",
    label: "reference — Effect alone: retained heap per bare fiber awaiting the same latch, no agent",
    metric: "effectHeapPerRunBytes",
    floorMetric: "heapPerRunBytes",
    unit: "B"
  },
  {
    scenario: "C",
    label: "reference — retained heap per suspended run when the tool awaits an Effect `Deferred` as its latch",
    metric: "deferredHeapPerRunBytes",
    floorMetric: "heapPerRunBytes",
    unit: "B"
  },
  {
    scenario: "D",
    label: `µs per timeout (wall / ${config.timeouts}; ${config.permits} permits, ${config.timeoutMs} ms timeout: ideal ${
      (config.timeoutMs * 1000) / config.permits
    } µs)`,
    metric: "perTimeoutUs",
    unit: "µs"
  },
  ...perStat(["median", "p90", "max"], "overshootMs", "ms", (stat) =>
    `${stat}: overshoot — from the call's start to its timeout result, minus the ${config.deadlineMs} ms deadline (\`while (true) {}\`, warm worker)`),
  ...perStat(["median", "max"], "tickGapMs", "ms", (stat) => `${stat}: largest gap of a 10 ms main-thread ticker during a kill`),
  ...perStat(["median", "max"], "spawnMs", "ms", (stat) => `${stat}: spawn + import + first call (the call after a kill, on a fresh worker)`),
  {
    scenario: "W",
    label: "round trip on a warm worker, whole tool path (`executeBatch`, 1 s timeout); floor: post + reply, 1 s timer",
    metric: "roundTripUs",
    unit: "µs"
  },
  {
    scenario: "W",
    label: "round trip, `WorkerPool.run` alone (no tool path, no timeout); same floor",
    metric: "poolRoundTripUs",
    floorMetric: "roundTripUs",
    unit: "µs"
  },
  {
    scenario: "W",
    label: "the same echo as an in-process tool (1 s timeout), for comparison",
    metric: "inProcessUs",
    unit: "µs"
  },
  {
    scenario: "S",
    label: "from the process's start to the first answer (agentfx: `Completed` of one `Agent.run` on the scripted model)",
    metric: "completedMs",
    unit: "ms",
    target: {
      text: "≤ 250 ms and ≤ 1.25× `effect/Effect` + `effect/Schema` alone (the reference below)",
      limit: (_, reference) => Number.isNaN(reference) ? 250 : Math.min(250, 1.25 * reference)
    },
    reference: "effectCompletedMs"
  },
  { scenario: "S", label: "import (agentfx: `@agentfx/core` and `effect/Effect`; floor: nothing)", metric: "importMs", unit: "ms" },
  { scenario: "S", label: "whole process, spawn to exit (as the parent sees it)", metric: "processMs", unit: "ms" },
  { scenario: "S", label: "ES modules loaded", metric: "modules", unit: "" },
  {
    scenario: "S",
    label: "reference — `effect/Effect` and `effect/Schema` alone (no agentfx, no run): from the process's start to imported",
    metric: "effectCompletedMs",
    floorMetric: "completedMs",
    unit: "ms"
  },
  {
    scenario: "S",
    label: "reference — `effect/Effect` and `effect/Schema` alone: import",
    metric: "effectImportMs",
    floorMetric: "importMs",
    unit: "ms"
  },
  {
    scenario: "S",
    label: "reference — `effect/Effect` and `effect/Schema` alone: whole process",
    metric: "effectProcessMs",
    floorMetric: "processMs",
    unit: "ms"
  },
  { scenario: "S", label: "reference — `effect/Effect` and `effect/Schema` alone: ES modules loaded", metric: "effectModules", floorMetric: "modules", unit: "" }
]

const format = (x: number, unit: string): string => {
  if (!Number.isFinite(x)) return "–"
  if (unit === "B") return Math.abs(x) >= 1024 ? `${(x / 1024).toFixed(1)} KB` : `${x.toFixed(0)} B`
  if (unit === "×") return `${x.toFixed(2)}×`
  if (unit === "") return x.toFixed(0)
  return `${x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)} ${unit}`
}

const quantile = (xs: ReadonlyArray<number>, q: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

const statOf = (xs: ReadonlyArray<number>, stat: Row["stat"]): number =>
  stat === undefined ? median(xs) : stat === "p90" ? quantile(xs, 0.9) : xs.length === 0 ? Number.NaN : Math.max(...xs)

const spread = (xs: ReadonlyArray<number>, unit: string, stat: Row["stat"]) =>
  xs.length < 4 || stat !== undefined ? `n=${xs.length}` : `IQR ${format(quantile(xs, 0.25), unit)}–${format(quantile(xs, 0.75), unit)}, n=${xs.length}`

/** One evaluated figure. */
export interface Figure {
  readonly row: Row
  readonly agentfx: number
  readonly floor: number
  readonly ratio: number
  /** agentfx's figure of the row's reference; NaN without one. */
  readonly reference: number
  /** The target's limit in the row's unit; NaN without a target. */
  readonly limit: number
  /** `undefined` when the row has no target. */
  readonly pass: boolean | undefined
  /** The verdict in words: "pass" or "**miss**"; empty without a target. */
  readonly verdict: string
}

/** Medians, ratios and verdicts of every row that has samples. */
export const figures = (config: Config, collected: Collected): Array<Figure> =>
  rows(config).flatMap((row) => {
    const both = collected[row.scenario]
    if (both === undefined) return []
    const side = row.peer === undefined ? both.agentfx : both[row.peer]
    if (side === undefined) return [] // the peers did not run
    const agentfx = statOf(side.samples[row.metric] ?? [], row.stat)
    const floor = statOf(both.floor.samples[row.floorMetric ?? row.metric] ?? [], row.stat)
    const reference = row.reference === undefined ? Number.NaN : statOf(both.agentfx.samples[row.reference] ?? [], row.stat)
    const limit = row.target?.limit(floor, reference) ?? Number.NaN
    const pass = row.target === undefined ? undefined : agentfx <= limit
    const verdict = pass === undefined ? "" : pass ? "pass" : "**miss**"
    return [{ row, agentfx, floor, ratio: agentfx / floor, reference, limit, pass, verdict }]
  })

/** Every check of every process, labelled with its implementation. */
export const allChecks = (collected: Partial<Collected>): Array<Check & { readonly impl: ImplId | PeerId }> =>
  Object.values(collected).flatMap((sides) =>
    (["floor", "agentfx", ...peerIds] as const).flatMap((impl) => (sides[impl]?.checks ?? []).map((check) => ({ ...check, impl })))
  )

/** A multiple, with fewer digits as it grows. */
const times = (x: number): string => `${x >= 10 ? x.toFixed(0) : x.toFixed(1)}×`

/** The figures the peers are compared on, beside agentfx's and the floor's of the same run. */
const peerCompared: ReadonlyArray<readonly [ScenarioId, string]> = [["A", "perStepUs"], ["B", "perCallUs"], ["C", "wallMs"], ["C", "heapPerRunBytes"]]

/** The peers beside agentfx, one phrase per compared figure; `undefined` when no peer ran. */
const peerLine = (all: ReadonlyArray<Figure>): string | undefined => {
  const phrases = peerCompared.flatMap(([scenario, metric]) => {
    const of = all.filter((f) => f.row.scenario === scenario && f.row.metric === metric)
    const own = of.find((f) => f.row.peer === undefined)
    const peers = of.filter((f) => f.row.peer !== undefined)
    if (own === undefined || peers.length === 0) return []
    const unit = own.row.unit
    return [
      `${scenario} ${shortNames[metric]}: agentfx ${format(own.agentfx, unit)}, ${
        peers.map((p) => `${peerShortNames[p.row.peer!]} ${format(p.agentfx, unit)} (${times(p.agentfx / own.agentfx)} agentfx's)`).join(", ")
      }, floor ${format(own.floor, unit)}`
    ]
  })
  return phrases.length === 0 ? undefined : `Peers, same run (no target): ${phrases.join("; ")}.`
}

/** What each reference row is, in a line saying why a target was missed. */
const referenceNames = (config: Config): Record<string, string> => ({
  effectPerStepUs: "the floor's loop on Effect and Schema alone, no agent",
  effectPerCallUs: "the floor's loop on Effect and Schema alone, a fiber per call, no agent",
  effectWallMs: `${config.runs} bare fibers doing only what the tool does`,
  effectHeapPerRunBytes: "a bare Effect fiber awaiting the same latch",
  effectCompletedMs: "a process importing `effect/Effect` and `effect/Schema` alone"
})

/**
 * For a missed target with a reference row: agentfx's figure, what the reference (the floor
 * below agentfx: Effect itself doing the same work) takes, whether the target is already under
 * it, and what agentfx adds to it.
 */
const whyMissed = (config: Config, f: Figure): string | undefined => {
  if (f.pass !== false || f.row.reference === undefined || Number.isNaN(f.reference)) return undefined
  const unit = f.row.unit
  const room = f.reference >= f.limit
    ? `already over the target's ${format(f.limit, unit)} before agentfx adds anything`
    : `which leaves agentfx ${format(f.limit - f.reference, unit)} under the target's ${format(f.limit, unit)}`
  return `**Why missed — ${shortNames[f.row.metric] ?? f.row.metric}:** agentfx ${format(f.agentfx, unit)}, ${times(f.ratio)} the floor (${
    format(f.floor, unit)
  }); the reference row, ${referenceNames(config)[f.row.reference]}, takes ${format(f.reference, unit)} (${times(f.reference / f.floor)} the floor), ${room}; agentfx adds ${
    format(f.agentfx - f.reference, unit)
  } to it. Where that goes and what is left: [docs/performance.md](../../docs/performance.md).`
}

/** A short plain-text summary for the console. */
export const summary = (config: Config, collected: Partial<Collected>): string => {
  const all = figures(config, collected as Collected)
  return [
    ...all.map((f) =>
      `${f.row.scenario} ${f.row.label}: ${f.row.peer === undefined ? "agentfx" : peerShortNames[f.row.peer]} ${format(f.agentfx, f.row.unit)}, floor ${format(f.floor, f.row.unit)}, ${
        Number.isFinite(f.ratio) ? `${f.ratio.toFixed(1)}×` : "no ratio"
      }${f.verdict === "" ? "" : ` — ${f.verdict.replaceAll("**", "")}`}`
    ),
    ...(collected.E === undefined ? [] : cancelSummary(config, collected.E)),
    ...[peerLine(all)].filter((line) => line !== undefined)
  ].join("\n")
}

const peers = `| | per loop step | per tool call (50-wide batch) | retained heap per suspended run |
|---|---|---|---|
| plain async/await loop | 0.9 µs | 0.18 µs | 2.4 KB |
| Vercel AI SDK | 942 µs | 31 µs | 14 KB |
| OpenAI Agents JS | 3,033 µs | 68 µs | 34 KB |
| LangGraph.js | 1,646 µs | 107 µs | 48 KB |
| @effect/ai | 1,826 µs | 154 µs | 73 KB |`

/** How each scenario's figures are taken (under its table; E's are in `cancelSection`). */
const notes: Record<Exclude<ScenarioId, "E">, string> = {
  S: "Each sample is a fresh `node` process (`src/cold.js`, built JavaScript, no flags), floor and agentfx alternating process by process within the driver's rounds, one unmeasured start first. agentfx: `await import(\"@agentfx/core\")` and `effect/Effect`, then `Agent.run` of an agent without tools on `ScriptedChatModel.layer` answering with text, until its `Completed`; the floor: a node process that imports nothing and awaits one fake model answer. The first row counts from the process's time origin (node's own start-up included), so the floor's figure is node's start-up. The reference rows time a process that imports `effect/Effect` and `effect/Schema` and nothing else: what agentfx's effects and data need before any module of agentfx loads (decision 112). Modules are counted in one more process per side with a loader hook (`src/countModules.js`), not timed.",
  A: "A step is the time from one model call to the next (each model answer is time-stamped); the whole-run figure is first to last model call over the steps; the median is over runs.",
  B: "Per tool call: from the first model call to the second (the gate, the 50 calls, their results) over 50.",
  C: "Each run is its own fiber (`ManagedRuntime.runPromise` on a runtime built before the runs start, as a server's is), as each floor run is its own promise. Wall: the tool awaits a 20 ms timer (`Effect.sleep`; the floor: a `setTimeout` promise). Heap: all runs suspended in their tool on a latch, full GC, minus the heap before they started, over the runs; the latch is a promise on both sides (`Effect.promise` in agentfx), so the figure compares runtimes, not latch implementations. The reference rows show what Effect itself costs (bare fibers doing only what the tool does, no agent) and what a run retains when its tool awaits an Effect `Deferred` instead (`Deferred.await` keeps three frames of its own): docs/performance.md.",
  D: "Leak checks after the timeouts: agentfx — no live fibers (fibers started under the runs minus those ended, counted by a `Metric.FiberRuntimeMetrics` service), no live timers, and exactly `permits` of `permits + 1` latched probe calls start at once under the same Layer (fewer: a permit leaked; more: one was released twice); floor — semaphore count, live timers, same probe. `pnpm bench --only=D --inject=permit` (or `fiber`) plants a leak and fails.",
  W: "agentfx: worker tools (`isolation: \"worker\"`, module `src/workers/tools.mjs`) through `ToolCallingManager.executeBatch` under `WorkerPool.layer({ size: 1 })` (`src/workerMeasures.ts`, shared with `examples/worker-tools.ts`): `spin` (`while (true) {}`) with a 200 ms timeout until its `ToolTimeout`, then `echo`, for which the pool spawns a fresh worker. Floor: raw `node:worker_threads` with a hand-written entry, a worker per kill, `terminate()` at a 200 ms `setTimeout`, then a new worker for `echo`; one persistent worker for its round trips. Both import the same module, one warm-up kill first. Overshoot counts from the call's start, so agentfx's includes what precedes its deadline (executor, worker reservation); a bare `setTimeout` of 200 ms fires ~0.5 ms late here, `Effect.sleep` ~1 ms, and `terminate()` of a spinning worker takes ~2 ms. Round trips across threads on this VM swing between ~20 and ~70 µs with thread wake-up (both sides, from process to process), so their ratios are rough. Checks: every kill ended by its deadline, the next call was served after each, no worker live right after each kill and no extra OS thread (`/proc/self/task`) 100 ms after it, none once all is closed. `pnpm bench --only=W --inject=terminate` makes one `Worker#terminate()` leave its thread running and fails, on both sides."
}

/** Under A's, B's and C's tables when the peers ran: how each peer does the scenario's work, and what differs. */
const peerNotes: Record<"A" | "B" | "C", (config: Config) => ReadonlyArray<string>> = {
  A: (config) => {
    const sized = peerConfig(config)
    return [
      `**Peers** (\`src/peers/\`), each in processes of its own after agentfx's, every round: the same work with fewer repetitions, as a peer's step costs hundreds of µs (per process: A ${sized.aWarmup} warm-up runs, then ${sized.aReps} measured; B ${sized.bWarmup} and ${sized.bReps}; C ${sized.cWallReps} timed burst(s) and ${sized.cHeapReps} heap burst(s)). The AI SDK's tool loop: \`generateText\` with \`stopWhen: isStepCount(${peerMaxSteps})\` on \`MockLanguageModelV4\` from \`ai/test\` (its call log emptied at each call, as agentfx's scripted model keeps none), one tool made by \`tool({ inputSchema: z.object(…), execute })\` — a tool call's input comes as a JSON string, as from a provider, parsed and validated by zod. Effect 4's \`effect/ai\`: \`Chat.empty\`, then \`chat.streamText({ prompt, toolkit, maxSteps: ${peerMaxSteps} })\` folded to its text, on a model built by \`LanguageModel.make\` whose \`streamText\` emits each round as one chunk, one \`Tool.make\` tool with Schema parameters and success, its handler resolved once (the toolkit provided its \`toLayer\` handlers). Both models answer from the last tool result like every side's; each run's model calls and tool calls are counted (in the model, in the handler), checked against the run's own record (the SDK's \`steps\` and their \`toolResults\`; the tool results in the chat's stream) and asserted exactly, with its text. A peer's step is its loop's whole step: what it does that the floor's loop does not (the prompt rebuilt from the history, the model's parts decoded, the step recorded) is its cost.`
    ]
  },
  B: (config) => [
    `**Peers**: the same loops and models, one ${config.width}-wide batch. The AI SDK runs a step's calls at once (\`toolCallConcurrency\` unset), each an \`execute\` promise; effect/ai runs each call's handler in a fiber of its own (the toolkit's \`handle\`, \`concurrency\` unset: unbounded).`
  ],
  C: (config) => [
    `**Peers**: the same ${config.runs} runs started at once, each its own promise (\`generateText\`) or its own fiber (\`Effect.runPromise\` of a fresh \`Chat\`'s \`streamText\`), one model for all of them built before they start; the tool awaits the same ${config.timerMs} ms timer (a \`setTimeout\` promise; \`Effect.sleep\`) or, for the heap, the same promise latch (\`await\`; \`Effect.promise\`), so the heap compares loops, not latches. A full GC before each burst, as for every side. The Effect-alone and \`Deferred\` reference rows are agentfx's only.`
  ]
}

const titles: Record<ScenarioId, string> = {
  A: "A — long loop",
  B: "B — wide batch (`unbounded` manager)",
  C: "C — concurrency",
  D: "D — timeouts under `bounded({ permits: 4 })`",
  E: "E — cancel a batch of running calls: time against its width",
  W: "W — worker-isolated tools: kill at the deadline, spawn, round trip",
  S: "S — cold start: import to the first answer, a fresh process each"
}

const shortNames: Record<string, string> = {
  perStepUs: "µs per step",
  growth: "flatness",
  perCallUs: "µs per tool call",
  wallMs: "wall time",
  heapPerRunBytes: "heap per suspended run",
  completedMs: "time to the first answer"
}

/** One phrase per scenario: which targets it met and which it missed (D's and W's target is their leak checks; E's its linearity too). */
const verdicts = (config: Config, collected: Collected, all: ReadonlyArray<Figure>, checks: ReadonlyArray<Check>): string =>
  scenarioIds.flatMap((scenario) => {
    if (scenario === "E") {
      return collected.E === undefined ? [] : [cancelVerdict(config, collected.E, checks.filter((c) => c.name.startsWith("E")))]
    }
    const judged = all.filter((f) => f.row.scenario === scenario && f.pass !== undefined)
    if (scenario === "D" || scenario === "W") {
      const leaks = checks.filter((c) => c.name.startsWith(scenario))
      return leaks.length === 0 ? [] : [`${scenario} ${leaks.every((c) => c.ok) ? "met" : "**missed**"} (no leaks)`]
    }
    if (judged.length === 0) return []
    const missed = judged.filter((f) => !f.pass).map((f) => shortNames[f.row.metric] ?? f.row.metric)
    return [`${scenario} ${missed.length === 0 ? "met" : `**missed** (${missed.join(", ")})`}`]
  }).join("; ")

/** The Markdown of RESULTS.md; `kept`: the sections of the file it replaces that it keeps (the cluster bench's, the last run on Effect 3: `cluster/results.ts`). */
export const markdown = (config: Config, collected: Collected, env: Environment, kept = ""): string => {
  const all = figures(config, collected)
  const checks = allChecks(collected)
  const failed = checks.filter((c) => !c.ok)
  const lines: Array<string> = [
    "# agentfx runtime overhead — results",
    "",
    `Written by \`${env.command}\` on ${env.date} (${env.durationS.toFixed(0)} s, ${env.processes} processes). Do not edit by hand.`,
    "",
    `- Machine: ${env.cpu}, ${env.cores} cores, ${env.memoryGb.toFixed(0)} GB; load average at start ${env.loadAverage} (other work ran concurrently: figures are medians of repeated runs, and ratios compare with the floor measured in the same bench run).`,
    `- Node ${env.node}, effect ${env.effect}, ai ${env.ai} (the AI SDK peer), agentfx at ${env.commit}.`,
    "- Each scenario ran in fresh `node --expose-gc` processes, alternating floor and agentfx, after a warm-up. agentfx runs through its public API (`Agent.make`, `Agent.run`, `ScriptedChatModel.layer(fn, { recordRequests: false })`, the manager Layers; for E, `ToolCallingManager.executeBatch` and `Agent.run` stopped by `Fiber.interrupt`; for W, worker tools through `ToolCallingManager.executeBatch` under `WorkerPool.layer`); the floor is a hand-written async/await loop doing the same work (messages array, a fake model answering from the last tool result, tool calls awaited, results appended; for E, promises awaiting an `AbortSignal`; for W, raw `node:worker_threads`). In A–D each model answer is computed from the last tool result it is given, and every run's model-call and tool-call counts are asserted exactly.",
    ...(all.some((f) => f.row.peer !== undefined)
      ? [
        "- Peers, in A, B and C: the AI SDK's tool loop (`ai`'s `generateText` with tools, on its `MockLanguageModelV4`) and Effect 4's own `effect/ai` (`Chat.streamText` with `maxSteps`, on a model built by `LanguageModel.make`), each in processes of its own after agentfx's, doing the same work (the same decisions from the last tool result, the same tools, every run's counts asserted exactly). Their rows are beside the floor of the same run and have no target; how each does the scenario, and what differs, is under its table."
      ]
      : []),
    `- Targets are issue 34's: A ≤ 1.6× the floor measured in the same run (µs per step; flat, issue 25's), B ≤ 4× (µs per tool call), C's wall of ${config.runs} runs at once ≤ 1.6× (a full GC before each burst, on both sides), C's retained heap ≤ 2.5 KB per suspended run, S ≤ 250 ms from the process's start to the first answer (Node ${env.node}, no compile cache) and ≤ 1.25× a process importing \`effect/Effect\` and \`effect/Schema\` alone, E: cancelling ${
      issueWidth.toLocaleString("en-US")
    } running calls ≤ ${issueLimitMs} ms, the CPU per call flat (≤ ${flatWithin}×) from the narrowest batch to the widest. Under a table, each missed target is set beside its reference row — Effect doing the same work without agentfx, the floor below agentfx — to say why.`,
    `- Both sides run as built JavaScript (\`tsc\` output: agentfx's \`dist/\`, as published) under plain \`node\`, no tsx or loader. ${
      all.some((f) => f.row.target !== undefined && !f.pass) ? "Causes of the misses and what would fix them" : "What each figure costs, how it was brought down, and what is left"
    }: [docs/performance.md](../../docs/performance.md).`,
    "",
    `**Verdict:** ${verdicts(config, collected, all, checks)}.`,
    "",
    ...[peerLine(all)].filter((line) => line !== undefined).flatMap((line) => [`**${line.replace(": ", ":** ")}`, ""])
  ]
  const checksLine = (scenario: ScenarioId) => {
    const scenarioChecks = checks.filter((c) => c.name.startsWith(scenario))
    const bad = scenarioChecks.filter((c) => !c.ok)
    return `Checks (counts${scenario === "A" || scenario === "B" || scenario === "C" ? "" : ", leaks"}): ${scenarioChecks.length - bad.length}/${scenarioChecks.length} passed${
      bad.length > 0 ? ` — FAILED: ${bad.map((c) => `${c.impl}: ${c.name} (${c.detail})`).join("; ")}` : ""
    }.`
  }
  for (const scenario of scenarioIds) {
    if (scenario === "E") {
      if (collected.E !== undefined) lines.push(`## ${titles.E}`, "", ...cancelSection(config, collected.E, checksLine("E")), "")
      continue
    }
    const rowsOf = all.filter((f) => f.row.scenario === scenario)
    if (rowsOf.length === 0) continue
    const withPeers = rowsOf.some((f) => f.row.peer !== undefined)
    lines.push(
      `## ${titles[scenario]}`,
      "",
      `| figure | ${withPeers ? "agentfx (peer rows: the peer)" : "agentfx"} | floor | ${withPeers ? "÷ floor" : "agentfx / floor"} | target | result |`,
      "|---|---|---|---|---|---|"
    )
    for (const f of rowsOf) {
      const samples = (f.row.peer === undefined ? collected[scenario].agentfx : collected[scenario][f.row.peer])?.samples[f.row.metric] ?? []
      const floorSamples = collected[scenario].floor.samples[f.row.floorMetric ?? f.row.metric] ?? []
      lines.push(
        `| ${f.row.label} | ${format(f.agentfx, f.row.unit)} <sub>${spread(samples, f.row.unit, f.row.stat)}</sub> | ${
          format(f.floor, f.row.unit)
        } <sub>${spread(floorSamples, f.row.unit, f.row.stat)}</sub> | ${Number.isFinite(f.ratio) ? `${f.ratio.toFixed(1)}×` : "–"} | ${
          f.row.target?.text ?? ""
        } | ${f.verdict} |`
      )
    }
    const peerNote = withPeers && (scenario === "A" || scenario === "B" || scenario === "C") ? peerNotes[scenario](config) : []
    const why = rowsOf.flatMap((f) => [whyMissed(config, f)].filter((line) => line !== undefined))
    lines.push("", ...why.flatMap((line) => [line, ""]), checksLine(scenario), "", notes[scenario], "", ...peerNote.flatMap((note) => [note, ""]))
  }
  if (kept !== "") lines.push(kept, "")
  lines.push(
    "## Measured elsewhere",
    "",
    "- **Persistence** (a durable run store's writes per step, resumes per second on PostgreSQL): `pnpm bench:store`, figures in [docs/persistence.md](../../docs/persistence.md).",
    "- **Cluster failures** (failover after a SIGKILL or a SIGTERM, cold clients): `pnpm bench:cluster --failover`, figures in [docs/cluster.md](../../docs/cluster.md).",
    "",
    "## For context: peer figures quoted from the issue (not measured by us; the AI SDK and effect/ai are measured above, in A, B and C)",
    "",
    peers,
    "",
    `All checks: ${checks.length - failed.length}/${checks.length} passed.`,
    ""
  )
  return lines.join("\n")
}
