/**
 * A fair (FIFO) counting semaphore with direct hand-off.
 *
 * Effect 3's `Semaphore` wakes every waiter on each release (they race for the permit and
 * the losers queue again), which makes a release O(waiters): 1,000 queued calls behind 40
 * permits took 5–6 s of scheduler work (docs/decisions/001-fifo-bulkhead.md). Here a release
 * hands its permit to the oldest waiter, so a release is O(1) and queued calls start in
 * arrival order.
 */
import * as Effect from "effect/Effect"
import { Fifo, type Ticket } from "./fifo.js"

export class Bulkhead {
  private free: number
  private readonly queue = new Fifo<void>()

  constructor(readonly permits: number) {
    this.free = permits
  }

  /** Permits not held by anyone right now. */
  get available(): number {
    return this.free
  }

  /** A ticket for a permit: granted at once when one is free and nobody queues before it. */
  private enqueue(): Ticket<void> {
    if (this.free > 0 && this.queue.isEmpty) {
      this.free -= 1
      return Fifo.granted(undefined)
    }
    return this.queue.join(undefined)
  }

  /** A permit released: handed to the oldest waiter, else free again. */
  private release(): void {
    if (this.queue.handOver() === undefined) this.free += 1
  }

  /**
   * Runs `self` holding one permit. The bookkeeping runs uninterruptibly; only the wait and
   * `self` are interruptible, so a permit is released exactly once on success, failure,
   * timeout and interruption, and a waiter interrupted after being handed a permit passes it on.
   */
  readonly withPermit = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        const ticket = this.enqueue()
        // a free permit: no wait, and no closure built for one
        if (ticket.granted) return Effect.ensuring(restore(self), this.released)
        return Effect.matchCauseEffect(restore(this.queue.turn(ticket)), {
          onFailure: (cause) => Effect.andThen(Effect.sync(() => this.queue.leave(ticket) && this.release()), Effect.failCause(cause)),
          onSuccess: () => Effect.ensuring(restore(self), this.released)
        })
      })
    )

  /** Releases one permit (an effect description, reused by every call). */
  private readonly released = Effect.sync(() => this.release())
}
