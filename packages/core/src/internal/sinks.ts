/**
 * Where the receivers of events are: each under its own key in the context (`AgentEvent.layer`,
 * `AgentEvent.withSink`, `Agent.stream`), so that the receivers of Layers built side by side
 * are all there once merged — one key holding a set would keep one Layer's set (decision 121).
 */
import * as Context from "effect/Context"
import type { Sink } from "../AgentEvent.js"

const prefix = "@agentfx/core/AgentEvent/Sink/"
let next = 0

/** A key of its own for one receiver. */
export const sinkKey = (): Context.Key<never, Sink> => Context.Service<never, Sink>(`${prefix}${next++}`)

const none: ReadonlyArray<Sink> = []

/** The receivers in `context`, in the order they were added. */
export const sinksOf = (context: Context.Context<never>): ReadonlyArray<Sink> => {
  let found: Array<Sink> | undefined
  for (const [key, value] of context.mapUnsafe) if (key.startsWith(prefix)) (found ??= []).push(value as Sink)
  return found ?? none
}
