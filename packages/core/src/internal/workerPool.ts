/**
 * The worker pool's machinery: raw `node:worker_threads` workers, one request at a time per
 * worker, `terminate()` on timeout, interruption and crash (docs/decisions/003-worker-isolation.md).
 *
 * A pool has `size` slots; a slot holds at most one live worker, spawned lazily. The FIFO
 * bulkhead bounds how many slots are in use; a free slot is popped from a stack, so the most
 * recently used (warm) worker serves next. A worker that is killed or dies leaves its slot
 * empty; the next user of the slot spawns a fresh one.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Worker } from "node:worker_threads"
import { environment, semantic, type ToolError } from "../ToolError.js"
import { Bulkhead } from "./bulkhead.js"
import { describeOutcome, describeThrown, request, type WorkerErrorInfo } from "./workerProtocol.js"

const entry = new URL("./worker-entry.mjs", import.meta.url)

/** What to run: an exported function of a module, on behalf of a tool (named in errors). */
export interface Target {
  /** A `file:` URL. */
  readonly module: string
  readonly export: string
  readonly toolName: string
}

interface Slot {
  worker: Worker | undefined
  /** `module#export` pairs this worker has imported and checked. */
  readonly loaded: Set<string>
  /** A call is running on it (guards a reservation against concurrent use). */
  busy: boolean
}

/** Counters of a pool, for tests, benchmarks and monitoring. */
export interface Stats {
  readonly size: number
  /** Workers whose thread has not exited yet. */
  readonly live: number
  /** Slots held by a call or a reservation right now. */
  readonly busy: number
  /** Workers started since the pool was built. */
  readonly spawned: number
  /** Workers whose thread has exited since the pool was built: terminated by the pool (timeout, interruption, crash, failed import, shutdown) or ended on their own. */
  readonly exited: number
}

interface Lease {
  readonly pool: Pool
  readonly slot: Slot
}

/** The slot the executor reserved for the current attempt (see `Pool.reserve`). */
const currentLease = Context.Reference<Lease | undefined>("@agentfx/core/WorkerPool/currentLease", { defaultValue: () => undefined })

const key = (target: Target) => `${target.module}#${target.export}`

/**
 * What a worker function threw, as the `Error` it was (name, message, the worker-side
 * stack). A throw, like a crash, is a defect of the tool: the executor tells the model what
 * it tells of an in-process defect (`exposeDefects` decides) and logs the full cause.
 */
const thrown = (info: WorkerErrorInfo): Error => Object.assign(new Error(info.message), { name: info.name, stack: info.stack })

export class Pool {
  private readonly bulkhead: Bulkhead
  private readonly free: Array<Slot>
  private readonly slots: ReadonlyArray<Slot>
  private closed = false
  private spawned = 0
  private exited = 0

  constructor(readonly size: number, readonly startupTimeout: Duration.Duration) {
    this.bulkhead = new Bulkhead(size)
    this.slots = Array.from({ length: size }, () => ({ worker: undefined, loaded: new Set<string>(), busy: false }))
    this.free = [...this.slots]
  }

  readonly stats: Effect.Effect<Stats> = Effect.sync(() => ({
    size: this.size,
    live: this.spawned - this.exited,
    busy: this.size - this.free.length,
    spawned: this.spawned,
    exited: this.exited
  }))

  /** Holds a free slot for the duration of `use`; waits (FIFO, interruptibly) while all are in use. */
  private withSlot<A, E, R>(use: (slot: Slot) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return this.bulkhead.withPermit(
      Effect.acquireUseRelease(
        Effect.sync(() => this.free.pop()!),
        use,
        (slot) => Effect.sync(() => this.free.push(slot))
      )
    )
  }

  private shutDown(target: Target): ToolError {
    return environment(`Tool "${target.toolName}" cannot run: its worker pool has been shut down`)
  }

  private spawn(slot: Slot, target: Target): Effect.Effect<Worker, ToolError> {
    return Effect.suspend(() => {
      if (slot.worker !== undefined) return Effect.succeed(slot.worker)
      if (this.closed) return Effect.fail(this.shutDown(target))
      let worker: Worker
      try {
        worker = new Worker(entry)
      } catch (error) {
        return Effect.fail(environment(`Tool "${target.toolName}" cannot start a worker: ${String(error)}`))
      }
      this.spawned += 1
      // Without an 'error' listener a worker's uncaught exception would be re-thrown in the main thread.
      worker.on("error", () => undefined)
      worker.once("exit", () => {
        this.exited += 1
        if (slot.worker === worker) {
          slot.worker = undefined
          slot.loaded.clear()
        }
      })
      slot.worker = worker
      slot.loaded.clear()
      return Effect.succeed(worker)
    })
  }

  /** Terminates the slot's worker (if any) and waits for its thread to exit. */
  private kill(slot: Slot): Effect.Effect<void> {
    return Effect.suspend(() => {
      const worker = slot.worker
      slot.worker = undefined
      slot.loaded.clear()
      if (worker === undefined) return Effect.void
      return Effect.promise(() => worker.terminate())
    })
  }

  /** Spawns the slot's worker if it has none and imports the target, bounded by `startupTimeout`. */
  private prepare(slot: Slot, target: Target): Effect.Effect<void, ToolError> {
    if (slot.worker !== undefined && slot.loaded.has(key(target))) return Effect.void
    const failed = (reason: string) =>
      Effect.andThen(
        this.kill(slot),
        Effect.fail(
          this.closed
            ? this.shutDown(target)
            : environment(`Tool "${target.toolName}" cannot load its worker module ${target.module}: ${reason}`)
        )
      )
    return Effect.flatMap(this.spawn(slot, target), (worker) =>
      request(worker, { kind: "load", module: target.module, export: target.export }, this.kill(slot)).pipe(
        Effect.timeoutOrElse({
          duration: this.startupTimeout,
          orElse: () => Effect.fail(`the worker was not ready within ${Duration.format(this.startupTimeout)}`)
        }),
        Effect.matchEffect({
          onFailure: failed,
          onSuccess: (outcome): Effect.Effect<void, ToolError> => {
            if (outcome._tag === "Reply" && outcome.reply.kind === "loaded") {
              return Effect.sync(() => slot.loaded.add(key(target)))
            }
            return failed(
              outcome._tag === "Reply" && outcome.reply.kind === "load-failed"
                ? describeThrown(outcome.reply.error)
                : describeOutcome(outcome)
            )
          }
        })
      ))
  }

  /** Runs the target's function with `args` on the slot's (prepared) worker. */
  private invoke(slot: Slot, target: Target, args: unknown, context: unknown): Effect.Effect<unknown, ToolError> {
    return Effect.flatMap(this.prepare(slot, target), () =>
      Effect.flatMap(
        request(
          slot.worker!,
          { kind: "call", module: target.module, export: target.export, args, context },
          this.kill(slot)
        ),
        (outcome): Effect.Effect<unknown, ToolError> => {
          if (outcome._tag === "Reply") {
            switch (outcome.reply.kind) {
              case "returned":
                return Effect.succeed(outcome.reply.value)
              case "threw":
                return Effect.die(thrown(outcome.reply.error))
              default:
                return Effect.andThen(
                  this.kill(slot),
                  Effect.fail(environment(`Tool "${target.toolName}" cannot load its worker module: ${
                    outcome.reply.kind === "load-failed" ? describeThrown(outcome.reply.error) : "unexpected reply"
                  }`))
                )
            }
          }
          if (outcome._tag === "Unsendable") {
            return Effect.fail(semantic(`Tool "${target.toolName}" failed: its arguments cannot be sent to a worker: ${outcome.reason}`))
          }
          return Effect.andThen(
            this.kill(slot),
            this.closed
              ? Effect.fail(this.shutDown(target))
              : outcome._tag === "Crashed"
              ? Effect.die(new Error(`its worker ${describeOutcome(outcome)}`))
              : Effect.fail(semantic(`Tool "${target.toolName}" failed: its worker ${describeOutcome(outcome)}`))
          )
        }
      ))
  }

  /** Marks the slot busy while `self` runs, so a reservation is never used by two calls at once. */
  private occupy<A, E, R>(slot: Slot, self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.acquireUseRelease(
      Effect.sync(() => {
        slot.busy = true
      }),
      () => self,
      () =>
        Effect.sync(() => {
          slot.busy = false
        })
    )
  }

  /**
   * Runs the target in a worker. Uses the slot reserved for the current fiber by
   * {@link reserve} when there is one; otherwise waits for a free slot (and that wait, the
   * spawn and the import then happen inside whatever deadline surrounds the call).
   */
  run(target: Target, args: unknown, context: unknown): Effect.Effect<unknown, ToolError> {
    return Effect.flatMap(Effect.service(currentLease), (lease) =>
      lease !== undefined && lease.pool === this && !lease.slot.busy
        ? this.occupy(lease.slot, this.invoke(lease.slot, target, args, context))
        : this.withSlot((slot) => this.occupy(slot, this.invoke(slot, target, args, context))))
  }

  /**
   * Holds a slot with a ready worker (spawned, target imported) for the duration of `self`;
   * {@link run} inside `self` uses it without waiting. The executor wraps each attempt's
   * timeout in this, so queueing for a worker, spawning it and importing the module do not
   * count against the tool's deadline.
   */
  reserve(target: Target) {
    return <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | ToolError, R> =>
      this.withSlot((slot) =>
        Effect.andThen(this.prepare(slot, target), Effect.provideService(self, currentLease, { pool: this, slot }))
      )
  }

  /** Refuses new work and terminates every worker without waiting for running calls. */
  readonly close: Effect.Effect<void> = Effect.suspend(() => {
    this.closed = true
    return Effect.forEach(this.slots, (slot) => this.kill(slot), { concurrency: "unbounded", discard: true })
  })
}
