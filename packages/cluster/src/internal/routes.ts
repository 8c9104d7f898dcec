/**
 * The entities of the runs this process saw paused (decision 174, second round): a decision on
 * one of them is sent to its entity without reading the run's record first. A run's entity is
 * fixed when it starts (its conversation's, or its own); the handler refuses a decision for a
 * run of another entity (`RunNotFound`, nothing changed), and the client then reads the record
 * and sends it again. Kept until the run's decision is answered, at most {@link capacity} runs
 * (the oldest go first).
 */

/** How many runs' entities one agent's client keeps. */
export const capacity = 10_000

/** Run id → entity id, per agent entity of this process. */
const routes = new WeakMap<object, Map<string, string>>()

const of = (entity: object) => {
  let map = routes.get(entity)
  if (map === undefined) routes.set(entity, map = new Map())
  return map
}

/** Notes that run `runId` of `entity` paused on its entity `entityId`. */
export const remember = (entity: object, runId: string, entityId: string): void => {
  const map = of(entity)
  map.delete(runId)
  map.set(runId, entityId)
  if (map.size > capacity) map.delete(map.keys().next().value!)
}

/** The entity run `runId` of `entity` paused on, if this process saw it. */
export const find = (entity: object, runId: string): string | undefined => routes.get(entity)?.get(runId)

/** Forgets where run `runId` of `entity` is. */
export const forget = (entity: object, runId: string): void => void routes.get(entity)?.delete(runId)
