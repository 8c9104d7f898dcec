/**
 * The replay buffer: per conversation, its last run's message as the events it was sent as,
 * kept in this process's memory so that a client that lost its connection can reattach and get
 * the message from its start, then the rest live. A message is one run: its first segment (the
 * turn) and, after each pause, the segment of the resume, in the same buffer when this process
 * ran them. Bounds: a message's replay is dropped past `maxBytes` (the run goes on, its live
 * listeners are unaffected); a paused message is kept until the conversation's next message or
 * until `maxSettled` other messages paused or ended after it; an ended one (completed, failed)
 * is replayed for `endedMillis` after it ended.
 *
 * The buffer holds encoded events (Server-Sent Events), whatever the protocol: a message's
 * `head` is what every listener gets first without its being kept (the UI message stream's
 * `start`, once per message), a segment's `ending` what closes it without being kept (its
 * `finish` and `[DONE]`: replayed only at the end of the whole message).
 */
import { Effect, Queue, Stream } from "effect"

/** An event of a listener's stream; `last` ends it (and is not sent). */
interface Frame {
  readonly bytes: Uint8Array
  readonly last: boolean
}

export interface Message {
  readonly chatId: string
  readonly messageId: string
  /** What every listener gets first, not kept in `events`. */
  readonly head: ReadonlyArray<Uint8Array>
  /** The message's events after its head, while kept; `undefined` once dropped. */
  events: Array<Uint8Array> | undefined
  bytes: number
  readonly listeners: Set<Queue.Queue<Frame>>
  /** The events that ended the last segment, not kept, while it is not streaming. */
  ending: ReadonlyArray<Uint8Array> | undefined
  status: "streaming" | "paused" | "ended"
  endedAt: number
}

export interface Bounds {
  readonly maxBytes: number
  readonly maxSettled: number
  readonly endedMillis: number
}

/** What a reattach finds. */
export type Found =
  | { readonly _tag: "None" }
  | { readonly _tag: "Dropped" }
  | { readonly _tag: "Replay"; readonly events: Stream.Stream<Uint8Array> }

export interface Replay {
  /**
   * Opens a segment of `messageId` in `chatId`'s buffer — the message goes on when it is the
   * conversation's paused message, else it replaces the conversation's — with `listener` (the
   * response of the request that started it) listening from its head.
   */
  readonly open: (chatId: string, messageId: string, listener: Queue.Queue<Frame>, head: ReadonlyArray<Uint8Array>) => Message
  /** Sends and keeps events of the message. */
  readonly push: (message: Message, events: ReadonlyArray<Uint8Array>) => void
  /** Ends the segment with `events` (kept), then `ending` (sent, and replayed while the message does not go on). */
  readonly end: (
    message: Message,
    events: ReadonlyArray<Uint8Array>,
    ending: ReadonlyArray<Uint8Array>,
    status: "paused" | "ended",
    now: number
  ) => void
  /**
   * The conversation's message from its start, then live; `None` when there is none to replay —
   * or, given `messageId`, when the conversation's message is another.
   */
  readonly reattach: (chatId: string, now: number, messageId?: string) => Effect.Effect<Found>
  /**
   * The id of the conversation's last message this process ran (its run's id) while the buffer
   * keeps it — streaming, paused or ended, replayed or not — so that a thread read names that
   * message as a reattach does.
   */
  readonly last: (chatId: string) => string | undefined
}

/** What ends a listener's stream (it is not sent). */
const closing = new Uint8Array()

/** A listener's queue, and its stream: its events until the last. */
export const listen = Effect.map(Queue.unbounded<Frame>(), (queue) => ({
  queue,
  stream: (message: () => Message | undefined) =>
    Stream.fromQueue(queue).pipe(
      Stream.takeWhile((frame) => !frame.last),
      Stream.map((frame) => frame.bytes),
      Stream.ensuring(Effect.sync(() => message()?.listeners.delete(queue)))
    )
}))

export const make = (bounds: Bounds): Replay => {
  const messages = new Map<string, Message>()
  /** The conversations whose message paused or ended, oldest first. */
  const settled = new Set<string>()

  const send = (message: Message, bytes: Uint8Array, last: boolean) => {
    for (const listener of message.listeners) Queue.offerUnsafe(listener, { bytes, last })
  }
  const keep = (message: Message, bytes: Uint8Array) => {
    if (message.events === undefined) return
    message.bytes += bytes.byteLength
    if (message.bytes > bounds.maxBytes) message.events = undefined
    else message.events.push(bytes)
  }

  const open: Replay["open"] = (chatId, messageId, listener, head) => {
    const previous = messages.get(chatId)
    const goesOn = previous !== undefined && previous.messageId === messageId && previous.status === "paused"
    const message: Message = goesOn ? previous : {
      chatId,
      messageId,
      head,
      events: [],
      bytes: 0,
      listeners: new Set(),
      ending: undefined,
      status: "streaming",
      endedAt: 0
    }
    message.status = "streaming"
    message.ending = undefined
    settled.delete(chatId)
    messages.set(chatId, message)
    message.listeners.add(listener)
    for (const bytes of head) Queue.offerUnsafe(listener, { bytes, last: false })
    return message
  }

  const push: Replay["push"] = (message, events) => {
    for (const bytes of events) {
      keep(message, bytes)
      send(message, bytes, false)
    }
  }

  const end: Replay["end"] = (message, events, ending, status, now) => {
    push(message, events)
    message.ending = ending
    message.status = status
    message.endedAt = now
    for (const bytes of ending) send(message, bytes, false)
    // the segment is over: its listeners' streams end here
    send(message, closing, true)
    message.listeners.clear()
    if (messages.get(message.chatId) !== message) return
    settled.delete(message.chatId)
    settled.add(message.chatId)
    for (const oldest of settled) {
      if (settled.size <= bounds.maxSettled) break
      settled.delete(oldest)
      messages.delete(oldest)
    }
  }

  const reattach: Replay["reattach"] = (chatId, now, messageId) =>
    Effect.flatMap(listen, ({ queue, stream }) =>
      Effect.sync((): Found => {
        const message = messages.get(chatId)
        if (message === undefined || (message.status === "ended" && now - message.endedAt > bounds.endedMillis)) return { _tag: "None" }
        if (messageId !== undefined && message.messageId !== messageId) return { _tag: "None" }
        if (message.events === undefined) return { _tag: "Dropped" }
        const replay = Stream.fromIterable([...message.head, ...message.events])
        if (message.ending !== undefined) return { _tag: "Replay", events: Stream.concat(replay, Stream.fromIterable(message.ending)) }
        message.listeners.add(queue)
        return { _tag: "Replay", events: Stream.concat(replay, stream(() => message)) }
      })
    )

  return { open, push, end, reattach, last: (chatId) => messages.get(chatId)?.messageId }
}
