/**
 * The runner's side of a watch (decision 171): the segment of a run that a watcher asked for,
 * from what this runner keeps of it. A segment not here yet (its start or decision not
 * delivered yet, its run being taken over) is waited for; one that ended where this runner
 * kept nothing of it is told as a gap and the run's state read from its record.
 */
import type { Agent, RunStore } from "@agentfx/core"
import { Effect, Option, Queue, Stream } from "effect"
import type { EntityAddress } from "effect/cluster/EntityAddress"
import { Refused } from "../RunOutcome.js"
import * as EventWire from "./eventWire.js"
import * as Feeds from "./feeds.js"
import * as Outcome from "./outcome.js"
import * as Protocol from "./protocol.js"
import type { Watch, Watched } from "./protocol.js"

type WatchPayload = (typeof Watch)["payloadSchema"]["Type"]
type WatchedType = typeof Watched.Type

/** The entity of a run, by its record. */
export const entityIdOf = (record: RunStore.RunRecord): string =>
  record.ephemeral ? `run:${record.runId}` : `conversation:${record.conversationId}`

const notFound = (runId: string) =>
  new Refused({ runId, reason: "RunNotFound", message: `Run ${runId} was not found (unknown, or not a run of this agent or entity)` })

/** Where the segment is, once known: kept here, or over with nothing kept (the run's record then). */
type Located =
  | { readonly _tag: "Here"; readonly segment: Feeds.Segment }
  | { readonly _tag: "Over"; readonly record: RunStore.RunRecord }

/**
 * Whether segment `key` of the run of `record` is over: the run stopped since (it is not
 * running, and not paused at the very pause the segment decides).
 */
const isOver = (record: RunStore.RunRecord, key: string) =>
  record.status !== "running" && !(record.status === "paused" && key === String(record.version))

/** Serves watches of `agent`'s runs on the entity at `address`, from `feeds`. */
export const make = (agent: Agent.Any, feeds: Feeds.Feeds, store: RunStore.RunStore.Service, address: EntityAddress) => {
  const read = (runId: string) => Effect.mapError(store.get(runId), (error) => Outcome.refused(runId, error))

  /** The segment `key` of `runId`, waited for until it begins here or the record says it is over. */
  const locate = (runId: string, key: string, from: number | undefined): Effect.Effect<Located, Refused> =>
    Effect.suspend(() => {
      // listening before looking: a segment that begins meanwhile wakes this look's wait
      let woken = false
      let wake: (() => void) | undefined
      const release = feeds.await(runId, () => {
        woken = true
        wake?.()
      })
      const look = Effect.gen(function*() {
        const kept = feeds.get(runId, key)
        if (kept !== undefined) return { _tag: "Here", segment: kept } as const
        const record = yield* read(runId)
        if (Option.isSome(record)) {
          if (record.value.agent !== agent.name || entityIdOf(record.value) !== address.entityId) return yield* notFound(runId)
          if (isOver(record.value, key)) return { _tag: "Over", record: record.value } as const
        } else if (from !== undefined) {
          return yield* notFound(runId)
        }
        // not begun here yet: its message is on its way, or its run is being taken over
        if (!woken) yield* Effect.callback<void>((resume) => void (wake = () => resume(Effect.void)))
        return undefined
      })
      return look.pipe(
        Effect.ensuring(Effect.sync(release)),
        Effect.flatMap((found): Effect.Effect<Located, Refused> => found === undefined ? locate(runId, key, from) : Effect.succeed(found))
      )
    })

  const follow = (segment: Feeds.Segment, after: string | undefined): Stream.Stream<WatchedType> => {
    const seen = after === undefined ? undefined : Feeds.parse(after)
    const mine = seen !== undefined && seen.driver === segment.driver
    // a cursor of another driving (a runner that was lost), or none on a segment taken over: the events between are not here
    const gap = (after !== undefined && !mine) || (after === undefined && segment.recovered)
    const first = mine ? seen.index + 1 : 0
    const entries = Stream.callback<readonly [Feeds.Entry, number]>((queue) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          let index = first
          for (; index < segment.entries.length; index++) Queue.offerUnsafe(queue, [segment.entries[index]!, index] as const)
          if (segment.done) return Queue.endUnsafe(queue)
          const listener = (entry: Feeds.Entry | undefined) =>
            entry === undefined ? Queue.endUnsafe(queue) : void Queue.offerUnsafe(queue, [entry, index++] as const)
          segment.listeners.add(listener)
          return listener
        }),
        (listener) => Effect.sync(() => typeof listener === "function" && segment.listeners.delete(listener))
      ))
    const encoded = Stream.mapEffect(entries, ([entry, index]): Effect.Effect<WatchedType> =>
      entry._tag === "Outcome"
        ? Effect.succeed({ _tag: "Outcome", cursor: Feeds.cursor(segment, index), outcome: entry.outcome })
        : Effect.map(EventWire.encode(agent, entry.event), (event) => ({ _tag: "Event", cursor: Feeds.cursor(segment, index), event })))
    if (!gap) return encoded
    return Stream.concat(
      Stream.make<[WatchedType]>({
        _tag: "Gap",
        cursor: Feeds.cursor(segment, first - 1),
        message: segment.recovered
          ? `Events of run ${segment.runId} were lost with the runner that drove it; it was taken over and continues from its records`
          : `Events of run ${segment.runId} before this point are not kept by the runner that drives it now`
      }),
      encoded
    )
  }

  const alive = Stream.map(Stream.tick(Protocol.heartbeat), (): WatchedType => ({ _tag: "Alive" }))

  return ({ after, from, runId }: WatchPayload): Stream.Stream<WatchedType, Refused> =>
    Stream.merge(segmentOf(runId, from, after), alive, { haltStrategy: "left" })

  function segmentOf(runId: string, from: number | undefined, after: string | undefined): Stream.Stream<WatchedType, Refused> {
    return Stream.unwrap(Effect.map(locate(runId, Feeds.keyOf(from), from), (located) =>
      located._tag === "Here"
        ? follow(located.segment, after)
        : Stream.make<[WatchedType, WatchedType]>(
          {
            _tag: "Gap",
            cursor: "record:-1",
            message: `The events of this segment of run ${runId} are not kept by the runner that drives it now; the run's state is read from its record`
          },
          { _tag: "Outcome", cursor: "record:0", outcome: Outcome.fromRecord(located.record) }
        )))
  }
}
