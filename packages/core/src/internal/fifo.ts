/**
 * A first-in, first-out queue of waiters with direct hand-off: a turn (a permit, a lock) is
 * handed to the oldest waiter still waiting, which alone is woken — nobody races for it, and a
 * hand-off is O(1). The bulkhead's permits and the in-memory store's keyed locks both queue here.
 */
import * as Effect from "effect/Effect"

/** One waiter's place in the queue, carrying who waits. */
export interface Ticket<A> {
  readonly value: A
  granted: boolean
  cancelled: boolean
  wake: (() => void) | undefined
  next: Ticket<A> | undefined
}

export class Fifo<A> {
  private head: Ticket<A> | undefined = undefined
  private tail: Ticket<A> | undefined = undefined

  /** Whether nobody is queued (a waiter that left may still hold its place until it is passed over). */
  get isEmpty(): boolean {
    return this.head === undefined
  }

  /** A ticket granted at once, queued behind nobody. */
  static granted<A>(value: A): Ticket<A> {
    return { value, granted: true, cancelled: false, wake: undefined, next: undefined }
  }

  /** Queues a waiter: its ticket, granted once its turn is handed to it. */
  join(value: A): Ticket<A> {
    const ticket: Ticket<A> = { value, granted: false, cancelled: false, wake: undefined, next: undefined }
    if (this.tail === undefined) this.head = ticket
    else this.tail.next = ticket
    this.tail = ticket
    return ticket
  }

  /** Hands the turn to the oldest waiter still waiting, and wakes it; `undefined` when none waits. */
  handOver(): Ticket<A> | undefined {
    let ticket = this.head
    while (ticket !== undefined && ticket.cancelled) ticket = ticket.next
    if (ticket === undefined) {
      this.head = this.tail = undefined
      return undefined
    }
    this.head = ticket.next
    if (this.head === undefined) this.tail = undefined
    ticket.granted = true
    ticket.wake?.()
    return ticket
  }

  /**
   * Waits for the ticket's turn. Interrupted, the waiter must {@link leave}. A waiter handed its
   * turn goes on after a yield, not inside the hand-off: Effect 4 resumes a suspended fiber at
   * once, and a hand-off happens in the releasing fiber's finalizer — while `Fiber.interruptAll`
   * interrupts one fiber after the other, a waiter resumed there would start its work before
   * its own interruption arrives.
   */
  readonly turn = (ticket: Ticket<A>): Effect.Effect<void> =>
    Effect.callback<void>((resume) => {
      if (ticket.granted) return resume(Effect.void)
      ticket.wake = () => resume(Effect.yieldNow)
    })

  /** A waiter leaves the queue: `true` when its turn had been handed to it already (the caller must pass it on). */
  leave(ticket: Ticket<A>): boolean {
    if (ticket.granted) return true
    ticket.cancelled = true
    return false
  }
}
