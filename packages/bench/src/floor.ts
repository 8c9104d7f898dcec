/**
 * The floor: a hand-written async/await agent loop doing the same logical work as agentfx
 * (a messages array, a fake model answering from the last tool result, tool calls awaited,
 * results appended), with nothing else. Whatever agentfx costs above this is runtime overhead.
 * For worker calls (W): raw `node:worker_threads`, a worker terminated at a `setTimeout`.
 */
import { setMaxListeners } from "node:events"
import { Worker } from "node:worker_threads"
import type { CancelRuns, Impl, TimeoutRuns, WorkerRuns, WorkerWork } from "./impl.js"
import type { Kill, RunCounts, SuspendedRuns } from "./measure.js"
import { liveTimers, noTimersLeft, nowUs, ticker } from "./measure.js"
import type { Config, LoopCall, LoopReply } from "./workload.js"
import {
  concurrentDecision,
  doubleTool,
  longLoopDecision,
  loopReply,
  stepTool,
  timeoutDecision,
  wideBatchDecision
} from "./workload.js"

type Message =
  | { readonly role: "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string; readonly toolCalls: ReadonlyArray<LoopCall> }
  | { readonly role: "tool"; readonly callId: string; readonly content: unknown; readonly isError: boolean }

type ToolMessage = Extract<Message, { readonly role: "tool" }>

type Model = (messages: ReadonlyArray<Message>) => Promise<LoopReply>
type Tool = (args: any, signal: AbortSignal | undefined) => Promise<unknown>
type Execute = (calls: ReadonlyArray<LoopCall>) => Promise<ReadonlyArray<ToolMessage>>

/** The loop: model → tools → results appended → model, until the model answers with text. */
const runLoop = async (input: string, model: Model, execute: Execute): Promise<RunCounts> => {
  const messages: Array<Message> = [{ role: "user", content: input }]
  let modelCalls = 0
  let toolCalls = 0
  for (;;) {
    const reply = await model(messages)
    modelCalls++
    messages.push({ role: "assistant", content: reply.text, toolCalls: reply.toolCalls })
    if (reply.toolCalls.length === 0) return { text: reply.text, modelCalls, toolCalls }
    toolCalls += reply.toolCalls.length
    for (const result of await execute(reply.toolCalls)) messages.push(result)
  }
}

/** Runs one call; a thrown error becomes an error result for the model. */
const invoke = async (tools: Record<string, Tool>, call: LoopCall, signal?: AbortSignal): Promise<ToolMessage> => {
  try {
    return { role: "tool", callId: call.id, content: await tools[call.name]!(call.args, signal), isError: false }
  } catch (error) {
    return { role: "tool", callId: call.id, content: String(error), isError: true }
  }
}

/** Every call of a batch at once. */
const all = (tools: Record<string, Tool>): Execute => (calls) => Promise.all(calls.map((call) => invoke(tools, call)))

/** A FIFO counting semaphore. */
class Semaphore {
  private readonly waiting: Array<() => void> = []
  constructor(public free: number) {}
  acquire(): Promise<void> {
    if (this.free > 0 && this.waiting.length === 0) {
      this.free--
      return Promise.resolve()
    }
    return new Promise((resolve) => this.waiting.push(resolve))
  }
  release(): void {
    const next = this.waiting.shift()
    if (next !== undefined) next()
    else this.free++
  }
}

/** Each call holds a permit, and is aborted after `timeoutMs` (timeout inside the permit). */
const bounded = (tools: Record<string, Tool>, semaphore: Semaphore, timeoutMs: number | undefined): Execute => (calls) =>
  Promise.all(calls.map(async (call) => {
    await semaphore.acquire()
    try {
      if (timeoutMs === undefined) return await invoke(tools, call)
      const controller = new AbortController()
      const timer = setTimeout(() => controller.abort(new Error(`timed out after ${timeoutMs}ms`)), timeoutMs)
      try {
        return await invoke(tools, call, controller.signal)
      } finally {
        clearTimeout(timer)
      }
    } finally {
      semaphore.release()
    }
  }))

const last = (messages: ReadonlyArray<Message>) => messages[messages.length - 1]!

/** The tool results after the last assistant message. */
const lastResults = (messages: ReadonlyArray<Message>): Array<ToolMessage> => {
  const results: Array<ToolMessage> = []
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role === "tool"; i--) results.unshift(messages[i] as ToolMessage)
  return results
}

const lastNumber = (messages: ReadonlyArray<Message>): number | undefined => {
  const message = last(messages)
  return message.role === "tool" ? (message.content as number) : undefined
}

/** The floor implementation of every scenario. */
export const floor: Impl = {
  id: "floor",

  longLoop: (steps, stamps) => {
    const model: Model = async (messages) => {
      stamps.push(nowUs())
      return loopReply("step", longLoopDecision(steps, lastNumber(messages)))
    }
    return runLoop("go", model, all({ step: async ({ n }) => stepTool(n) }))
  },

  wideBatch: (width, stamps) => {
    const model: Model = async (messages) => {
      stamps.push(nowUs())
      const results = last(messages).role === "tool" ? lastResults(messages).map((m) => m.content as number) : undefined
      return loopReply("double", wideBatchDecision(width, results))
    }
    return runLoop("go", model, all({ double: async ({ i }) => doubleTool(i) }))
  },

  concurrent: (runs, wait): SuspendedRuns => {
    let suspended = 0
    let release!: () => void
    const latch = new Promise<void>((resolve) => (release = resolve))
    const model: Model = async (messages) => {
      const user = messages[0] as { readonly content: string }
      return loopReply("wait", concurrentDecision(Number(user.content), lastNumber(messages)))
    }
    const tools: Record<string, Tool> = {
      wait: async ({ id }) => {
        suspended++
        if (typeof wait === "string") await latch
        else await new Promise((resolve) => setTimeout(resolve, wait.timerMs))
        suspended--
        return id
      }
    }
    const done = Promise.all(Array.from({ length: runs }, (_, id) => runLoop(String(id), model, all(tools))))
    return { suspended: () => suspended, release, done }
  },

  timeouts: async (cfg: Config): Promise<TimeoutRuns> => {
    const semaphore = new Semaphore(cfg.permits)
    const counters = { started: 0, interrupted: 0, probeStarted: 0, probeWidth: 0 }
    let releaseProbe!: () => void
    const probeLatch = new Promise<void>((resolve) => (releaseProbe = resolve))
    const perRun = cfg.timeouts / cfg.dRuns
    const model: Model = async (messages) => {
      const user = messages[0] as { readonly content: string }
      if (user.content === "probe") {
        return last(messages).role === "tool" ? loopReply("probe", { _tag: "Text", text: "probed" }) : loopReply("probe", {
          _tag: "Call",
          args: Array.from({ length: counters.probeWidth }, (_, i) => ({ i }))
        })
      }
      const timedOut = last(messages).role === "tool"
        ? lastResults(messages).filter((m) => m.isError && String(m.content).includes("timed out")).length
        : undefined
      return loopReply("hang", timeoutDecision(perRun, timedOut))
    }
    const tools: Record<string, Tool> = {
      hang: (_args, signal) =>
        new Promise((_, reject) => {
          counters.started++
          signal!.addEventListener("abort", () => {
            counters.interrupted++
            reject(signal!.reason)
          }, { once: true })
        }),
      probe: async ({ i }) => {
        counters.probeStarted++
        await probeLatch
        return i
      }
    }
    const timersBefore = liveTimers()
    return {
      run: async () => {
        const counts = await Promise.all(
          Array.from({ length: cfg.dRuns }, () => runLoop("hang", model, bounded(tools, semaphore, cfg.timeoutMs)))
        )
        return { counts, started: counters.started, interrupted: counters.interrupted }
      },
      leftovers: async () => [
        { name: "no held permits (semaphore count)", ok: semaphore.free === cfg.permits, detail: `${semaphore.free} free of ${cfg.permits}` },
        await noTimersLeft(timersBefore)
      ],
      probe: {
        start: (width) => {
          counters.probeWidth = width
          return runLoop("probe", model, bounded(tools, semaphore, undefined))
        },
        started: () => counters.probeStarted,
        release: releaseProbe
      },
      close: async () => {}
    }
  },

  cancel: async (): Promise<CancelRuns> => ({ ways: ["floor"], round: cancelRound, close: async () => {} }),

  workers: (work) => workers(work)
}

/**
 * E: `width` promises, each holding a resource (taken, then released in a `finally`) while it
 * awaits the one `AbortSignal`; the time from `abort()` until every promise has settled.
 */
const cancelRound = async (_way: string, width: number) => {
  const controller = new AbortController()
  const signal = controller.signal
  setMaxListeners(width, signal) // one listener per call is the point, not a leak
  let taken = 0
  let released = 0
  const hold = async () => {
    taken++
    try {
      await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }))
    } finally {
      released++
    }
  }
  const settled = Promise.allSettled(Array.from({ length: width }, hold))
  const started = taken
  const cpu = process.cpuUsage()
  const start = nowUs()
  controller.abort()
  const outcomes = await settled
  const wallUs = nowUs() - start
  const used = process.cpuUsage(cpu)
  return {
    wallUs,
    cpuUs: used.user + used.system,
    started,
    released,
    cancelled: outcomes.every((o) => o.status === "rejected" && o.reason === signal.reason),
    leftovers: []
  }
}

const workerEntry = new URL("./workers/floor-entry.mjs", import.meta.url)
const workerModule = new URL("./workers/tools.mjs", import.meta.url).href

/** W: a worker per kill, terminated by a `setTimeout` at the deadline; one persistent worker for the round trips. */
const workers = async (work: WorkerWork): Promise<WorkerRuns> => {
  let spawned = 0
  let exited = 0
  const spawn = () => {
    const worker = new Worker(workerEntry)
    spawned++
    worker.once("exit", () => exited++)
    return worker
  }
  /** Calls `name`; past `deadlineMs` the worker is terminated and the call ends `undefined` once its thread has exited. */
  const call = (worker: Worker, name: string, deadlineMs: number) =>
    new Promise<{ readonly text: string } | undefined>((resolve, reject) => {
      const timer = setTimeout(() => {
        worker.off("message", onReply)
        worker.terminate().then(() => resolve(undefined), reject)
      }, deadlineMs)
      const onReply = (reply: { readonly text: string }) => {
        clearTimeout(timer)
        resolve(reply)
      }
      worker.once("message", onReply)
      worker.postMessage({ module: workerModule, export: name, args: { text: "x" } })
    })
  let worker = spawn()
  await call(worker, "echo", 30_000) // the first worker: spawned, module imported
  const kills: Array<Kill> = []
  for (let i = 0; i < work.kills; i++) {
    const tick = ticker()
    const start = performance.now()
    const killed = await call(worker, "spin", work.deadlineMs)
    const overshootMs = performance.now() - start - work.deadlineMs
    const maxGapMs = tick.stop()
    work.afterKill(i)
    const liveWorkers = spawned - exited
    const next = performance.now()
    worker = spawn()
    const served = await call(worker, "echo", 30_000)
    kills.push({
      timedOut: killed === undefined,
      overshootMs,
      maxGapMs,
      liveWorkers,
      served: served?.text === "x",
      spawnMs: performance.now() - next
    })
  }
  let failedCalls = 0
  const roundTrip = async () => {
    if ((await call(worker, "echo", 1_000))?.text !== "x") failedCalls++
  }
  for (let i = 0; i < work.warmup; i++) await roundTrip()
  const roundTripUs: Array<number> = []
  for (let rep = 0; rep < work.reps; rep++) {
    const start = performance.now()
    for (let i = 0; i < work.calls; i++) await roundTrip()
    roundTripUs.push(((performance.now() - start) * 1000) / work.calls)
  }
  await worker.terminate()
  return { kills, roundTrips: { roundTripUs }, failedCalls }
}
