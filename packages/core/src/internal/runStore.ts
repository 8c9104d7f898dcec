/**
 * The in-memory run store: records of running and paused runs, the ids of finished runs for
 * the retention, and keyed locks. Like a durable store, it keeps its own copy of every
 * checkpoint it is given and hands out copies: what a caller does with a checkpoint it gave
 * or was given never changes the record.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type { Finished, MemoryOptions, RunRecord, RunStore, Status, SteerStatus, Steering, StoreError, Transition } from "../RunStore.js"
import type { Outcome } from "../ToolCall.js"
import { Fifo } from "./fifo.js"

/** Keyed locks handing over in arrival order (`Fifo`); a key with no holder and no waiter is forgotten. */
class Locks {
  private readonly held = new Map<string, { owner: string; readonly queue: Fifo<string> }>()
  /** Told of every key let go of or handed over (the steering inbox wakes its senders). */
  onChange: ((key: string) => void) | undefined = undefined

  holder(key: string): string | undefined {
    return this.held.get(key)?.owner
  }

  take(key: string, owner: string, wait: boolean): Effect.Effect<boolean> {
    return Effect.suspend(() => {
      const held = this.held.get(key)
      if (held === undefined) {
        this.held.set(key, { owner, queue: new Fifo() })
        return Effect.succeed(true)
      }
      if (!wait) return Effect.succeed(false)
      const ticket = held.queue.join(owner)
      // interrupted while waiting: leave the queue, or pass on a lock handed over meanwhile
      return Effect.as(Effect.onInterrupt(held.queue.turn(ticket), () => Effect.sync(() => held.queue.leave(ticket) && this.letGo(key))), true)
    })
  }

  letGo(key: string): void {
    const held = this.held.get(key)
    if (held === undefined) return
    const next = held.queue.handOver()
    if (next === undefined) this.held.delete(key)
    else held.owner = next.value
    this.onChange?.(key)
  }
}

/** Appends `value` to the list of `key`; `true`. */
const append = <A>(lists: Map<string, Array<A>>, key: string, value: A): true => {
  const list = lists.get(key)
  if (list === undefined) lists.set(key, [value])
  else list.push(value)
  return true
}

/**
 * A checkpoint as a durable store gives it back: JSON (a checkpoint is encoded JSON; the SQL
 * stores keep it as JSON text), sharing nothing with `checkpoint`.
 */
const jsonCopy = (checkpoint: unknown): unknown => JSON.parse(JSON.stringify(checkpoint))

/** `record` with a copy of its checkpoint, if it has one (a finished or claimed record may have none). */
const withCopiedCheckpoint = (record: RunRecord): RunRecord =>
  record.checkpoint === undefined ? record : { ...record, checkpoint: jsonCopy(record.checkpoint) }

const finishedStatus = (status: Status): status is "completed" | "failed" => status === "completed" || status === "failed"

/** One steered input in memory: pending in its conversation's list until taken or withdrawn. */
interface Entry {
  readonly id: string
  readonly conversationId: string
  readonly message: unknown
  status: SteerStatus
  /** When it was taken or withdrawn (`Clock`): forgotten a retention later. */
  settledAt: number
}

const pending: SteerStatus = { _tag: "pending" }
const withdrawn: SteerStatus = { _tag: "withdrawn" }

/**
 * The in-memory steering inbox: inputs pending per conversation, senders woken when an input is
 * taken or the conversation's lock is let go of or handed over. Taken and withdrawn inputs are
 * remembered for the store's retention (their senders read how they ended), then forgotten.
 */
const memorySteering = (locks: Locks, retention: number): Steering => {
  const entries = new Map<string, Entry>()
  const waiting = new Map<string, Array<Entry>>()
  const wakers = new Map<string, Set<() => void>>()
  const wake = (conversationId: string) => {
    const woken = wakers.get(conversationId)
    if (woken === undefined) return
    wakers.delete(conversationId)
    for (const resume of woken) resume()
  }
  locks.onChange = (key) => key.startsWith("conversation:") && wake(key.slice("conversation:".length))
  const settle = (entry: Entry, status: SteerStatus, now: number) => {
    entry.status = status
    entry.settledAt = now
    const list = waiting.get(entry.conversationId)
    if (list !== undefined) {
      const at = list.indexOf(entry)
      if (at >= 0) list.splice(at, 1)
      if (list.length === 0) waiting.delete(entry.conversationId)
    }
  }
  const prune = (now: number) => {
    for (const [id, entry] of entries) if (entry.status._tag !== "pending" && entry.settledAt + retention <= now) entries.delete(id)
  }
  return {
    offer: ({ conversationId, id, message }) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        prune(now)
        const entry: Entry = { id, conversationId, message, status: pending, settledAt: 0 }
        entries.set(id, entry)
        append(waiting, conversationId, entry)
      }),
    take: (conversationId, runId, record) =>
      Effect.suspend(() => {
        const list = waiting.get(conversationId)
        if (list === undefined) return Effect.void
        const taken = list.slice()
        // recorded first: a record that fails leaves the inputs pending, their senders asleep
        return Effect.flatMap(record(taken.map(({ id, message }) => ({ id, message }))), () =>
          Effect.map(Clock.currentTimeMillis, (now) => {
            for (const entry of taken) settle(entry, { _tag: "taken", runId }, now)
            wake(conversationId)
          }))
      }),
    withdraw: (id) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const entry = entries.get(id)
        if (entry === undefined) return withdrawn
        if (entry.status._tag === "pending") settle(entry, withdrawn, now)
        return entry.status
      }),
    status: (id) => Effect.sync(() => entries.get(id)?.status ?? withdrawn),
    changed: (id, conversationId) =>
      Effect.callback<void>((resume) => {
        // taken already, or nobody holds the conversation (it was let go of since the sender looked)
        if (entries.get(id)?.status._tag !== "pending" || locks.holder(`conversation:${conversationId}`) === undefined) return resume(Effect.void)
        const waker = () => resume(Effect.void)
        const set = wakers.get(conversationId) ?? new Set()
        set.add(waker)
        wakers.set(conversationId, set)
        return Effect.sync(() => void wakers.get(conversationId)?.delete(waker))
      })
  }
}

/** A lock held for a scope: let go once, when the scope closes or by a transition's `letGo`. */
interface Holding {
  readonly key: string
  readonly scope: Scope.Scope
  released: boolean
}

/** See `RunStore.makeInMemory`. */
export const makeInMemory = (options?: MemoryOptions): RunStore.Service => {
  const retention = Duration.toMillis(Duration.fromInputUnsafe(options?.retention ?? "24 hours"))
  const records = new Map<string, RunRecord>()
  const outcomes = new Map<string, Array<Outcome>>()
  const started = new Map<string, Array<string>>()
  /** Whether the run's record is running at `version` (what a writer of its batch must hold). */
  const running = (runId: string, version: number) => {
    const record = records.get(runId)
    return record !== undefined && record.status === "running" && record.version === version
  }
  // insertion order is finishing order: the oldest come first
  const finished = new Map<string, Finished & { readonly at: number }>()
  const locks = new Locks()
  /** The locks held for each open scope, for a transition's `letGo`. */
  const holdings = new WeakMap<Scope.Scope, Array<Holding>>()
  const letGo = (holding: Holding) => {
    if (holding.released) return
    holding.released = true
    const held = holdings.get(holding.scope)
    if (held !== undefined) held.splice(held.indexOf(holding), 1)
    locks.letGo(holding.key)
  }
  /** Lets go of the locks of the current scope that `keys` names (a transition's `letGo`). */
  const letGoOf = (keys: ReadonlyArray<string> | undefined) =>
    keys === undefined || keys.length === 0 ? Effect.void : Effect.map(Effect.serviceOption(Scope.Scope), (scope) => {
      if (Option.isNone(scope)) return
      for (const holding of (holdings.get(scope.value) ?? []).filter((holding) => keys.includes(holding.key))) letGo(holding)
    })
  const lease: RunStore.Service["lease"] = (key, { owner, wait }) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(restore(locks.take(key, owner, wait)), (held) =>
        held
          ? Effect.flatMap(Effect.scope, (scope) => {
            const holding: Holding = { key, scope, released: false }
            const held = holdings.get(scope)
            if (held === undefined) holdings.set(scope, [holding])
            else held.push(holding)
            return Effect.as(Effect.addFinalizer(() => Effect.sync(() => letGo(holding))), true)
          })
          : Effect.succeed(false))
    )
  const transition = (runId: string, transition: Transition) =>
    transition.messages !== undefined && transition.messages.length > 0
      ? Effect.die(new Error("RunStore.makeInMemory keeps no conversations: a transition carries no messages"))
      : transition.letGo === undefined || transition.letGo.length === 0
      ? apply(runId, transition)
      : Effect.tap(apply(runId, transition), (next) => next === undefined ? Effect.void : letGoOf(transition.letGo))
  /** A transition, with the starts it carries recorded at the new version when it applies. */
  const transitionStarting = (runId: string, next: Transition) =>
    next.started === undefined || next.started.length === 0 ? transition(runId, next) : Effect.tap(transition(runId, next), (record) =>
      Effect.sync(() => {
        if (record !== undefined && record.status === "running") for (const callId of next.started!) append(started, runId, callId)
      }))
  const apply = (runId: string, transition: Transition) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const record = records.get(runId)
      if (record === undefined || record.status !== transition.from.status || record.version !== transition.from.version) {
        return undefined
      }
      outcomes.delete(runId)
      started.delete(runId)
      const { checkpoint: _, decidedAt, decidedBy, decisionId, ...rest } = record
      const paused = transition.to === "paused"
      const by = transition.decidedBy ?? (paused ? undefined : decidedBy)
      const at = transition.from.status === "paused" && transition.to === "running" ? now : paused ? undefined : decidedAt
      const decided = { ...(by === undefined ? {} : { decidedBy: by }), ...(at === undefined ? {} : { decidedAt: at }) }
      const id = transition.decisionId ?? (paused ? undefined : decisionId)
      const next: RunRecord = {
        ...rest,
        status: transition.to,
        version: record.version + 1,
        updatedAt: now,
        ...(transition.checkpoint === undefined ? {} : { checkpoint: jsonCopy(transition.checkpoint) }),
        ...decided,
        ...(id === undefined ? {} : { decisionId: id })
      }
      if (finishedStatus(transition.to)) {
        records.delete(runId)
        finished.set(runId, { status: transition.to, at: now, ...decided })
        prune(now)
      } else {
        records.set(runId, next)
      }
      return withCopiedCheckpoint(next)
    })
  const get = (runId: string) => Effect.sync(() => Option.map(Option.fromNullishOr(records.get(runId)), withCopiedCheckpoint))
  const prune = (now: number) => {
    for (const [runId, tombstone] of finished) {
      if (tombstone.at + retention > now) break
      finished.delete(runId)
    }
  }
  return {
    durable: false,
    retentionMillis: retention,
    now: Clock.currentTimeMillis,
    get,
    list: (filter) =>
      Effect.sync(() => {
        const matching = [...records.values()].filter((record) =>
          (filter?.status === undefined || record.status === filter.status) &&
          (filter?.agent === undefined || record.agent === filter.agent) &&
          (filter?.conversationId === undefined || record.conversationId === filter.conversationId)
        ).sort((a, b) => b.updatedAt - a.updatedAt)
        return (filter?.limit === undefined ? matching : matching.slice(0, filter.limit)).map(withCopiedCheckpoint)
      }),
    insert: (record) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        prune(now)
        if (records.has(record.runId) || finished.has(record.runId)) return false
        records.set(record.runId, withCopiedCheckpoint(record))
        return true
      }),
    transition: transitionStarting,
    transitionStarts: true,
    // one step each: nothing runs between the read (or the transition) and the lock
    getHolding: (runId) =>
      Effect.flatMap(get(runId), (record): Effect.Effect<{ record: Option.Option<RunRecord>; held: boolean }, StoreError, Scope.Scope> =>
        Option.isSome(record) && record.value.status === "paused" && !record.value.ephemeral
          ? Effect.map(lease(`conversation:${record.value.conversationId}`, { owner: runId, wait: false }), (held) => ({ record, held }))
          : Effect.succeed({ record, held: false })),
    transitionHolding: (runId, next, hold) =>
      Effect.flatMap(transitionStarting(runId, next), (record): Effect.Effect<{ record: RunRecord | undefined; held: boolean }, StoreError, Scope.Scope> =>
        record === undefined
          ? Effect.succeed({ record, held: false })
          : Effect.map(lease(hold.key, { owner: hold.owner, wait: false }), (held) => ({ record, held }))),
    takeOver: (runId, version) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const record = records.get(runId)
        if (record === undefined || !running(runId, version)) return undefined
        const next: RunRecord = { ...record, version: version + 1, updatedAt: now }
        records.set(runId, next)
        return withCopiedCheckpoint(next)
      }),
    recordStarted: (runId, version, callId) => Effect.sync(() => running(runId, version) && append(started, runId, callId)),
    started: (runId) => Effect.sync(() => started.get(runId)?.slice() ?? []),
    recordOutcome: (runId, version, outcome) => Effect.sync(() => running(runId, version) && append(outcomes, runId, outcome)),
    outcomes: (runId) => Effect.sync(() => outcomes.get(runId)?.slice() ?? []),
    finished: (runId) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        prune(now)
        return Option.map(Option.fromNullishOr(finished.get(runId)), ({ at: _, ...tombstone }): Finished => tombstone)
      }),
    holder: (key) => Effect.sync(() => Option.fromNullishOr(locks.holder(key))),
    lease,
    steering: memorySteering(locks, retention)
  }
}
