/**
 * A fair (FIFO) counting semaphore with direct hand-off.
 *
 * Effect 3's `Semaphore` wakes every waiter on each release (they race for the permit and
 * the losers queue again), which makes a release O(waiters): 1,000 queued calls behind 40
 * permits took 5–6 s of scheduler work (docs/decisions/001-fifo-bulkhead.md). Here a release
 * hands its permit to the oldest waiter, so a release is O(1) and queued calls start in
 * arrival order.
 */
import { Effect } from "effect"

interface Ticket {
  granted: boolean
  cancelled: boolean
  wake: (() => void) | undefined
  next: Ticket | undefined
}

export class Bulkhead {
  private free: number
  private head: Ticket | undefined = undefined
  private tail: Ticket | undefined = undefined

  constructor(readonly permits: number) {
    this.free = permits
  }

  /** Permits not held by anyone right now. */
  get available(): number {
    return this.free
  }

  private enqueue(): Ticket {
    const ticket: Ticket = { granted: false, cancelled: false, wake: undefined, next: undefined }
    if (this.free > 0 && this.head === undefined) {
      this.free -= 1
      ticket.granted = true
      return ticket
    }
    if (this.tail === undefined) this.head = ticket
    else this.tail.next = ticket
    this.tail = ticket
    return ticket
  }

  private release(): void {
    let ticket = this.head
    while (ticket !== undefined && ticket.cancelled) ticket = ticket.next
    if (ticket === undefined) {
      this.head = this.tail = undefined
      this.free += 1
      return
    }
    this.head = ticket.next
    if (this.head === undefined) this.tail = undefined
    ticket.granted = true
    ticket.wake?.()
  }

  private cancel(ticket: Ticket): void {
    if (ticket.granted) this.release()
    else ticket.cancelled = true
  }

  private readonly turn = (ticket: Ticket) =>
    Effect.async<void>((resume) => {
      if (ticket.granted) return resume(Effect.void)
      ticket.wake = () => resume(Effect.void)
    })

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
        return Effect.matchCauseEffect(restore(this.turn(ticket)), {
          onFailure: (cause) => Effect.zipRight(Effect.sync(() => this.cancel(ticket)), Effect.failCause(cause)),
          onSuccess: () => Effect.ensuring(restore(self), this.released)
        })
      })
    )

  /** Releases one permit (an effect description, reused by every call). */
  private readonly released = Effect.sync(() => this.release())
}
