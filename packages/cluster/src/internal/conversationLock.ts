/**
 * A conversation's turn held on the runner that owns its entity, for an agent whose running turn
 * a newer message steers or cancels (`onConversationBusy`: "steer", "interrupt", "rollback";
 * decision 175). The entity's ownership still replaces the store's leases (`owned`), but its
 * conversation's lease is a lock in the runner, held by the turn's run: the core then sees the
 * conversation busy, and its policy runs as on one process — the steering inbox (the store's),
 * the running turn's cancel signal (the core keeps it per store object: every turn of the
 * entity sees one). Senders of steered input are woken in the runner, where the turn that takes
 * it runs; every second they look again, should a take or a let-go have gone unseen.
 */
import type { RunStore } from "@agentfx/core"
import { Deferred, Effect, Option } from "effect"
import { owned } from "./ownedStore.js"

/** The lock and the store view of one entity, shared by its instances while it is in use. */
interface Held {
  readonly view: RunStore.RunStore.Service
  /** The `run:<id>` keys of the runs the entity drives now (owned by the entity, as `owned` has them). */
  readonly keys: Set<string>
  users: number
}

/** How long a steered input's sender waits before it looks again when nothing woke it. */
const lookAgain = "1 second"

/** The conversation lock of `key` over `store`'s view owned by `holder`: one owner at a time, handed over in arrival order. */
const makeView = (store: RunStore.RunStore.Service, key: string, keys: Set<string>, holder: string): RunStore.RunStore.Service => {
  let owner: string | undefined
  const queue: Array<{ readonly owner: string; readonly turn: Deferred.Deferred<void> }> = []
  let wakers = new Set<() => void>()
  const wake = () => {
    const woken = wakers
    wakers = new Set()
    for (const resume of woken) resume()
  }
  const letGo = () => {
    const next = queue.shift()
    owner = next?.owner
    if (next !== undefined) Deferred.doneUnsafe(next.turn, Effect.void)
    wake()
  }
  const take = (by: string, wait: boolean) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        const held = Effect.as(Effect.addFinalizer(() => Effect.sync(letGo)), true)
        if (owner === undefined) {
          owner = by
          return held
        }
        if (!wait) return Effect.succeed(false)
        const ticket = { owner: by, turn: Deferred.makeUnsafe<void>() }
        queue.push(ticket)
        // interrupted while waiting: leave the queue, or pass on a lock handed over meanwhile
        return Effect.andThen(
          Effect.onInterrupt(restore(Deferred.await(ticket.turn)), () =>
            Effect.sync(() => {
              const at = queue.indexOf(ticket)
              if (at >= 0) queue.splice(at, 1)
              else letGo()
            })),
          held
        )
      })
    )
  const base = owned(store, keys, holder)
  const steering = store.steering
  return {
    ...base,
    lease: (leased, options) => leased === key ? take(options.owner, options.wait) : base.lease(leased, options),
    holder: (of) => of === key ? Effect.sync(() => Option.fromNullishOr(owner)) : base.holder(of),
    steering: steering === undefined ? undefined : {
      ...steering,
      // its senders woken once the take is done (a record that fails takes nothing)
      take: (conversationId, runId, record) =>
        Effect.suspend(() => {
          let took = false
          return Effect.tap(
            steering.take(conversationId, runId, (taken) => Effect.tap(record(taken), () => Effect.sync(() => void (took = true)))),
            () => Effect.sync(() => took && wake())
          )
        }),
      // listening before looking: a take or a let-go meanwhile wakes this wait
      changed: (id) =>
        Effect.suspend(() => {
          let resume: (() => void) | undefined
          let woken = false
          const waker = () => {
            woken = true
            resume?.()
          }
          wakers.add(waker)
          return Effect.flatMap(steering.status(id), (status) =>
            woken || owner === undefined || status._tag !== "pending"
              ? Effect.void
              : Effect.callback<void>((done) => void (resume = () => done(Effect.void))).pipe(Effect.timeoutOption(lookAgain), Effect.asVoid)).pipe(
              Effect.ensuring(Effect.sync(() => void wakers.delete(waker)))
            )
        })
    }
  }
}

/** The views of a runner's entities, per store (one per runner): an entity's entry lives while it has turns or senders in flight. */
const views = new WeakMap<RunStore.RunStore.Service, Map<string, Held>>()

/**
 * Runs `use` with the store view of entity `entityId` (a conversation: `conversation:<id>`, the
 * key its turns lease), as runner `holder` owns it, while run `runId` is driven.
 */
export const holding = <A, E, R>(
  store: RunStore.RunStore.Service,
  entityId: string,
  holder: string,
  runId: string,
  use: (view: RunStore.RunStore.Service) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    let byEntity = views.get(store)
    if (byEntity === undefined) views.set(store, byEntity = new Map())
    let held = byEntity.get(entityId)
    if (held === undefined) {
      const keys = new Set<string>()
      byEntity.set(entityId, held = { view: makeView(store, entityId, keys, holder), keys, users: 0 })
    }
    const mine = held
    const runKey = `run:${runId}`
    mine.users++
    mine.keys.add(runKey)
    return Effect.ensuring(
      use(mine.view),
      Effect.sync(() => {
        mine.keys.delete(runKey)
        if (--mine.users === 0 && byEntity.get(entityId) === mine) byEntity.delete(entityId)
      })
    )
  })

/** The policies whose running turn a newer message steers or cancels: a start on such an agent's conversation is not queued. */
export const cooperative: ReadonlySet<string> = new Set(["steer", "interrupt", "rollback"])
