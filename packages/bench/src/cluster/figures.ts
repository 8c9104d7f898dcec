/**
 * The cluster bench's figures: the table printed, and RESULTS.md's section with the goals of
 * issue 21 (≥ 500 completed runs/s with 2 runners, decide → resumed p99 ≤ 50 ms, ≤ 4 KB of heap
 * per suspended run), each met or missed by how much, and where the time goes.
 */
import type { Check } from "../measure.js"
import type { Decisions, Memory } from "./memory.js"
import { passivated } from "./memory.js"

/** What one runner count measured. Times in ms, heap in bytes. */
export interface Figures {
  readonly size: number
  readonly perSecond: number
  /** decide → completed reply, one at a time, the entity live: p50, p99. */
  readonly idle: readonly [number, number]
  /** the same, under load (every run at once, `concurrency` in flight): p50, p99. */
  readonly loaded: readonly [number, number]
  readonly memory: Memory
  /** decisions one at a time on live entities, and on passivated ones. */
  readonly live: Decisions
  readonly reactivated: Decisions
  readonly cpuPerRun: number
  readonly transactionsPerRun: number
  readonly floor: {
    readonly perSecond: number
    readonly idle: readonly [number, number]
    readonly loaded: readonly [number, number]
    readonly cpuPerRun: number
    readonly transactionsPerRun: number
  }
}

const ms = (x: number) => `${x.toFixed(1)} ms`
const pair = ([p50, p99]: readonly [number, number]) => `${ms(p50)} / ${ms(p99)}`
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`

/** The rows of the table, one per figure and runner count. */
export const figureRows = (figures: ReadonlyArray<Figures>): Array<readonly [string, string]> =>
  figures.flatMap((f) => [
    [`${f.size} runner(s): completed runs/s (agentfx / floor)`, `${f.perSecond.toFixed(1)} / ${f.floor.perSecond.toFixed(1)}`],
    [`${f.size} runner(s): decide → completed reply, one at a time, p50 / p99 (agentfx; floor)`, `${pair(f.idle)}; ${pair(f.floor.idle)}`],
    [`${f.size} runner(s): decide → completed reply under load, p50 / p99 (agentfx; floor)`, `${pair(f.loaded)}; ${pair(f.floor.loaded)}`],
    [`${f.size} runner(s): runners' CPU per run (agentfx / floor)`, `${ms(f.cpuPerRun)} / ${ms(f.floor.cpuPerRun)}`],
    [`${f.size} runner(s): database transactions per run (agentfx / floor)`, `${f.transactionsPerRun.toFixed(1)} / ${f.floor.transactionsPerRun.toFixed(1)}`],
    [`${f.size} runner(s): decide → completed reply, one at a time, entity passivated, p50 / p99`, pair(f.reactivated.latency)],
    [`${f.size} runner(s): runners' CPU per decision one at a time, entity live / passivated`, `${ms(f.live.cpuPerDecision)} / ${ms(f.reactivated.cpuPerDecision)}`],
    [`${f.size} runner(s): entities taken on again by those decisions (live / passivated)`, `${f.live.reactivated} of ${f.live.count} / ${f.reactivated.reactivated} of ${f.reactivated.count}`],
    [`${f.size} runner(s): heap per suspended run, entity passivated / live`, `${kb(f.memory.heapPerRun)} / ${kb(f.memory.heapPerLiveRun)}`],
    [`${f.size} runner(s): entities live when the pauses ended / after the wait`, `${f.memory.liveAtPause} / ${f.memory.liveAfterWait}`]
  ] as const)

/** How `value` stands against a goal: met, or missed by a factor. */
const against = (value: number, goal: number, higherIsBetter: boolean) => {
  const met = higherIsBetter ? value >= goal : value <= goal
  const factor = higherIsBetter ? goal / value : value / goal
  return met ? "met" : `**missed** (${factor.toFixed(1)}× off)`
}

export interface Section {
  readonly figures: ReadonlyArray<Figures>
  readonly which: string
  readonly rows: ReadonlyArray<readonly [string, string]>
  readonly checks: ReadonlyArray<Check>
  readonly runs: number
  readonly suspended: number
  readonly idleDecisions: number
  readonly concurrency: number
  readonly date: string
}

/** RESULTS.md's cluster section (between its markers). */
export const sectionMarkdown = (s: Section): string => {
  const two = s.figures.find((f) => f.size === 2)
  const failed = s.checks.filter((c) => !c.ok)
  const loadRows = s.rows.filter(([k]) => k.startsWith("load average"))
  const column = (f: (x: Figures) => string) => s.figures.map(f).join(" | ")
  return [
    "## Cluster — runs on runner processes on PostgreSQL (`pnpm bench:cluster`)",
    "",
    `Written by \`pnpm bench:cluster --write\` on ${s.date}. ${loadRows.map(([k, v]) => `${k[0]!.toUpperCase()}${k.slice(1)}: ${v}`).join("; ")} (2 cores, other work running: wall-clock figures are noisy; CPU time and transactions per run are not).`,
    "",
    `- PostgreSQL: ${s.which}. A database per runner count. Runners: \`node --expose-gc\` processes on the built packages (\`ClusterPg.layer\`, poll 1 s, engine's default lock settings); this process is a client-only member (\`ClusterPg.layerClient\`).`,
    `- The run: \`lookup\`, \`transfer\` (needs approval: the run pauses), the answer — 3 scripted model calls, 2 tool calls, one pause; \`AgentCluster.run\` to the pause, \`AgentCluster.decide\` to the end. Throughput: ${s.runs} runs, ${s.concurrency} in flight. Latency: decide → the completed reply, ${s.idleDecisions} decisions one at a time on runs just paused (their entities live; see memory below), and every throughput run's decision under load.`,
    `- Memory (\`src/cluster/memory.ts\`): the runners serve the agent with \`AgentCluster.runner\`'s default \`idleTimeout\`, 10 s — an entity with no message in flight leaves memory 10–20 s after its last reply. Heap after a full GC in every runner once every entity had left (the bench waits ${passivated}), then with ${s.suspended} paused runs, then after waiting ${passivated} more: (the last − the first) / ${s.suspended} is a suspended run's heap once its entity is passivated; adding (with the runs − the last) / the entities still live when the pauses ended gives its heap while its entity is live. Then ${s.idleDecisions} of them (passivated: each decision takes its entity on again, counted exactly by the \`RunLocation\` notes written) and ${s.idleDecisions} runs just paused (live) are decided one at a time, alternately: the difference in the runners' CPU per decision is what taking an entity on again costs.`,
    "- Floor: on the same runners, an entity whose two persisted messages (`Start`, `Decide`) do nothing (`src/cluster/floor.ts`) — what the engine alone costs for the same two messages per run.",
    "- Where the time goes, and what the misses would need: [docs/cluster.md](../../docs/cluster.md#throughput-latency-memory).",
    "",
    `| figure | ${s.figures.map((f) => `${f.size} runner${f.size > 1 ? "s" : ""}`).join(" | ")} |`,
    `|---|${s.figures.map(() => "---|").join("")}`,
    `| completed runs/s | ${column((f) => f.perSecond.toFixed(1))} |`,
    `| floor: runs/s | ${column((f) => f.floor.perSecond.toFixed(1))} |`,
    `| decide → completed reply, one at a time: p50 / p99 | ${column((f) => pair(f.idle))} |`,
    `| floor: the same | ${column((f) => pair(f.floor.idle))} |`,
    `| decide → completed reply, ${s.concurrency} in flight: p50 / p99 | ${column((f) => pair(f.loaded))} |`,
    `| floor: the same | ${column((f) => pair(f.floor.loaded))} |`,
    `| runners' CPU time per run (agentfx / floor) | ${column((f) => `${ms(f.cpuPerRun)} / ${ms(f.floor.cpuPerRun)}`)} |`,
    `| database transactions per run (agentfx / floor) | ${column((f) => `${f.transactionsPerRun.toFixed(1)} / ${f.floor.transactionsPerRun.toFixed(1)}`)} |`,
    `| decide → completed reply, one at a time, entity passivated: p50 / p99 | ${column((f) => pair(f.reactivated.latency))} |`,
    `| runners' CPU time per decision one at a time, entity live / passivated | ${column((f) => `${ms(f.live.cpuPerDecision)} / ${ms(f.reactivated.cpuPerDecision)}`)} |`,
    `| entities taken on again by those decisions (live / passivated) | ${column((f) => `${f.live.reactivated} of ${f.live.count} / ${f.reactivated.reactivated} of ${f.reactivated.count}`)} |`,
    `| heap per suspended run, entity passivated | ${column((f) => kb(f.memory.heapPerRun))} |`,
    `| heap per suspended run, entity live (before passivation) | ${column((f) => kb(f.memory.heapPerLiveRun))} |`,
    `| entities live when the pauses ended / after the wait | ${column((f) => `${f.memory.liveAtPause} / ${f.memory.liveAfterWait}`)} |`,
    "",
    two === undefined ? "" : `**Goals (issue 21, 2 runners):** ≥ 500 runs/s: ${two.perSecond.toFixed(1)}, ${against(two.perSecond, 500, true)}; decide → resumed p99 ≤ 50 ms: ${ms(two.idle[1])} one at a time, ${against(two.idle[1], 50, false)}; ≤ 4 KB per suspended run: ${kb(two.memory.heapPerRun)} once its entity is passivated, ${against(two.memory.heapPerRun, 4096, false)} (${kb(two.memory.heapPerLiveRun)} while it is live).`,
    "",
    `Checks (every run paused then completed, every call ran exactly once, no entity live after the wait): ${s.checks.length - failed.length}/${s.checks.length} passed${failed.length > 0 ? ` — FAILED: ${failed.map((c) => `${c.name} (${c.detail})`).join("; ")}` : ""}.`
  ].join("\n")
}
