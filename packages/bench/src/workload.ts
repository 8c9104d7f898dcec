/**
 * What every scenario does, independent of who runs it: sizes, the scripted model's
 * decisions (always computed from the last tool result it is given, so results really travel
 * through the loop) and the exact counts each run must end with. The agentfx side and the
 * floor both answer through these functions, so they do the same logical work.
 */

/** The scenarios that run (persistence has its own bench: `pnpm bench:store`). */
export type ScenarioId = "A" | "B" | "C" | "D" | "E" | "W" | "S"

/** Every scenario, in the order they run and are reported. */
export const scenarioIds: ReadonlyArray<ScenarioId> = ["A", "B", "C", "D", "E", "W", "S"]

/** Who runs a scenario: agentfx through its public API, or the plain async/await loop. */
export type ImplId = "floor" | "agentfx"

/**
 * A peer beside agentfx in A, B and C, each in processes of its own: the AI SDK's tool loop
 * (`ai` 7, `generateText`) and Effect 4's own `effect/ai` (`Chat.streamText` with `maxSteps`).
 */
export type PeerId = "aisdk" | "effectai"

/** Every peer, in the order they run and are reported. */
export const peerIds: ReadonlyArray<PeerId> = ["aisdk", "effectai"]

/** The scenarios the peers run. */
export const peerScenarios: ReadonlyArray<ScenarioId> = ["A", "B", "C"]

/** How RESULTS.md and the summary name each peer. */
export const peerNames: Record<PeerId, string> = {
  aisdk: "AI SDK 7 `generateText`",
  effectai: "effect/ai `Chat`"
}

/** The same, short: in check names and the console summary. */
export const peerShortNames: Record<PeerId, string> = {
  aisdk: "AI SDK 7",
  effectai: "effect/ai"
}

/** The steps a peer's loop is allowed (`stopWhen: isStepCount(…)`, `maxSteps`): agentfx's `maxIterations` in the bench. */
export const peerMaxSteps = 1_000

/** Sizes and repetitions of one bench run; `--quick` shrinks repetitions and sizes, never the checks. */
export interface Config {
  readonly quick: boolean
  /** A: tool steps per run (then one text answer). */
  readonly steps: number
  readonly aWarmup: number
  readonly aReps: number
  /** B: tool calls in the one batch. */
  readonly width: number
  readonly bWarmup: number
  readonly bReps: number
  /** C: runs started at once, and the timer each run's tool awaits. */
  readonly runs: number
  readonly timerMs: number
  readonly cWallReps: number
  readonly cHeapReps: number
  /** D: calls that time out, spread over `dRuns` concurrent runs, under `permits`. */
  readonly timeouts: number
  readonly dRuns: number
  readonly permits: number
  readonly timeoutMs: number
  readonly dReps: number
  /** E: widths of the batch that is cancelled (narrowest first); rounds per width and way, after warm-up rounds; the bounded manager's permits. */
  readonly eWidths: ReadonlyArray<number>
  readonly eWarmup: number
  readonly eReps: number
  readonly ePermits: number
  /** W: kills of a `while (true) {}` at a `deadlineMs` deadline (after one warm-up kill); round trips: `wWarmup` calls, then `wReps` rounds of `wCalls`. */
  readonly kills: number
  readonly deadlineMs: number
  readonly wWarmup: number
  readonly wCalls: number
  readonly wReps: number
  /** S: cold starts per process of the driver (each a fresh node process), after one unmeasured. */
  readonly coldStarts: number
}

/** The configuration of `pnpm bench` (full) or `pnpm bench --quick` (CI). */
export const config = (quick: boolean): Config => ({
  quick,
  steps: 200,
  // A's code reaches its steady state (every step's functions optimized) after ~300 runs; 15
  // runs measured the compilers' warm-up: the floor's loop on Effect alone read 5.1 µs per step
  // after 15, 1.3–1.5 µs after 300 (decision 116)
  aWarmup: quick ? 20 : 300,
  aReps: quick ? 5 : 60,
  width: 50,
  bWarmup: quick ? 20 : 300,
  bReps: quick ? 30 : 400,
  runs: quick ? 500 : 2000,
  timerMs: 20,
  cWallReps: quick ? 2 : 7,
  cHeapReps: quick ? 2 : 3,
  timeouts: quick ? 200 : 1000,
  dRuns: 10,
  permits: 4,
  timeoutMs: 1,
  dReps: quick ? 1 : 3,
  eWidths: quick ? [50, 100, 200] : [100, 250, 500, 1000],
  eWarmup: quick ? 1 : 3,
  eReps: quick ? 3 : 20,
  ePermits: 40,
  // a kill costs the 200 ms deadline plus a spawn
  kills: quick ? 3 : 15,
  deadlineMs: 200,
  wWarmup: 1000,
  wCalls: quick ? 200 : 1000,
  wReps: quick ? 2 : 5,
  coldStarts: quick ? 2 : 8
})

/**
 * A peer's sizes: the same work as agentfx's (steps, width, runs at once), fewer repetitions —
 * a peer's step costs hundreds of µs, 300 times agentfx's, so agentfx's 300 warm-up runs of A
 * (decision 116) would take minutes per process. A peer's per-step figure settles after some
 * 50 runs of A in a process (measured: ~4 ms per step in the first runs, 0.5–0.8 ms after
 * 70), so the full bench warms up 60 runs; `--quick` (CI, for the checks, which are the
 * same whatever the repetitions) does the fewest that still exercise every check.
 */
export const peerConfig = (config: Config): Config =>
  config.quick
    ? { ...config, aWarmup: 2, aReps: 2, bWarmup: 5, bReps: 5, cWallReps: 1, cHeapReps: 1 }
    : { ...config, aWarmup: 60, aReps: 10, bWarmup: 100, bReps: 100, cWallReps: 2, cHeapReps: 1 }

/** The scripted model's decision: call one tool with these arguments, or answer with text. */
export type Decision<Args> = { readonly _tag: "Call"; readonly args: ReadonlyArray<Args> } | {
  readonly _tag: "Text"
  readonly text: string
}

/** A tool call as the floor's loop and the Effect-alone reference's model make it. */
export interface LoopCall {
  readonly id: string
  readonly name: string
  readonly args: unknown
}

/** The floor's and the Effect-alone reference's model reply: text, or calls. */
export interface LoopReply {
  readonly text: string
  readonly toolCalls: ReadonlyArray<LoopCall>
}

let nextCallId = 0

/** The model's reply for a decision, calling `tool` (the floor's and the Effect-alone reference's). */
export const loopReply = <A>(tool: string, decision: Decision<A>): LoopReply =>
  decision._tag === "Text"
    ? { text: decision.text, toolCalls: [] }
    : { text: "", toolCalls: decision.args.map((args) => ({ id: `call_${nextCallId++}`, name: tool, args })) }

/** A: the step counter travels through the tool: call `step({ n })` with the last result until it reaches `steps`. */
export const longLoopDecision = (steps: number, lastResult: number | undefined): Decision<{ readonly n: number }> => {
  const n = lastResult ?? 0
  return n < steps ? { _tag: "Call", args: [{ n }] } : { _tag: "Text", text: `done ${n}` }
}

/** A: the tool adds one. */
export const stepTool = (n: number): number => n + 1

/** A: what a run answers, and its exact counts. */
export const longLoopExpected = (steps: number) => ({
  text: `done ${steps}`,
  modelCalls: steps + 1,
  toolCalls: steps
})

/** B: first answer asks for `width` calls; the second sums the results it is given. */
export const wideBatchDecision = (
  width: number,
  results: ReadonlyArray<number> | undefined
): Decision<{ readonly i: number }> =>
  results === undefined
    ? { _tag: "Call", args: Array.from({ length: width }, (_, i) => ({ i })) }
    : { _tag: "Text", text: `sum ${results.reduce((a, b) => a + b, 0)}` }

/** B: the tool doubles its argument. */
export const doubleTool = (i: number): number => 2 * i

/** B: what a run answers (the sum of 2i over the batch), and its exact counts. */
export const wideBatchExpected = (width: number) => ({
  text: `sum ${width * (width - 1)}`,
  modelCalls: 2,
  toolCalls: width
})

/** C: the first answer calls `wait({ id })`; the second repeats the id the tool returned. */
export const concurrentDecision = (id: number, lastResult: number | undefined): Decision<{ readonly id: number }> =>
  lastResult === undefined ? { _tag: "Call", args: [{ id }] } : { _tag: "Text", text: `ok ${lastResult}` }

/** C: what run `id` answers, and its exact counts. */
export const concurrentExpected = (id: number) => ({ text: `ok ${id}`, modelCalls: 2, toolCalls: 1 })

/**
 * D: the first answer asks for `calls` hanging calls; the second reports how many of the
 * results it is given were timeouts. A probe run (input "probe") asks for `calls` probe calls.
 */
export const timeoutDecision = (calls: number, timedOut: number | undefined): Decision<{ readonly i: number }> =>
  timedOut === undefined
    ? { _tag: "Call", args: Array.from({ length: calls }, (_, i) => ({ i })) }
    : { _tag: "Text", text: `timeouts ${timedOut}` }

/** D: what one run answers, and its exact counts. */
export const timeoutExpected = (calls: number) => ({ text: `timeouts ${calls}`, modelCalls: 2, toolCalls: calls })

/**
 * E: the ways agentfx runs a batch that is then cancelled — `ToolCallingManager.executeBatch`
 * or `Agent.run` (whose model's first answer is the batch), under `unbounded()` or
 * `bounded({ permits })` — and, for reference, Effect alone (`Effect.forEach` with unbounded
 * concurrency over the same handler). The floor has one way: promises awaiting an `AbortSignal`.
 */
export type CancelWay = "batch-unbounded" | "batch-bounded" | "run-unbounded" | "run-bounded" | "effect-alone" | "floor"

/** E: the ways of the agentfx side, in the order they are reported. */
export const agentfxCancelWays: ReadonlyArray<CancelWay> = ["batch-unbounded", "batch-bounded", "run-unbounded", "run-bounded", "effect-alone"]

/** E: how many calls of a `width`-wide batch hold their resource when it is cancelled (a bounded manager runs `permits` at a time). */
export const runningCalls = (way: CancelWay, width: number, permits: number): number =>
  way === "batch-bounded" || way === "run-bounded" ? Math.min(width, permits) : width

/** E: the metric name of one way and width (`<quantity>.<way>.<width>`). */
export const cancelMetric = (quantity: "wallUs" | "cpuUs", way: CancelWay, width: number): string => `${quantity}.${way}.${width}`
