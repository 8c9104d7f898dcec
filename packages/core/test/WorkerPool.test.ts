/**
 * Worker-isolated tools, on real time: a kill is the point, so `it.live` with generous bounds.
 * Worker functions live in `test/workers/` (plain `.mjs`, one `.ts`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, type Duration, Effect, Exit, Fiber, Layer, Logger, Schedule, Schema } from "effect"
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { type Json, Tool, ToolCallingManager, Toolkit, WorkerPool } from "../src/index.js"
import { summary } from "./fixtures.js"

const toolsModule = new URL("./workers/tools.mjs", import.meta.url)

/** A worker tool calling `exportName` of `test/workers/tools.mjs` (or of `module`). */
const workerTool = <S, SE>(name: string, exportName: string, success: Schema.Codec<S, SE>, options: {
  readonly timeout?: Duration.Input
  readonly retry?: Tool.RetryPolicy
  readonly module?: URL
  readonly exposeDefects?: boolean
} = {}) =>
  Tool.make(name, {
    description: `runs ${exportName} in a worker`,
    parameters: Schema.Struct({ text: Schema.optional(Schema.String), millis: Schema.optional(Schema.Number) }),
    success,
    isolation: "worker",
    module: options.module ?? toolsModule,
    export: exportName,
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
    ...(options.retry !== undefined ? { retry: options.retry } : {}),
    ...(options.exposeDefects !== undefined ? { exposeDefects: options.exposeDefects } : {})
  })

const Echoed = Schema.Struct({ text: Schema.String, threadId: Schema.Number })
const Interval = Schema.Struct({ start: Schema.Number, end: Schema.Number })
const echo = workerTool("echo", "echo", Echoed)
const spin = (timeout?: Duration.Input, name = "spin") => workerTool(name, "spin", Schema.String, timeout ? { timeout } : {})
const busy = (timeout: Duration.Input) => workerTool("busy", "busy", Interval, { timeout })

type Args = { readonly [key: string]: Json.JsonValue }

const call = (name: string, args: Args = {}, id = "c") => ({ id, name, args })

/** Runs one call and returns its result. */
const runOne = <R>(toolkit: Toolkit.Toolkit<R>, name: string, args: Args = {}) =>
  Effect.map(ToolCallingManager.executeBatch(toolkit, [call(name, args)]), ([result]) => result!)

const echoThread = <R>(toolkit: Toolkit.Toolkit<R>) =>
  Effect.map(runOne(toolkit, "echo", { text: "ping" }), (result) => {
    if (result._tag !== "Succeeded") throw new Error(`echo failed: ${JSON.stringify(result)}`)
    return (result.value as { threadId: number }).threadId
  })

const stats = Effect.flatMap(WorkerPool.WorkerPool, (pool) => pool.stats)

/** Polls the pool's counters every 5 ms until `busy` slots are held. */
const untilBusy = (busy: number) =>
  stats.pipe(Effect.repeat({ until: (s) => s.busy === busy, schedule: Schedule.spaced("5 millis") }))

/** OS threads of this process (Linux): each live worker is one. */
const osThreads = () => readdirSync("/proc/self/task").length

/**
 * A thread that ended may stay listed in /proc/self/task for a moment (seen on a busy machine):
 * the fewest threads seen over `windowMs`, read every 5 ms — a count no such thread inflates.
 */
const fewestThreads = (windowMs: number) =>
  Effect.gen(function*() {
    const until = performance.now() + windowMs
    let fewest = osThreads()
    while (performance.now() < until) {
      yield* Effect.sleep("5 millis")
      fewest = Math.min(fewest, osThreads())
    }
    return fewest
  })

/** The threads once at most `expected` remain, read every 5 ms for up to a second: an ended thread is given that long to leave. */
const threadsDownTo = (expected: number) =>
  Effect.gen(function*() {
    const until = performance.now() + 1000
    let threads = osThreads()
    while (threads > expected && performance.now() < until) {
      yield* Effect.sleep("5 millis")
      threads = osThreads()
    }
    return threads
  })
const canCountThreads = existsSync("/proc/self/task")

const elapsedSince = (start: number) => performance.now() - start

describe("WorkerPool", () => {
  it.live("a while (true) {} tool with a 200 ms timeout gets ToolTimeout; a 10 ms ticker kept ticking; the pool serves the next call", () =>
    Effect.gen(function*() {
      const toolkit = Toolkit.make(echo, spin("200 millis"))
      const before = yield* echoThread(toolkit) // warm: the worker exists and has imported the module
      const ticks: Array<number> = []
      const ticker = setInterval(() => ticks.push(performance.now()), 10)
      const started = performance.now()
      const result = yield* runOne(toolkit, "spin")
      const elapsed = elapsedSince(started)
      clearInterval(ticker)
      expect(summary([result])).toEqual([`ToolTimeout(transient): Tool "spin" timed out after 200ms`])
      // generous bounds, for a busy machine: the bench measures the overshoot (docs/workers.md)
      expect(elapsed).toBeGreaterThanOrEqual(199)
      expect(elapsed).toBeLessThan(2000)
      expect(ticks.length).toBeGreaterThanOrEqual(5) // ~20 expected; 0 if the main thread were blocked
      const gaps = ticks.slice(1).map((t, i) => t - ticks[i]!)
      expect(Math.max(...gaps)).toBeLessThan(180) // a main thread blocked by the spin: a gap of 200 ms or more
      const after = yield* echoThread(toolkit)
      expect(after).not.toBe(before) // the killed worker was replaced by a new thread
      expect(yield* stats).toMatchObject({ live: 1, busy: 0, spawned: 2, exited: 1 })
    }).pipe(Effect.provide(WorkerPool.layer({ size: 1 }))))

  it.live("100 consecutive kills leave no extra threads", () =>
    Effect.gen(function*() {
      const toolkit = Toolkit.make(echo, spin("10 millis"))
      // warm up once (lazily created libuv/V8 threads), then count
      yield* echoThread(toolkit).pipe(Effect.provide(WorkerPool.layer({ size: 1 })))
      const baseline = yield* fewestThreads(100)
      yield* Effect.gen(function*() {
        for (let i = 0; i < 100; i++) {
          const result = yield* runOne(toolkit, "spin")
          expect(result._tag === "Failed" && result.error._tag).toBe("ToolTimeout")
          expect(yield* threadsDownTo(baseline + 1)).toBeLessThanOrEqual(baseline + 1)
        }
        // a killed worker's slot stays empty until the next call needs it
        expect(yield* stats).toMatchObject({ live: 0, busy: 0, spawned: 100, exited: 100 })
        yield* echoThread(toolkit)
        expect(yield* stats).toMatchObject({ live: 1, spawned: 101, exited: 100 })
      }).pipe(Effect.provide(WorkerPool.layer({ size: 1 })))
      expect(yield* threadsDownTo(baseline)).toBe(baseline) // the Layer's finalizer terminated the last worker
    }), { timeout: 180_000, skip: !canCountThreads })

  it.live("a worker that throws, rejects, crashes or calls process.exit becomes a typed error; the pool serves the next call; a defect's text stays out of it", () =>
    Effect.gen(function*() {
      const toolkit = Toolkit.make(
        echo,
        workerTool("throws", "throws", Schema.String),
        workerTool("rejects", "rejects", Schema.String),
        workerTool("exits", "exits", Schema.String),
        workerTool("crashes", "crashesLater", Schema.String),
        workerTool("unsendable", "unsendable", Schema.Unknown),
        workerTool("liar", "wrongShape", Schema.String)
      )
      const first = yield* echoThread(toolkit)
      const outcomes: Array<unknown> = []
      const logs: Array<{ readonly message: unknown; readonly cause: Cause.Cause<unknown> }> = []
      const captureLogs = Logger.layer([Logger.make(({ cause, message }) => logs.push({ message: (message as ReadonlyArray<unknown>)[0], cause }))])
      for (const name of ["throws", "rejects", "unsendable", "liar", "exits", "crashes"]) {
        outcomes.push(...summary([yield* runOne(toolkit, name).pipe(Effect.provide(captureLogs))]))
        outcomes.push((yield* echoThread(toolkit)) === first ? "same worker" : "new worker")
      }
      // a throw (or a crash) is a defect: the model reads what it reads of an in-process one
      expect(outcomes).toEqual([
        `ToolError(semantic): Tool "throws" failed unexpectedly`,
        "same worker",
        `ToolError(semantic): Tool "rejects" failed unexpectedly`,
        "same worker",
        `ToolError(semantic): Tool "unsendable" failed unexpectedly`,
        "same worker",
        `ToolError(semantic): Tool "liar" returned an invalid result: Expected string, got {"unexpected":true}`,
        "same worker",
        `ToolError(semantic): Tool "exits" failed: its worker exited with code 3 (process.exit in a worker ends the worker)`,
        "new worker",
        `ToolError(semantic): Tool "crashes" failed unexpectedly`,
        "new worker"
      ])
      expect(yield* stats).toMatchObject({ live: 1, spawned: 3, exited: 2 })
      // the full cause goes to the log, with the worker-side stack, like an in-process defect's
      expect(logs.map(({ message }) => message)).toEqual([
        `Tool "throws" died`,
        `Tool "rejects" died`,
        `Tool "unsendable" died`,
        `Tool "crashes" died`
      ])
      const logged = logs.map(({ cause }) => Cause.squash(cause) as Error)
      expect(logged[0]!.stack).toMatch(/^RangeError: boom\n\s+at throws \(file:.*tools\.mjs:\d+/)
      expect(logged.map((error) => `${error.name}: ${error.message}`)).toEqual([
        "RangeError: boom",
        "Error: async boom",
        `TypeError: its result cannot be sent to the main thread: () => "a function cannot be cloned" could not be cloned.`,
        "Error: its worker crashed (Error: uncaught in a timer)"
      ])
    }).pipe(Effect.provide(WorkerPool.layer({ size: 1 }))))

  it.live("exposeDefects: the model reads the defect's message, as of an in-process tool (never its stack)", () =>
    Effect.gen(function*() {
      const toolkit = Toolkit.make(
        workerTool("throws", "throws", Schema.String, { exposeDefects: true }),
        workerTool("crashes", "crashesLater", Schema.String, { exposeDefects: true })
      )
      const outcomes = [...summary([yield* runOne(toolkit, "throws")]), ...summary([yield* runOne(toolkit, "crashes")])]
      expect(outcomes).toEqual([
        `ToolError(semantic): Tool "throws" failed unexpectedly: boom`,
        `ToolError(semantic): Tool "crashes" failed unexpectedly: its worker crashed (Error: uncaught in a timer)`
      ])
    }).pipe(Effect.provide(WorkerPool.layer({ size: 1 }))))

  it.live("a worker that dies while idle is never handed a call: the next call gets a new worker", () =>
    Effect.gen(function*() {
      const toolkit = Toolkit.make(echo, workerTool("time_bomb", "timeBomb", Schema.String))
      const first = yield* echoThread(toolkit)
      expect(summary([yield* runOne(toolkit, "time_bomb")])).toEqual(["ok"])
      yield* stats.pipe(Effect.repeat({ until: (s) => s.live === 0, schedule: Schedule.spaced("5 millis") }))
      expect(yield* echoThread(toolkit)).not.toBe(first)
      expect(yield* stats).toMatchObject({ live: 1, spawned: 2, exited: 1 })
    }).pipe(Effect.provide(WorkerPool.layer({ size: 1 }))))

  it.live("a module that cannot be imported or lacks the export is an environment error; the pool goes on", () =>
    Effect.gen(function*() {
      const toolkit = Toolkit.make(
        echo,
        workerTool("not_a_function", "notAFunction", Schema.String),
        workerTool("missing", "nope", Schema.String),
        workerTool("broken", "default", Schema.String, { module: new URL("./workers/broken.mjs", import.meta.url) })
      )
      const results = yield* ToolCallingManager.executeBatch(toolkit, [
        call("not_a_function"),
        call("missing"),
        call("broken")
      ])
      expect(summary(results)).toEqual([
        `ToolError(environment): Tool "not_a_function" cannot load its worker module ${toolsModule.href}: TypeError: its export "notAFunction" is a number, not a function`,
        `ToolError(environment): Tool "missing" cannot load its worker module ${toolsModule.href}: TypeError: it has no export "nope" (exports: busy, crashesLater, default, echo, exits, flaky, notAFunction, rejects, spin, throws, timeBomb, unsendable, wrongShape)`,
        `ToolError(environment): Tool "broken" cannot load its worker module ${
          new URL("./workers/broken.mjs", import.meta.url).href
        }: Error: broken at import`
      ])
      yield* echoThread(toolkit)
    }).pipe(Effect.provide(WorkerPool.layer({ size: 1 }))))

  it.live("startupTimeout bounds a module whose import never finishes; the worker is terminated", () =>
    Effect.gen(function*() {
      const hangs = workerTool("hangs", "default", Schema.String, {
        module: new URL("./workers/hangs.mjs", import.meta.url),
        timeout: "10 seconds"
      })
      const toolkit = Toolkit.make(hangs)
      const started = performance.now()
      const result = yield* runOne(toolkit, "hangs")
      expect(elapsedSince(started)).toBeLessThan(2000)
      expect(summary([result])).toEqual([
        `ToolError(environment): Tool "hangs" cannot load its worker module ${
          new URL("./workers/hangs.mjs", import.meta.url).href
        }: the worker was not ready within 300ms`
      ])
      expect(yield* stats).toMatchObject({ live: 0, spawned: 1, exited: 1 })
    }).pipe(Effect.provide(WorkerPool.layer({ size: 1, startupTimeout: "300 millis" }))))

  it.live("spawning and importing happen before the deadline: a cold TypeScript module (tsx) under a 50 ms timeout succeeds", () =>
    Effect.gen(function*() {
      const crunch = Tool.make("crunch", {
        description: "sums 0..n-1",
        parameters: Schema.Struct({ n: Schema.Number }),
        success: Schema.Struct({ sum: Schema.Number, callId: Schema.String }),
        timeout: "50 millis",
        isolation: "worker",
        module: Tool.workerModule(import.meta.url, "./workers/crunch.worker")
      })
      const toolkit = Toolkit.make(crunch)
      const started = performance.now()
      const results = yield* ToolCallingManager.executeBatch(toolkit, [{ id: "call_7", name: "crunch", args: { n: 100 } }])
      expect(summary(results)).toEqual([{ sum: 4950, callId: "call_7" }])
      expect(elapsedSince(started)).toBeGreaterThan(50) // spawn + tsx + import took longer than the deadline
    }).pipe(Effect.provide(WorkerPool.layer({ size: 1 }))))

  describe("same semantics as in-process tools", () => {
    it.live("retry: a killed attempt is retried on a fresh worker; `times` bounds the kills", () =>
      Effect.gen(function*() {
        const toolkit = Toolkit.make(
          workerTool("flaky", "flaky", Schema.String, { timeout: "100 millis", retry: { times: 1 } }),
          workerTool("stuck", "spin", Schema.String, { timeout: "50 millis", retry: { times: 1 } })
        )
        expect(summary([yield* runOne(toolkit, "flaky")])).toEqual(["attempt 2"])
        expect(yield* stats).toMatchObject({ spawned: 2, exited: 1 })
        expect(summary([yield* runOne(toolkit, "stuck")])).toEqual([
          `ToolTimeout(transient): Tool "stuck" timed out after 50ms`
        ])
        expect(yield* stats).toMatchObject({ spawned: 3, exited: 3 })
      }).pipe(Effect.provide(WorkerPool.layer({ size: 1 }))))

    it.live("priority chain: the manager's defaultTimeout applies to a worker tool; its own timeout beats it", () =>
      Effect.gen(function*() {
        const toolkit = Toolkit.make(echo, spin(undefined, "spin_default"), spin("100 millis", "spin_own"))
        yield* echoThread(toolkit)
        const started = performance.now()
        const results = yield* ToolCallingManager.executeBatch(toolkit, [call("spin_default"), call("spin_own")])
        expect(summary(results)).toEqual([
          `ToolTimeout(transient): Tool "spin_default" timed out after 250ms`,
          `ToolTimeout(transient): Tool "spin_own" timed out after 100ms`
        ])
        expect(elapsedSince(started)).toBeGreaterThanOrEqual(350) // sequential: 250 + 100
      }).pipe(Effect.provide(Layer.merge(
        WorkerPool.layer({ size: 1 }),
        ToolCallingManager.sequential({ defaultTimeout: "250 millis" })
      ))))

    const overlaps = (results: ReadonlyArray<unknown>) => {
      const [a, b] = summary(results as any) as Array<{ start: number; end: number }>
      return a!.start < b!.end && b!.start < a!.end
    }
    const twoBusyCalls = (timeout: Duration.Input) =>
      // each call works 600 ms: run one after the other, the second's wait (600 ms) plus its work would pass a 1 s deadline
      ToolCallingManager.executeBatch(Toolkit.make(busy(timeout)), [call("busy", { millis: 600 }, "a"), call("busy", { millis: 600 }, "b")])

    it.live("a bounded manager's permits bound worker calls; the wait for a permit does not count against the timeout", () =>
      Effect.gen(function*() {
        const results = yield* twoBusyCalls("1 second")
        expect(results.map((r) => r._tag)).toEqual(["Succeeded", "Succeeded"])
        expect(overlaps(results)).toBe(false)
      }).pipe(Effect.provide(Layer.merge(WorkerPool.layer({ size: 2 }), ToolCallingManager.bounded({ permits: 1 })))))

    it.live("the wait for a free worker does not count against the timeout; with a worker each, calls overlap", () =>
      Effect.gen(function*() {
        const queued = yield* twoBusyCalls("1 second").pipe(Effect.provide(WorkerPool.layer({ size: 1 })))
        expect(queued.map((r) => r._tag)).toEqual(["Succeeded", "Succeeded"])
        expect(overlaps(queued)).toBe(false)
        const parallel = yield* Effect.andThen(
          twoBusyCalls("5 seconds"), // spawns both workers
          twoBusyCalls("5 seconds") // both warm: they start together
        ).pipe(Effect.provide(WorkerPool.layer({ size: 2 })))
        expect(overlaps(parallel)).toBe(true)
      }).pipe(Effect.provide(ToolCallingManager.unbounded())))

    it.live("interrupting a batch of running worker tools terminates their workers", () =>
      Effect.gen(function*() {
        const toolkit = Toolkit.make(spin(), busy("1 second"))
        // warm both workers so that the spins start at once
        yield* ToolCallingManager.executeBatch(toolkit, [call("busy", { millis: 50 }, "a"), call("busy", { millis: 50 }, "b")])
        const threads = yield* fewestThreads(100)
        const fiber = yield* ToolCallingManager.executeBatch(toolkit, [call("spin", {}, "a"), call("spin", {}, "b")]).pipe(
          Effect.forkChild
        )
        yield* untilBusy(2)
        yield* Effect.sleep("100 millis") // both are spinning now
        const started = performance.now()
        const exit = yield* Effect.andThen(Fiber.interrupt(fiber), Fiber.await(fiber))
        expect(elapsedSince(started)).toBeLessThan(1000)
        expect(Exit.hasInterrupts(exit)).toBe(true)
        expect(yield* stats).toMatchObject({ live: 0, busy: 0, spawned: 2, exited: 2 })
        if (canCountThreads) expect(yield* threadsDownTo(threads - 2)).toBe(threads - 2)
        const after = yield* ToolCallingManager.executeBatch(toolkit, [call("busy", { millis: 1 })])
        expect(after.map((r) => r._tag)).toEqual(["Succeeded"])
      }).pipe(Effect.provide(Layer.merge(WorkerPool.layer({ size: 2 }), ToolCallingManager.unbounded()))))
  })

  it.live("a worker tool called on its own (ToolCallingManager.call) is killed too when interrupted from outside", () =>
    Effect.gen(function*() {
      const tool = spin()
      const exit = yield* ToolCallingManager.call(tool, {}).pipe(
        Effect.timeout("100 millis"),
        Effect.exit
      )
      expect(Exit.isFailure(exit) && Cause.isTimeoutError(Cause.squash(exit.cause))).toBe(true)
      expect(yield* stats).toMatchObject({ live: 0, busy: 0, spawned: 1, exited: 1 })
    }).pipe(Effect.provide(WorkerPool.layer({ size: 1 }))))

  it.live("closing the Layer terminates a stuck worker at once (no graceful wait); its call fails typed", () =>
    Effect.gen(function*() {
      const toolkit = Toolkit.make(echo, spin())
      let closing = 0
      const { pool, running } = yield* Effect.gen(function*() {
        const pool = yield* WorkerPool.WorkerPool
        yield* echoThread(toolkit) // warm: the spin starts at once
        const running = yield* runOne(toolkit, "spin").pipe(
          Effect.provideService(WorkerPool.WorkerPool, pool),
          Effect.forkDetach
        )
        yield* untilBusy(1)
        yield* Effect.sleep("50 millis")
        closing = performance.now()
        return { pool, running }
      }).pipe(Effect.provide(WorkerPool.layer({ size: 1 })))
      expect(elapsedSince(closing)).toBeLessThan(2000) // waiting for the spin to end would never return
      expect(yield* pool.stats).toMatchObject({ live: 0, busy: 0, spawned: 1, exited: 1 })
      expect(summary([yield* Fiber.join(running)])).toEqual([
        `ToolError(environment): Tool "spin" cannot run: its worker pool has been shut down`
      ])
    }))

  it.effect("the Layer refuses a size that is not a positive integer and a bad startupTimeout, naming each", () =>
    Effect.gen(function*() {
      const problems = (options: WorkerPool.Options) =>
        Layer.build(WorkerPool.layer(options)).pipe(Effect.scoped, Effect.flip, Effect.map((e) => e.problems))
      expect(yield* problems({ size: 0 })).toEqual(["size 0 is not a positive integer"])
      expect(yield* problems({ size: 1.5 })).toEqual(["size 1.5 is not a positive integer"])
      expect(yield* problems({ size: -2, startupTimeout: 0 })).toEqual([
        "size -2 is not a positive integer",
        "startupTimeout 0 is not positive"
      ])
      const error = yield* Layer.build(WorkerPool.layer({ size: Number.NaN })).pipe(Effect.scoped, Effect.flip)
      expect(error._tag).toBe("InvalidWorkerPool")
      expect(error.message).toBe("Invalid WorkerPool options: size NaN is not a positive integer")
    }))

  it("works from built JavaScript under plain node, without tsx", () => {
    const build = fileURLToPath(new URL("../tsconfig.src.json", import.meta.url))
    execFileSync(process.execPath, [fileURLToPath(new URL("../../../node_modules/typescript/bin/tsc", import.meta.url)), "-b", build])
    const output = execFileSync(process.execPath, [fileURLToPath(new URL("./workers/built.mjs", import.meta.url))], {
      encoding: "utf8",
      timeout: 20_000
    })
    const report = JSON.parse(output)
    expect(report).toMatchObject({
      spin: "ToolTimeout",
      shout: "HI",
      execArgv: [],
      stats: { live: 1, spawned: 2, exited: 1 }
    })
    // the spin never ends by itself: it was killed at its 200 ms deadline (generous bound: a busy machine is slow to kill and respawn)
    expect(report.elapsed).toBeGreaterThanOrEqual(199)
    expect(report.elapsed).toBeLessThan(5000)
  }, 60_000)
})
