/**
 * Scenario E's figures — cancel time against the width of the batch — and its tables: per way
 * and width the median wall and CPU time of the cancel, per call, and whether the cost per call
 * is flat in the width.
 */
import type { Check } from "./measure.js"
import { median } from "./measure.js"
import type { CancelWay, Config, ImplId } from "./workload.js"
import { agentfxCancelWays, cancelMetric } from "./workload.js"

/** The samples of scenario E, per implementation. */
export type CancelSamples = Record<ImplId, { readonly samples: Record<string, ReadonlyArray<number>> }>

/**
 * Issue 34's flatness rule: the median CPU time of the cancel per call at the widest batch
 * (1,000 calls in the full bench) is at most this multiple of the one at the narrowest (100).
 * CPU time, not wall time: on a shared machine a longer cancel is more often paused for other
 * processes, which wall time counts. A cost growing with the square of the width reads 10×.
 */
export const flatWithin = 1.5

/** Issue 34's bound: a batch of `issueWidth` running calls is cancelled within `issueLimitMs`. */
export const issueWidth = 1000
export const issueLimitMs = 5

const thousands = (n: number) => n.toLocaleString("en-US")

/** One way of cancelling, at every width. */
export interface CancelFigure {
  readonly way: CancelWay
  /** Median µs of the cancel, per width (in the order of `config.eWidths`); NaN where nothing was measured. */
  readonly wallUs: ReadonlyArray<number>
  readonly cpuUs: ReadonlyArray<number>
  /** µs per call at the widest batch over µs per call at the narrowest, wall and CPU. */
  readonly wallGrowth: number
  readonly cpuGrowth: number
  /** `cpuGrowth` within the rule. */
  readonly flat: boolean
  /** Whether the cancel of `issueWidth` calls took at most `issueLimitMs` (wall); `undefined` when that width was not measured. */
  readonly withinLimit: boolean | undefined
}

/** µs per call at the widest batch over µs per call at the narrowest. */
const growth = (config: Config, us: ReadonlyArray<number>): number =>
  (us[us.length - 1]! / config.eWidths[config.eWidths.length - 1]!) / (us[0]! / config.eWidths[0]!)

/** Every way that has samples, the floor first. */
export const cancelFigures = (config: Config, both: CancelSamples): Array<CancelFigure> =>
  (["floor", ...agentfxCancelWays] as const).flatMap((way) => {
    const samples = both[way === "floor" ? "floor" : "agentfx"].samples
    const of = (quantity: "wallUs" | "cpuUs") => config.eWidths.map((width) => median(samples[cancelMetric(quantity, way, width)] ?? []))
    const wallUs = of("wallUs")
    if (wallUs.every((x) => Number.isNaN(x))) return []
    const cpuUs = of("cpuUs")
    const cpuGrowth = growth(config, cpuUs)
    const at = config.eWidths.indexOf(issueWidth)
    return [{
      way,
      wallUs,
      cpuUs,
      wallGrowth: growth(config, wallUs),
      cpuGrowth,
      flat: cpuGrowth <= flatWithin,
      withinLimit: at === -1 ? undefined : wallUs[at]! <= issueLimitMs * 1000
    }]
  })

/** Whether a way is judged: agentfx's, not the floor or the Effect-alone reference. */
const judged = (way: CancelWay): boolean => way !== "floor" && way !== "effect-alone"

/** What the agentfx ways missed: the flatness rule, the issue's bound. */
const misses = (figures: ReadonlyArray<CancelFigure>): Array<string> =>
  figures.filter((f) => judged(f.way)).flatMap((f) => [
    ...(f.flat ? [] : [`${f.way} not flat (CPU per call ${f.cpuGrowth.toFixed(2)}×)`]),
    ...(f.withinLimit === false ? [`${f.way} over ${issueLimitMs} ms at ${thousands(issueWidth)}`] : [])
  ])

const wayLabel = (way: CancelWay, permits: number): string =>
  ({
    floor: "floor: promises awaiting one `AbortSignal`, `abort()`",
    "batch-unbounded": "`executeBatch`, `unbounded()`",
    "batch-bounded": `\`executeBatch\`, \`bounded({ permits: ${permits} })\``,
    "run-unbounded": "`Agent.run`, `unbounded()`",
    "run-bounded": `\`Agent.run\`, \`bounded({ permits: ${permits} })\``,
    "effect-alone": "reference — Effect alone: `Effect.forEach` (unbounded) of the same handler, no agentfx"
  })[way]

const ms = (us: number): string => Number.isNaN(us) ? "–" : `${(us / 1000).toFixed(us >= 10_000 ? 1 : 2)} ms`
const perCall = (us: number, width: number): string => Number.isNaN(us) ? "" : `${(us / width).toFixed(2)} µs/call`

/** One table (wall or CPU) of every way against every width; the wall table judges the issue's bound, the CPU table flatness. */
const table = (config: Config, figures: ReadonlyArray<CancelFigure>, quantity: "wallUs" | "cpuUs"): Array<string> => {
  const wall = quantity === "wallUs"
  const bound = wall && config.eWidths.includes(issueWidth)
  const head = [
    "way",
    ...config.eWidths.map((w) => `${thousands(w)} calls`),
    `per call: ${thousands(config.eWidths.at(-1)!)} / ${thousands(config.eWidths[0]!)}`,
    ...(wall ? [] : [`flat (≤ ${flatWithin}×)`]),
    ...(bound ? [`${thousands(issueWidth)} within ${issueLimitMs} ms`] : [])
  ]
  const word = (ok: boolean, way: CancelWay) => (ok ? "yes" : judged(way) ? "**no**" : "no")
  return [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...figures.map((f) => {
      const cells = f[quantity].map((us, i) => `${ms(us)} <sub>${perCall(us, config.eWidths[i]!)}</sub>`)
      const verdicts = [
        `${(wall ? f.wallGrowth : f.cpuGrowth).toFixed(2)}×`,
        ...(wall ? [] : [word(f.flat, f.way)]),
        ...(bound ? [f.withinLimit === undefined ? "–" : word(f.withinLimit, f.way)] : [])
      ]
      return `| ${[wayLabel(f.way, config.ePermits), ...cells, ...verdicts].join(" | ")} |`
    })
  ]
}

/** When an agentfx way misses a target: what it missed, beside what Effect alone (the reference row) takes for the same cancel. */
const why = (config: Config, figures: ReadonlyArray<CancelFigure>): Array<string> => {
  const missed = misses(figures)
  const alone = figures.find((f) => f.way === "effect-alone")
  if (missed.length === 0 || alone === undefined) return []
  const at = config.eWidths.indexOf(issueWidth)
  const widest = at === -1 ? config.eWidths.length - 1 : at
  return [
    `**Why missed** (${missed.join(", ")}): the reference row, Effect alone (\`Effect.forEach\` of the same handler, no agentfx), takes ${
      ms(alone.wallUs[widest]!)
    } to cancel ${thousands(config.eWidths[widest]!)} calls (the floor ${ms(figures.find((f) => f.way === "floor")?.wallUs[widest] ?? Number.NaN)}), its CPU per call ${
      alone.cpuGrowth.toFixed(2)
    }× from ${thousands(config.eWidths[0]!)} to ${thousands(config.eWidths.at(-1)!)}: what is above it is agentfx's (docs/performance.md).`,
    ""
  ]
}

/** The E section of RESULTS.md, below its title. */
export const cancelSection = (config: Config, both: CancelSamples, checksLine: string): Array<string> => {
  const figures = cancelFigures(config, both)
  return [
    "Wall time from the cancel until it returned (median; per call: over the batch's width, calls waiting for a permit included):",
    "",
    ...table(config, figures, "wallUs"),
    "",
    "CPU time of the process over the same span (every thread, GC included):",
    "",
    ...table(config, figures, "cpuUs"),
    "",
    ...why(config, figures),
    checksLine,
    "",
    `Each round starts a batch of calls to one tool whose handler takes a resource (\`Effect.acquireUseRelease\`: taken, then \`Effect.never\`, released by the finalizer), waits until every call holds it — under \`bounded({ permits: ${config.ePermits} })\` the first ${config.ePermits} hold theirs and the rest wait for a permit — and times \`Fiber.interrupt\` of the batch's fiber (\`ToolCallingManager.executeBatch\`) or of the run's (\`Agent.run\`, whose model's first answer is the batch), from inside the runtime, until it returns. Runtimes are built once per manager, as an app's are. The floor: N promises, each taking a resource and releasing it in a \`finally\`, awaiting one \`AbortSignal\`; from \`abort()\` until \`Promise.allSettled\` of all of them resolves. The reference row runs the same handler under \`Effect.forEach\` with unbounded concurrency, no agentfx: what Effect's own fan-out costs to stop. Flat (issue 34): the median CPU time per call at the widest batch is at most ${flatWithin}× the one at the narrowest — CPU, because on this shared machine a longer cancel is more often paused for other processes, which wall time counts (a cost that grew with the square of the width, as it did before the reshape — each interrupted call interrupted all its siblings again — would be ${
      thousands(config.eWidths.at(-1)! / config.eWidths[0]!)
    }× here). Checks, every round: the work ended interrupted (the floor: every promise rejected with the abort's reason), exactly the calls that should hold a resource held one, and every one was released by its finalizer by the time the cancel returned; agentfx: no permit held (\`freePermits\`) after every round, and no live fiber (fibers started under the batch minus those ended, counted by a \`Metric.FiberRuntimeMetrics\` service) after each warm-up round — tracking costs per fiber, so measured rounds are untracked. \`pnpm bench --only=E --inject=permit\` (a call outside the rounds holds a permit) or \`--inject=fiber\` (a handler forks a fiber that never ends) fails them.`
  ]
}

/** E's console lines. */
export const cancelSummary = (config: Config, both: CancelSamples): Array<string> =>
  cancelFigures(config, both).map((f) =>
    `E ${f.way}: ${f.wallUs.map((us, i) => `${thousands(config.eWidths[i]!)} → ${ms(us)}`).join(", ")}; per call from narrowest to widest ${
      f.wallGrowth.toFixed(2)
    }× (wall), ${f.cpuGrowth.toFixed(2)}× (CPU)${
      f.withinLimit === undefined ? "" : `; ${thousands(issueWidth)} ${f.withinLimit ? "within" : "over"} ${issueLimitMs} ms`
    }`
  )

/** E's phrase in the verdict line. */
export const cancelVerdict = (config: Config, both: CancelSamples, checks: ReadonlyArray<Check>): string => {
  const all = [...misses(cancelFigures(config, both)), ...(checks.every((c) => c.ok) ? [] : ["leaks"])]
  const bound = config.eWidths.includes(issueWidth) ? `, ${thousands(issueWidth)} calls within ${issueLimitMs} ms` : ""
  return all.length === 0 ? `E met (flat${bound}, no leaks)` : `E **missed** (${all.join(", ")})`
}
