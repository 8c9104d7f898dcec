/**
 * Measures what a declared tool timeout stops, on real time. Run: `pnpm tsx examples/timeouts.ts`.
 * The figures in docs/timeouts.md come from this script.
 */
import { Tool, ToolCallingManager, ToolError, Toolkit } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Schema } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

const RUNS = 20

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const describe = (values: ReadonlyArray<number>) =>
  `min ${Math.min(...values).toFixed(1)} / p50 ${percentile(values, 50).toFixed(1)} / max ${
    Math.max(...values).toFixed(1)
  } ms`

const busyFor = (millis: number) => {
  const end = performance.now() + millis
  while (performance.now() < end) {
    // synchronous CPU work: never yields
  }
}

const runOne = (toolkit: Toolkit.Toolkit, name: string, args: Record<string, string> = {}) =>
  ToolCallingManager.executeBatch(toolkit, [{ id: "c", name, args }]).pipe(Effect.map(([result]) => result!))

/** 1. fetch given the AbortSignal: how long after the deadline does the server see the connection close? */
const fetchAbort = Effect.gen(function*() {
  const closedAt = new Map<string, number>()
  const server = Http.createServer((req) => {
    const id = new URL(req.url ?? "/", "http://x").searchParams.get("id")!
    req.socket.on("close", () => closedAt.set(id, performance.now()))
  })
  yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  const slow = Tool.make("slow_fetch", {
    description: "GET a URL that never answers",
    parameters: Schema.Struct({ id: Schema.String }),
    success: Schema.String,
    timeout: "200 millis",
    handler: ({ id }) =>
      Effect.tryPromise({
        try: (signal) => fetch(`${url}?id=${id}`, { signal }).then((r) => r.text()),
        catch: (e) => ToolError.transient(String(e))
      })
  })
  const toolkit = Toolkit.make(slow)
  const returned: Array<number> = []
  const closed: Array<number> = []
  for (let i = -1; i < RUNS; i++) {
    const start = performance.now()
    const result = yield* runOne(toolkit, "slow_fetch", { id: String(i) })
    const end = performance.now()
    if (result._tag !== "Failed" || result.error._tag !== "ToolTimeout") throw new Error("expected a timeout")
    const deadline = start + 200
    yield* Effect.sleep("10 millis").pipe(Effect.repeat({ until: () => closedAt.has(String(i)), times: 200 }))
    if (i >= 0) { // run -1 warms up undici
      returned.push(end - deadline)
      closed.push(closedAt.get(String(i))! - deadline)
    }
  }
  server.closeAllConnections()
  server.close()
  return { closed: describe(closed), returned: describe(returned) }
})

/** 2. a synchronous busy loop under a 50 ms timeout. */
const busyLoop = Effect.gen(function*() {
  const busy = Tool.make("busy", {
    description: "400 ms of synchronous CPU",
    parameters: Schema.Struct({}),
    success: Schema.String,
    timeout: "50 millis",
    handler: () => Effect.sync(() => busyFor(400)).pipe(Effect.as("finished"))
  })
  const toolkit = Toolkit.make(busy)
  const start = performance.now()
  const result = yield* runOne(toolkit, "busy")
  return { outcome: result._tag === "Succeeded" ? `succeeded ("${result.value}")` : "timed out", at: performance.now() - start }
})

/** 3. the same CPU work in 1 ms slices, yielding with Effect.yieldNow (Effect's scheduler) or Tool.yieldToEventLoop. */
const slices = (label: string, yieldEffect: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const sliced = Tool.make("sliced", {
      description: "400 ms of CPU in 1 ms slices",
      parameters: Schema.Struct({}),
      success: Schema.String,
      timeout: "50 millis",
      handler: () =>
        Effect.gen(function*() {
          const end = performance.now() + 400
          while (performance.now() < end) {
            busyFor(1)
            yield* yieldEffect
          }
          return "finished"
        })
    })
    const toolkit = Toolkit.make(sliced)
    const start = performance.now()
    const result = yield* runOne(toolkit, "sliced")
    return `${label}: ${result._tag === "Succeeded" ? "succeeded" : "timed out"} at ${(performance.now() - start).toFixed(1)} ms`
  })

/** 4. a timeout waits for the interrupted handler's finalizers. */
const slowFinalizer = Effect.gen(function*() {
  const tool = Tool.make("cleanup", {
    description: "hangs; its finalizer takes 300 ms",
    parameters: Schema.Struct({}),
    success: Schema.String,
    timeout: "100 millis",
    handler: () => Effect.never.pipe(Effect.onInterrupt(() => Effect.sleep("300 millis")))
  })
  const toolkit = Toolkit.make(tool)
  const start = performance.now()
  yield* runOne(toolkit, "cleanup")
  return performance.now() - start
})

const program = Effect.gen(function*() {
  const fetchResult = yield* fetchAbort
  console.log(`fetch with AbortSignal, timeout 200 ms (${RUNS} runs), after the deadline:`)
  console.log(`  ToolTimeout returned   ${fetchResult.returned}`)
  console.log(`  server saw close       ${fetchResult.closed}`)
  const busy = yield* busyLoop
  console.log(`synchronous 400 ms busy loop, timeout 50 ms: ${busy.outcome} at ${busy.at.toFixed(1)} ms`)
  console.log(yield* slices("1 ms slices + Effect.yieldNow, timeout 50 ms", Effect.yieldNow))
  console.log(yield* slices("1 ms slices + Tool.yieldToEventLoop, timeout 50 ms", Tool.yieldToEventLoop))
  console.log(`timeout 100 ms, finalizer 300 ms: ToolTimeout returned at ${(yield* slowFinalizer).toFixed(1)} ms`)
})

NodeRuntime.runMain(program)
