/**
 * The run store as an entity's handler sees it: the entity's ownership of its shard replaces
 * the store's leases on the keys it owns (`conversation:<id>` or `run:<id>` of its entity, and
 * `run:<id>` of the run it drives). Such a lease is granted at once and written nowhere, and
 * its holder is this runner; every other key, and every other method, is the store's. A
 * runner that took over a crashed runner's shard therefore drives its runs at once, without
 * waiting for the dead runner's lease to lapse; the store's version fences still refuse a
 * writer that lost the run (`takeOver`), should the engine ever give a run two owners.
 */
import { RunStore } from "@agentfx/core"
import { Effect, Option } from "effect"

/**
 * `store` with the leases on `keys` held by `holder` (a runner's address). Without the store's
 * steps that take a lease in their own statement (`getHolding`, `transitionHolding`: they would
 * write the row of a key the entity owns): the core takes those leases here, by `lease`, which
 * costs an owned key nothing.
 */
export const owned = (store: RunStore.RunStore.Service, keys: ReadonlySet<string>, holder: string): RunStore.RunStore.Service => {
  const { getHolding: _getHolding, transitionHolding: _transitionHolding, ...rest } = store
  return {
    ...rest,
    lease: (key, options) => keys.has(key) ? Effect.succeed(true) : store.lease(key, options),
    holder: (key) => keys.has(key) ? Effect.succeed(Option.some(holder)) : store.holder(key)
  }
}
