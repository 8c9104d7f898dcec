/**
 * What a runner keeps of the runs it drives, for the clients that watch them (decision 171).
 * A run is driven in segments — its start, then each decision on a pause — each to its stop (a
 * pause, the answer, a failure). A segment's events are kept in the order the loop emitted
 * them while it runs, and for a while after (the last {@link finishedKept} finished segments
 * of the runner), each numbered by a cursor `<driver>:<index>`: `driver` names this runner's
 * driving of the segment (unique to the process), `index` the event's place in it. Watchers
 * are given what was kept after their cursor, then each event as it comes, to the stop.
 *
 * Events are observation only: nothing here is read by the run, and a watcher that is slow or
 * gone never holds it up (its events wait in an unbounded queue, dropped with it).
 */
import type { AgentEvent } from "@agentfx/core"
import { randomUUID } from "node:crypto"
import type { RunOutcome } from "../RunOutcome.js"

/** One kept element of a segment: an event of the run, or its stop when no event says it. */
export type Entry =
  | { readonly _tag: "Event"; readonly event: AgentEvent.AgentEvent }
  | { readonly _tag: "Outcome"; readonly outcome: RunOutcome }

/** A segment of a run, as this runner drove it. */
export interface Segment {
  readonly runId: string
  /** `"start"`, or the revision of the pause whose decision drives it. */
  readonly key: string
  readonly driver: string
  /** Continued from its records after the runner that drove it was lost: its events before the takeover are not here. */
  readonly recovered: boolean
  readonly entries: Array<Entry>
  done: boolean
  readonly listeners: Set<(entry: Entry | undefined) => void>
}

/** How many finished segments a runner keeps for watchers that come late or reattach; the oldest go first. */
export const finishedKept = 200

/** The key of the segment a start drives, or a decision on the pause at `revision`. */
export const keyOf = (revision: number | undefined): string => revision === undefined ? "start" : String(revision)

/** A cursor: the driving and the event's index in it (`-1`: before its first event). */
export const cursor = (segment: Segment, index: number): string => `${segment.driver}:${index}`

/** The driving and index a cursor names; `undefined` for one that is not a cursor. */
export const parse = (value: string): { readonly driver: string; readonly index: number } | undefined => {
  const at = value.lastIndexOf(":")
  const index = Number(value.slice(at + 1))
  return at <= 0 || !Number.isSafeInteger(index) || index < -1 ? undefined : { driver: value.slice(0, at), index }
}

/** The segments of one runner, shared by its entities' instances. */
export const make = () => {
  const process = randomUUID().slice(0, 8)
  let drivings = 0
  const byRun = new Map<string, Map<string, Segment>>()
  /** Called when a segment of the run begins or stops (watchers waiting for theirs look again). */
  const waiters = new Map<string, Set<() => void>>()
  const finished: Array<Segment> = []

  const wake = (runId: string) => {
    for (const waiter of waiters.get(runId) ?? []) waiter()
  }

  const get = (runId: string, key: string): Segment | undefined => byRun.get(runId)?.get(key)

  /** A new driving of segment `key` of `runId` (a segment driven again replaces the one kept). */
  const begin = (runId: string, key: string, recovered: boolean): Segment => {
    const segment: Segment = { runId, key, driver: `${process}.${++drivings}`, recovered, entries: [], done: false, listeners: new Set() }
    let segments = byRun.get(runId)
    if (segments === undefined) byRun.set(runId, segments = new Map())
    segments.set(key, segment)
    wake(runId)
    return segment
  }

  const push = (segment: Segment, entry: Entry) => {
    if (segment.done) return
    segment.entries.push(entry)
    for (const listener of segment.listeners) listener(entry)
  }

  const stop = (segment: Segment) => {
    if (segment.done) return
    segment.done = true
    for (const listener of segment.listeners) listener(undefined)
    segment.listeners.clear()
    finished.push(segment)
    while (finished.length > finishedKept) {
      const oldest = finished.shift()!
      const segments = byRun.get(oldest.runId)
      if (segments?.get(oldest.key) === oldest) segments.delete(oldest.key)
      if (segments?.size === 0) byRun.delete(oldest.runId)
    }
    wake(segment.runId)
  }

  /** A driving cut off (its runner stopping, its shard lost): its watchers' streams end, and it is not kept. */
  const abandon = (segment: Segment) => {
    if (segment.done) return
    segment.done = true
    for (const listener of segment.listeners) listener(undefined)
    segment.listeners.clear()
    const segments = byRun.get(segment.runId)
    if (segments?.get(segment.key) === segment) segments.delete(segment.key)
    if (segments?.size === 0) byRun.delete(segment.runId)
    wake(segment.runId)
  }

  /** Calls `waiter` whenever a segment of `runId` begins or stops, until the returned function is called. */
  const await_ = (runId: string, waiter: () => void): () => void => {
    let set = waiters.get(runId)
    if (set === undefined) waiters.set(runId, set = new Set())
    set.add(waiter)
    return () => {
      set.delete(waiter)
      if (set.size === 0 && waiters.get(runId) === set) waiters.delete(runId)
    }
  }

  return { get, begin, push, stop, abandon, await: await_ }
}

/** A runner's segments. */
export type Feeds = ReturnType<typeof make>
