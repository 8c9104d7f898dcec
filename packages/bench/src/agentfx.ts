/**
 * agentfx through its public API only: `Agent.make`, `Agent.run`,
 * `ScriptedChatModel.layer(fn, { recordRequests: false })` answering from the last tool result
 * (keeping no request log, like the floor's fake model), the manager Layers, and
 * for worker tools `ToolCallingManager.executeBatch` under `WorkerPool.layer` (workerMeasures.ts).
 */
import type { AgentExit, ChatModel, Json } from "@agentfx/core"
import { Agent, ScriptedChatModel, Tool, ToolCallingManager, Toolkit, WorkerPool } from "@agentfx/core"
import type { Fiber } from "effect"
import { Cause, Deferred, Duration, Effect, Exit, Fiber as F, Layer, ManagedRuntime, Metric, Schema } from "effect"
import type { CancelRound, CancelRuns, Impl, Inject, TimeoutRuns, Wait, WorkerRuns, WorkerWork } from "./impl.js"
import type { RunCounts, SuspendedRuns } from "./measure.js"
import { liveTimers, noTimersLeft, nowUs } from "./measure.js"
import { measureKills, measureRoundTrips } from "./workerMeasures.js"
import type { CancelWay, Config, Decision } from "./workload.js"
import {
  agentfxCancelWays,
  concurrentDecision,
  doubleTool,
  longLoopDecision,
  runningCalls,
  stepTool,
  timeoutDecision,
  wideBatchDecision
} from "./workload.js"

type Request = ChatModel.ChatRequest

/** The scripted answer for a decision, calling `tool`. */
const answer = <A extends Json.JsonValue>(tool: string, decision: Decision<A>): ScriptedChatModel.Step =>
  decision._tag === "Text" ? { text: decision.text } : { toolCalls: decision.args.map((args) => ({ name: tool, args })) }

const lastMessage = (request: Request) => request.messages[request.messages.length - 1]!

const lastNumber = (request: Request): number | undefined => {
  const message = lastMessage(request)
  return message._tag === "ToolResult" ? (message.content as number) : undefined
}

/** The tool results after the last assistant message, or `undefined` when the model has not called tools yet. */
const lastResults = (request: Request) => {
  if (lastMessage(request)._tag !== "ToolResult") return undefined
  const results: Array<{ readonly content: Json.JsonValue; readonly isError: boolean }> = []
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i]!
    if (message._tag !== "ToolResult") break
    results.unshift(message)
  }
  return results
}

const inputOf = (request: Request): string => {
  const first = request.messages[0]!
  return first._tag === "User" ? first.text : ""
}

/** Nothing reads the scripted model's request log here: the scripts count calls themselves. */
const unrecorded: ScriptedChatModel.Options = { recordRequests: false }

/** Counts model calls (in the script) and handler calls (in the tools) of the current run(s). */
const calls = { model: 0, tool: 0 }

/** The calls the run itself recorded (`Completed.toolCalls`); -1 when it did not complete. */
const recorded = (exit: AgentExit.AgentExit): number => exit._tag === "Completed" ? exit.toolCalls.length : -1

/** A run's counts; the handlers' count of its tool calls must agree with the run's own record. */
const countsOf = (exit: AgentExit.AgentExit, modelCalls: number, handlerCalls = recorded(exit)): RunCounts => ({
  text: exit._tag === "Completed" ? exit.text : `paused (${exit.kind})`,
  modelCalls,
  toolCalls: recorded(exit) === handlerCalls ? handlerCalls : -1
})

const NumberArgs = <K extends string>(key: K) => Schema.Struct({ [key]: Schema.Number } as { [P in K]: typeof Schema.Number })

/** An agent over tools that need nothing, allowed enough iterations for scenario A. */
const agentOf = (...tools: ReadonlyArray<Tool.Tool<string, any, any, never>>): Agent.Agent<{}, never> =>
  Agent.make({ tools, maxIterations: 1_000 })

/** A and B: one run at a time, each with a fresh scripted model (its request log dies with the run). */
const oneRun = (
  runtime: ManagedRuntime.ManagedRuntime<never, ToolCallingManager.InvalidManagerOptions>,
  agent: Agent.Agent<{}, never>,
  script: ScriptedChatModel.StepFunction
): Promise<RunCounts> => {
  calls.model = 0
  calls.tool = 0
  return runtime.runPromise(
    Effect.map(
      Agent.run(agent, { input: "go" }).pipe(Effect.provide(ScriptedChatModel.layer(script, unrecorded))),
      (exit) => countsOf(exit, calls.model, calls.tool)
    )
  )
}

const sequentialRuntime = ManagedRuntime.make(ToolCallingManager.sequential())
const unboundedRuntime = ManagedRuntime.make(ToolCallingManager.unbounded())

let stamps: Array<number> = []

const longLoopAgent = agentOf(Tool.make("step", {
  description: "Adds one",
  parameters: NumberArgs("n"),
  success: Schema.Number,
  handler: ({ n }) => Effect.sync(() => (calls.tool++, stepTool(n)))
}))

const wideBatchAgent = agentOf(Tool.make("double", {
  description: "Doubles",
  parameters: NumberArgs("i"),
  success: Schema.Number,
  handler: ({ i }) => Effect.sync(() => (calls.tool++, doubleTool(i)))
}))

/** C: what the `wait` tool waits for in the current batch of runs, and each run's counts (by id). */
const waiting = {
  suspended: 0,
  wait: Effect.void,
  modelCalls: [] as Array<number>,
  toolCalls: [] as Array<number>
}

const concurrentAgent = agentOf(Tool.make("wait", {
  description: "Waits, then returns its id",
  parameters: NumberArgs("id"),
  success: Schema.Number,
  handler: ({ id }) =>
    Effect.suspend(() => {
      waiting.toolCalls[id]!++
      waiting.suspended++
      return waiting.wait
    }).pipe(Effect.map(() => (waiting.suspended--, id)))
}))

const concurrentScript: ScriptedChatModel.StepFunction = (request) => {
  const id = Number(inputOf(request))
  waiting.modelCalls[id]!++
  return answer("wait", concurrentDecision(id, lastNumber(request)))
}

/** C: what each run's tool awaits, and how the driver releases the latch. */
const waitFor = (wait: Wait): { readonly effect: Effect.Effect<void>; readonly release: () => void } => {
  if (wait === "deferred-latch") {
    const latch = Deferred.makeUnsafe<void>()
    return { effect: Deferred.await(latch), release: () => Deferred.doneUnsafe(latch, Effect.void) }
  }
  if (wait === "latch") {
    let release!: () => void
    const latch = new Promise<void>((resolve) => (release = resolve))
    return { effect: Effect.promise(() => latch), release }
  }
  return { effect: Effect.sleep(wait.timerMs), release: () => {} }
}

/**
 * D and E's leak check on fibers: how many fibers started inside the effects `track` wraps have
 * not ended. Effect 4 tells the `Metric.FiberRuntimeMetrics` service in a fiber's context of the
 * fiber's start and of its end, and a fiber starts with its parent's context — forked, detached,
 * or started with a context captured inside (a concurrent call's fiber) alike. The fiber running
 * `track`'s effect is not counted: the service is provided inside it and taken off before it ends.
 */
const fiberTracker = () => {
  let live = 0
  const service: Metric.FiberRuntimeMetricsService = {
    recordFiberStart: () => {
      live++
    },
    recordFiberEnd: () => {
      live--
    }
  }
  return {
    track: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Metric.FiberRuntimeMetrics, service),
    live: () => live
  }
}

/** C: a runtime built before the runs start, as a server's is (runs started on an unbuilt ManagedRuntime each wait for the build in frames of their own). */
const builtRuntime = <R, E>(layer: Layer.Layer<R, E>) => {
  const runtime = ManagedRuntime.make(layer)
  runtime.runSync(Effect.void)
  return runtime
}

/** The agentfx implementation of every scenario. */
export const agentfx: Impl = {
  id: "agentfx",

  longLoop: (steps, into) => {
    stamps = into
    return oneRun(sequentialRuntime, longLoopAgent, (request) => {
      stamps.push(nowUs())
      calls.model++
      return answer("step", longLoopDecision(steps, lastNumber(request)))
    })
  },

  wideBatch: (width, into) => {
    stamps = into
    return oneRun(unboundedRuntime, wideBatchAgent, (request) => {
      stamps.push(nowUs())
      calls.model++
      return answer("double", wideBatchDecision(width, lastResults(request)?.map((r) => r.content as number)))
    })
  },

  concurrent: (runs, wait): SuspendedRuns => {
    const { effect, release } = waitFor(wait)
    waiting.suspended = 0
    waiting.wait = effect
    waiting.modelCalls = new Array<number>(runs).fill(0)
    waiting.toolCalls = new Array<number>(runs).fill(0)
    // Each run is its own fiber, as each floor run is its own promise (and as a server runs a
    // request): Effect.forEach({ concurrency: "unbounded" }) would add its own join bookkeeping.
    // The counts are read once all have ended, as the floor's come back with its runs: a
    // `.then` per run would be a promise and a closure per suspended run that the floor and the
    // Effect-alone reference do not keep.
    const runtime = builtRuntime(ScriptedChatModel.layer(concurrentScript, unrecorded))
    const done = Promise.all(Array.from({ length: runs }, (_, id) => runtime.runPromise(Agent.run(concurrentAgent, { input: String(id) }))))
      .then((exits) => exits.map((exit, id) => countsOf(exit, waiting.modelCalls[id]!, waiting.toolCalls[id]!)))
      .finally(() => runtime.dispose())
    return { suspended: () => waiting.suspended, release, done }
  },

  effectAlone: (runs, wait): SuspendedRuns<void> => {
    const { effect, release } = waitFor(wait)
    let suspended = 0
    const alone = Effect.suspend(() => {
      suspended++
      return effect
    }).pipe(Effect.map(() => void suspended--))
    const runtime = builtRuntime(ScriptedChatModel.layer(concurrentScript, unrecorded))
    const done = Promise.all(Array.from({ length: runs }, () => runtime.runPromise(alone))).finally(() => runtime.dispose())
    return { suspended: () => suspended, release, done }
  },

  timeouts: (cfg: Config, inject: Inject): Promise<TimeoutRuns> => timeoutRuns(cfg, inject),

  cancel: (cfg: Config, inject: Inject): Promise<CancelRuns> => cancelRuns(cfg, inject),

  workers: (work) => workerRuns(work)
}

const workerModule = new URL("./workers/tools.mjs", import.meta.url)

/** W: one pool of size 1 for the kills and the round trips; the promise settles once its Layer has terminated the last worker. */
const workerRuns = (work: WorkerWork): Promise<WorkerRuns> =>
  Effect.runPromise(
    Effect.gen(function*() {
      const kills = yield* measureKills({
        module: workerModule,
        kills: work.kills,
        deadlineMillis: work.deadlineMs,
        afterKill: work.afterKill
      })
      const trips = yield* measureRoundTrips({
        module: workerModule,
        warmup: work.warmup,
        calls: work.calls,
        reps: work.reps
      })
      return {
        kills,
        roundTrips: { roundTripUs: trips.tool, poolRoundTripUs: trips.pool, inProcessUs: trips.inProcess },
        failedCalls: trips.failed
      }
    }).pipe(Effect.provide(WorkerPool.layer({ size: 1 })))
  )

const timeoutRuns = async (cfg: Config, inject: Inject): Promise<TimeoutRuns> => {
  const counters = { started: 0, interrupted: 0, probeStarted: 0, probeWidth: 0 }
  /** Model calls per input: each run has its own input. */
  const modelCalls = new Map<string, number>()
  const probeLatch = Deferred.makeUnsafe<void>()
  const perRun = cfg.timeouts / cfg.dRuns
  const hang = Tool.make("hang", {
    description: "Never returns",
    parameters: NumberArgs("i"),
    success: Schema.Number,
    timeout: Duration.millis(cfg.timeoutMs),
    handler: ({ i }) =>
      Effect.sync(() => counters.started++).pipe(
        Effect.andThen(inject === "fiber" && i === 0 ? Effect.forkDetach(Effect.never) : Effect.void),
        Effect.andThen(Effect.never),
        Effect.onInterrupt(() => Effect.sync(() => counters.interrupted++))
      )
  })
  const probe = Tool.make("probe", {
    description: "Waits for the probe latch",
    parameters: NumberArgs("i"),
    success: Schema.Number,
    handler: ({ i }) => Effect.sync(() => counters.probeStarted++).pipe(Effect.andThen(Deferred.await(probeLatch)), Effect.as(i))
  })
  const hold = Tool.make("hold", {
    description: "Holds its permit forever (the injected permit leak)",
    parameters: NumberArgs("i"),
    success: Schema.Number,
    handler: () => Effect.never
  })
  const agent = agentOf(hang, probe, hold)
  const script: ScriptedChatModel.StepFunction = (request) => {
    const input = inputOf(request)
    modelCalls.set(input, (modelCalls.get(input) ?? 0) + 1)
    const results = lastResults(request)
    if (input.startsWith("hang")) {
      const timedOut = results?.filter((r) => r.isError && String(r.content).includes("timed out")).length
      return answer("hang", timeoutDecision(perRun, timedOut))
    }
    if (results !== undefined) return { text: "probed" }
    const width = input === "hold" ? 1 : counters.probeWidth
    return answer(input, { _tag: "Call", args: Array.from({ length: width }, (_, i) => ({ i })) })
  }
  const runtime = ManagedRuntime.make(
    Layer.merge(ToolCallingManager.bounded({ permits: cfg.permits }), ScriptedChatModel.layer(script, unrecorded))
  )
  const tracker = fiberTracker()
  const timersBefore = liveTimers()
  let round = 0
  return {
    run: async () => {
      const inputs = Array.from({ length: cfg.dRuns }, (_, k) => `hang ${round}.${k}`)
      round++
      const workload = Effect.gen(function*() {
        if (inject === "permit") yield* Effect.forkDetach(Agent.run(agent, { input: "hold" }))
        return yield* Effect.forEach(inputs, (input) => Agent.run(agent, { input }), { concurrency: "unbounded" })
      })
      const exits = await runtime.runPromise(tracker.track(workload))
      return {
        counts: exits.map((exit, k) => countsOf(exit, modelCalls.get(inputs[k]!) ?? 0)),
        started: counters.started,
        interrupted: counters.interrupted
      }
    },
    leftovers: async () => {
      const live = tracker.live()
      return [
        { name: "no live fibers (started − ended)", ok: live === 0, detail: `${live} live` },
        await noTimersLeft(timersBefore)
      ]
    },
    probe: {
      start: async (width) => {
        counters.probeWidth = width
        const exit = await runtime.runPromise(Agent.run(agent, { input: "probe" }))
        return countsOf(exit, modelCalls.get("probe") ?? 0, counters.probeStarted)
      },
      started: () => counters.probeStarted,
      release: () => Deferred.doneUnsafe(probeLatch, Effect.void)
    },
    close: () => runtime.dispose()
  }
}

/**
 * E: `width` calls of a `hold` tool, each holding a resource (taken with `acquireUseRelease`,
 * used by `Effect.never`, released by its finalizer), under a runtime built once per manager —
 * as an app builds its manager once, so the bounded one's permits are shared by every round.
 * The timed part is only `Fiber.interrupt` of the batch's (or the run's) fiber, from inside
 * the runtime. The reference way runs the same work with `Effect.forEach`, no agentfx.
 */
const cancelRuns = async (cfg: Config, inject: Inject): Promise<CancelRuns> => {
  const round = { width: 0, expected: 0, taken: 0, released: 0, allHeld: Deferred.makeUnsafe<void>() }
  const planted: Array<Fiber.Fiber<unknown, unknown>> = []
  /** A call's work: take the resource, wait forever, release it in the finalizer. */
  const holdResource = (i: number) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        if (++round.taken === round.expected) Deferred.doneUnsafe(round.allHeld, Effect.void)
      }),
      () =>
        inject === "fiber" && i === 0
          ? Effect.andThen(Effect.tap(Effect.forkDetach(Effect.never), (fiber) => Effect.sync(() => planted.push(fiber))), Effect.never)
          : Effect.never,
      () => Effect.sync(() => round.released++)
    )
  const hold = Tool.make("hold", {
    description: "Holds a resource until interrupted",
    parameters: NumberArgs("i"),
    success: Schema.Number,
    handler: ({ i }) => holdResource(i)
  })
  const toolkit = Toolkit.make(hold)
  const agent = Agent.make({ tools: [hold], limits: { batchWidth: Math.max(...cfg.eWidths) } })
  const calls = () => Array.from({ length: round.width }, (_, i) => ({ id: `call_${i}`, name: "hold", args: { i } }))
  const model = ScriptedChatModel.layer(() => ({ toolCalls: calls() }), unrecorded)
  const runtimes = {
    unbounded: builtRuntime(Layer.merge(ToolCallingManager.unbounded(), model)),
    bounded: builtRuntime(Layer.merge(ToolCallingManager.bounded({ permits: cfg.ePermits }), model))
  }
  if (inject === "permit") {
    // a call outside the rounds that holds one of the bounded manager's permits for good
    planted.push(runtimes.bounded.runFork(ToolCallingManager.call(Tool.make("leak", {
      description: "Holds its permit forever (the injected permit leak)",
      parameters: Schema.Struct({}),
      success: Schema.Number,
      handler: () => Effect.never
    }), {})))
  }
  const work = (way: CancelWay): Effect.Effect<unknown, unknown, ChatModel.ChatModel> =>
    way === "effect-alone"
      ? Effect.forEach(calls(), ({ args }) => holdResource(args.i), { concurrency: "unbounded", discard: true })
      : way.startsWith("batch")
      ? ToolCallingManager.executeBatch(toolkit, calls())
      : Agent.run(agent, { input: "go" })
  const cancelOnce = (way: CancelWay, track: boolean) =>
    Effect.gen(function*() {
      const tracker = track ? fiberTracker() : undefined
      const fiber = yield* Effect.forkChild(tracker === undefined ? work(way) : tracker.track(work(way)))
      yield* Deferred.await(round.allHeld)
      const started = round.taken
      const cpu = process.cpuUsage()
      const start = nowUs()
      yield* F.interrupt(fiber)
      const wallUs = nowUs() - start
      const used = process.cpuUsage(cpu)
      const released = round.released
      const exit = yield* F.await(fiber)
      const manager = yield* ToolCallingManager.ToolCallingManager
      const free = yield* manager.freePermits
      const permits = way.endsWith("-bounded") ? cfg.ePermits : Infinity
      const leftovers = [{ name: "no permit held (freePermits)", ok: free === permits, detail: `${free} free of ${permits}` }]
      if (tracker !== undefined) {
        const live = tracker.live()
        leftovers.push({ name: "no live fiber (started − ended)", ok: live === 0, detail: `${live} live` })
      }
      const result: CancelRound = { wallUs, cpuUs: used.user + used.system, started, released, cancelled: Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause), leftovers }
      return result
    })
  return {
    ways: agentfxCancelWays,
    round: (way, width, track) => {
      round.width = width
      round.expected = runningCalls(way, width, cfg.ePermits - (inject === "permit" && way.endsWith("-bounded") ? 1 : 0))
      round.taken = 0
      round.released = 0
      round.allHeld = Deferred.makeUnsafe<void>()
      return runtimes[way.endsWith("-bounded") ? "bounded" : "unbounded"].runPromise(cancelOnce(way, track))
    },
    close: async () => {
      await Effect.runPromise(F.interruptAll(planted))
      await Promise.all([runtimes.unbounded.dispose(), runtimes.bounded.dispose()])
    }
  }
}
