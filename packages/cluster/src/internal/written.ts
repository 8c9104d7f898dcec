/**
 * The paused records an entity wrote itself, kept for its next decision (decision 174, second
 * round): the resume's read of a run this entity paused is answered from the record its pause
 * returned, once, instead of from the database. The claim that follows names that record's
 * version (compare-and-set): should the record have moved since (a cancel, a resume outside the
 * cluster), the claim is refused and nothing ran — the handler then decides again, reading the
 * store (`fromMemory`).
 */
import type { RunStore } from "@agentfx/core"
import { Effect, Option } from "effect"

/** The paused records one entity instance wrote, by run id; each served once. */
export interface Written {
  /**
   * `store` keeping the paused record (with its checkpoint) each transition or insert returns,
   * and answering the next read of that run with it. One view per `store` object: a turn found
   * by its store view (a cooperative conversation's) is found by this one.
   */
  readonly view: (store: RunStore.RunStore.Service) => RunStore.RunStore.Service
  /**
   * Whether a read of `runId` was answered from memory and no claim of it applied since (so a
   * refusal wrote nothing); forgotten once asked.
   */
  readonly fromMemory: (runId: string) => boolean
  /** Forgets what was kept of `runId` (its record moved outside this entity's runs: a cancel). */
  readonly forget: (runId: string) => void
}

export const make = (): Written => {
  const paused = new Map<string, RunStore.RunRecord>()
  const served = new Set<string>()
  const views = new WeakMap<RunStore.RunStore.Service, RunStore.RunStore.Service>()
  const keep = (runId: string, record: RunStore.RunRecord | undefined) => {
    if (record !== undefined && record.status === "paused" && record.checkpoint !== undefined) paused.set(runId, record)
    else paused.delete(runId)
  }
  const viewOf = (store: RunStore.RunStore.Service): RunStore.RunStore.Service => ({
    ...store,
    get: (runId) => {
      const record = paused.get(runId)
      if (record === undefined) return store.get(runId)
      paused.delete(runId)
      served.add(runId)
      return Effect.succeed(Option.some(record))
    },
    insert: (record) => Effect.tap(store.insert(record), (inserted) => Effect.sync(() => keep(record.runId, inserted ? record : undefined))),
    transition: (runId, transition) =>
      store.transition(runId, transition).pipe(
        Effect.tap((next) =>
          Effect.sync(() => {
            if (next !== undefined && transition.from.status === "paused") served.delete(runId)
            keep(runId, next)
          })
        ),
        Effect.tapError(() => Effect.sync(() => keep(runId, undefined)))
      )
  })
  return {
    view: (store) => {
      let view = views.get(store)
      if (view === undefined) views.set(store, view = viewOf(store))
      return view
    },
    fromMemory: (runId) => served.delete(runId),
    forget: (runId) => void paused.delete(runId)
  }
}
