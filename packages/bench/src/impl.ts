/**
 * What an implementation (agentfx or the floor) provides to the scenario drivers. Drivers
 * own repetitions, timing, GC and checks; implementations only run agent turns.
 */
import type { Check, Kill, PermitProbe, RunCounts, SuspendedRuns } from "./measure.js"
import type { CancelWay, Config, ImplId, PeerId } from "./workload.js"

/** Scenario D set up once: the runs that time out, then what is left of them. */
export interface TimeoutRuns {
  /** Starts `dRuns` runs at once, each asking for `timeouts / dRuns` calls that hang and time out, under one bulkhead. */
  readonly run: () => Promise<{
    readonly counts: ReadonlyArray<RunCounts>
    /** Handlers entered. */
    readonly started: number
    /** Handlers stopped by their timeout (interruption or abort seen by the handler). */
    readonly interrupted: number
  }>
  /** Implementation-specific leak checks once the runs ended (live fibers, held permits, live timers). */
  readonly leftovers: () => Promise<ReadonlyArray<Check>>
  /** Latched calls under the same bulkhead, to see how many permits are free. */
  readonly probe: PermitProbe
  readonly close: () => Promise<void>
}

/** E: one batch cancelled while its calls hold their resources. */
export interface CancelRound {
  /** µs from the cancel (agentfx: `Fiber.interrupt`; the floor: `abort()`) until it returned (the floor: until every promise settled). */
  readonly wallUs: number
  /** CPU µs of this process over the same span (every thread: GC helpers included). */
  readonly cpuUs: number
  /** Calls holding their resource when the cancel began (handlers entered). */
  readonly started: number
  /** Finalizers that had run (resources released) when the cancel returned. */
  readonly released: number
  /** The work ended as cancelled (agentfx: an interrupted exit; the floor: every promise rejected with the abort's reason). */
  readonly cancelled: boolean
  /** Leak checks right after the cancel returned (agentfx: free permits, and live fibers on a tracked round). */
  readonly leftovers: ReadonlyArray<Check>
}

/** E set up once: rounds of one way and width, then clean-up. */
export interface CancelRuns {
  /** The ways this implementation cancels a batch (the floor: one). */
  readonly ways: ReadonlyArray<CancelWay>
  /**
   * Starts a `width`-wide batch `way`, waits until its calls hold their resources (all of
   * them, or the permits' worth), then cancels it. `track`: also look for live fibers
   * afterwards (agentfx: fibers started under the batch minus those ended, which costs per fiber: unmeasured
   * rounds only).
   */
  readonly round: (way: CancelWay, width: number, track: boolean) => Promise<CancelRound>
  readonly close: () => Promise<void>
}

/** W: what to do with workers. Both sides run the module `src/workers/tools.mjs`. */
export interface WorkerWork {
  /** `spin` calls (`while (true) {}`) killed at their deadline, one after the other, each followed by an `echo` on a fresh worker. */
  readonly kills: number
  readonly deadlineMs: number
  /** Called right after each kill's result, before the next worker is spawned. */
  readonly afterKill: (i: number) => void
  /** Round trips of `echo` on a warm worker: `warmup` calls, then `reps` rounds of `calls` calls. */
  readonly warmup: number
  readonly calls: number
  readonly reps: number
}

/** W: what the worker work measured. */
export interface WorkerRuns {
  readonly kills: ReadonlyArray<Kill>
  /** µs per call, one sample per round, by metric (`roundTripUs` on both sides). */
  readonly roundTrips: { readonly [metric: string]: ReadonlyArray<number> }
  /** Round-trip calls that did not succeed. */
  readonly failedCalls: number
}

/**
 * A deliberate leak, to prove the leak checks fail (`--inject=<leak>`): `permit` and `fiber`
 * in agentfx's scenarios D and E; `terminate` in scenario W, on both sides (see `skipNextTerminate`).
 */
export type Inject = "none" | "permit" | "fiber" | "terminate"

/**
 * What C's tool waits for: a timer, or a latch released by the driver. Both sides await the
 * latch as a promise (agentfx: `Effect.promise`); `"deferred-latch"` (agentfx only) awaits an
 * Effect `Deferred` instead, to show what that latch itself retains.
 */
export type Wait = { readonly timerMs: number } | "latch" | "deferred-latch"

/** One implementation of every scenario. */
export interface Impl {
  /** Which side this is; S runs its cold starts as `cold.js <id>` in fresh processes. */
  readonly id: ImplId
  /** A: one run of `steps` single-call steps, then text; pushes the time (µs) of each model call. */
  readonly longLoop: (steps: number, stamps: Array<number>) => Promise<RunCounts>
  /** B: one run whose first answer asks for `width` concurrent calls; pushes the time (µs) of each model call. */
  readonly wideBatch: (width: number, stamps: Array<number>) => Promise<RunCounts>
  /** C: `runs` runs started at once; each one's tool waits for a timer of `timerMs`, or until released. */
  readonly concurrent: (runs: number, wait: Wait) => SuspendedRuns
  /**
   * C, for reference (agentfx only): `runs` bare fibers, no agent, each doing only what the
   * tool does (await the timer or the latch): what the Effect runtime itself costs.
   */
  readonly effectAlone?: (runs: number, wait: Wait) => SuspendedRuns<unknown>
  /** D: set up the timing-out runs, the probe and the leak checks. */
  readonly timeouts: (config: Config, inject: Inject) => Promise<TimeoutRuns>
  /** E: set up the batches to cancel, under the managers they need. */
  readonly cancel: (config: Config, inject: Inject) => Promise<CancelRuns>
  /** W: kills, spawns and round trips of worker calls; settles once every worker it started has exited. */
  readonly workers: (work: WorkerWork) => Promise<WorkerRuns>
}

/** A peer (`src/peers/`): the same A, B and C work as the floor and agentfx, through another agent loop. */
export interface Peer extends Pick<Impl, "longLoop" | "wideBatch" | "concurrent"> {
  readonly id: PeerId
}
