/**
 * The client's side of a watch (decision 171): a segment of a run followed to its stop, on
 * whichever runner drives it. When the stream from a runner ends before the stop (the runner
 * stopped, its shard moved, the connection was lost), the watch is sent again with the last
 * cursor: the owner of the run's entity then — the same runner, or the one that took the run
 * over — continues after it, or says that events were lost (a gap). Elements already given are
 * never given again (a cursor seen, or one before it in the same driving, is skipped).
 */
import type { Agent, AgentEvent } from "@agentfx/core"
import { Cause, Effect, Option, Stream } from "effect"
import type * as RunOutcome from "../RunOutcome.js"
import * as EventWire from "./eventWire.js"
import * as Feeds from "./feeds.js"
import * as Protocol from "./protocol.js"

/** One element of a watched run, as a watcher gets it. */
export type Watched =
  | { readonly _tag: "Event"; readonly cursor: string; readonly event: AgentEvent.AgentEvent }
  | { readonly _tag: "Gap"; readonly cursor: string; readonly message: string }
  | { readonly _tag: "Outcome"; readonly cursor: string; readonly outcome: RunOutcome.RunOutcome }

/** Whether `watched` is the stop of run `runId`'s segment (a sub-agent's run stopping is not). */
export const isStop = (runId: string, watched: Watched): boolean =>
  watched._tag === "Outcome" ||
  (watched._tag === "Event" && watched.event.runId === runId && (watched.event._tag === "RunPaused" || watched.event._tag === "RunCompleted"))

/** How long a watch waits before it is sent again after its stream ended early. */
const again = "200 millis"

type Send = (payload: { readonly runId: string; readonly from?: number; readonly after?: string }) => Stream.Stream<
  typeof Protocol.Watched.Type,
  { readonly _tag: string },
  never
>

/**
 * Segment `from` (`undefined`: the run's start) of `runId`, of `agent`, after cursor `after`,
 * through `send` (the entity's client). A refusal of the runner fails the stream (no element
 * was given); any other failure or an early end sends the watch again.
 */
export const follow = <E extends { readonly _tag: string }>(
  agent: Agent.Any,
  send: Send,
  runId: string,
  from: number | undefined,
  after: string | undefined,
  refusal: (error: { readonly _tag: string }) => Option.Option<E>
): Stream.Stream<Watched, E> =>
  Stream.suspend(() => {
    let last = after === undefined ? undefined : Feeds.parse(after)
    let stopped = false
    const fresh = (cursor: string) => {
      const at = Feeds.parse(cursor)
      if (at === undefined) return true
      if (last !== undefined && at.driver === last.driver && at.index <= last.index) return false
      last = at
      return true
    }
    const decode = (element: Exclude<typeof Protocol.Watched.Type, { readonly _tag: "Alive" }>): Effect.Effect<Watched> =>
      element._tag === "Event"
        ? Effect.map(
          Effect.orDie(EventWire.decode(agent, element.event)),
          (event): Watched => ({ _tag: "Event", cursor: element.cursor, event })
        )
        : Effect.succeed(element)
    const once: Stream.Stream<Watched, E> = Stream.suspend(() =>
      send({
        runId,
        ...(from === undefined ? {} : { from }),
        ...(last === undefined ? {} : { after: `${last.driver}:${last.index}` })
      })
    ).pipe(
      // a runner that went away without closing its stream (a killed host) is heard from no more: asked again
      Stream.timeout(Protocol.silence),
      Stream.filter((element): element is Exclude<typeof element, { readonly _tag: "Alive" }> => element._tag !== "Alive" && fresh(element.cursor)),
      Stream.mapEffect(decode),
      Stream.tap((watched) => Effect.sync(() => void (stopped ||= isStop(runId, watched)))),
      Stream.catchCause((cause): Stream.Stream<Watched, E> => {
        const error = Cause.findErrorOption(cause)
        const refused = Option.flatMap(error, refusal)
        if (Option.isSome(refused)) return Stream.fail(refused.value)
        // the runner went away mid-stream (its entity interrupted, the connection lost): sent again below
        return Option.isSome(error) || Cause.hasInterrupts(cause) ? Stream.empty : Stream.failCause(cause as Cause.Cause<never>)
      })
    )
    const loop: Stream.Stream<Watched, E> = Stream.concat(
      once,
      Stream.suspend(() => stopped ? Stream.empty : Stream.unwrap(Effect.as(Effect.sleep(again), loop)))
    )
    return loop
  })
