/**
 * The replay buffer: per chat, its last assistant message as the events it was sent as, kept in
 * this process's memory so that a client that lost its connection can reattach and get the
 * message from its start, then the rest live. A message is one run: its first segment (the
 * turn) and, after each pause, the segment of the resume, in the same buffer when this process
 * ran them. Bounds: a message's replay is dropped past `maxBytes` (the run goes on, its live
 * listeners are unaffected); a paused message is kept until the chat's next message or until
 * `maxSettled` other messages paused or ended after it; an ended one (completed, failed) is
 * replayed for `endedMillis` after it ended.
 */
import { Effect, Queue, Stream } from "effect"
import * as UiChunk from "../UiChunk.js"

/** An event of a listener's stream; `last` ends it. */
interface Frame {
  readonly bytes: Uint8Array
  readonly last: boolean
}

export interface Message {
  readonly chatId: string
  readonly messageId: string
  /** The message's events after its `start`, while kept; `undefined` once dropped. */
  events: Array<Uint8Array> | undefined
  bytes: number
  readonly listeners: Set<Queue.Queue<Frame>>
  /** The events that ended the last segment (`finish`, `[DONE]`), while it is not streaming. */
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
   * chat's paused message, else it replaces the chat's — with `listener` (the response of the
   * request that started it) listening from its `start`.
   */
  readonly open: (chatId: string, messageId: string, listener: Queue.Queue<Frame>) => Message
  /** Sends and keeps chunks of the message. */
  readonly push: (message: Message, chunks: ReadonlyArray<UiChunk.UiChunk>) => void
  /** Ends the segment with `chunks`, then `finish` and `[DONE]`. */
  readonly end: (message: Message, chunks: ReadonlyArray<UiChunk.UiChunk>, finish: UiChunk.FinishReason, now: number) => void
  /** The chat's message from its start, then live; `None` when there is none to replay. */
  readonly reattach: (chatId: string, now: number) => Effect.Effect<Found>
}

/** A listener's queue, and its stream: its events until the last. */
export const listen = Effect.map(Queue.unbounded<Frame>(), (queue) => ({
  queue,
  stream: (message: () => Message | undefined) =>
    Stream.fromQueue(queue).pipe(
      Stream.takeUntil((frame) => frame.last),
      Stream.map((frame) => frame.bytes),
      Stream.ensuring(Effect.sync(() => message()?.listeners.delete(queue)))
    )
}))

export const make = (bounds: Bounds): Replay => {
  const messages = new Map<string, Message>()
  /** The chats whose message paused or ended, oldest first. */
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

  const open: Replay["open"] = (chatId, messageId, listener) => {
    const previous = messages.get(chatId)
    const goesOn = previous !== undefined && previous.messageId === messageId && previous.status === "paused"
    const message: Message = goesOn ? previous : {
      chatId,
      messageId,
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
    Queue.offerUnsafe(listener, { bytes: UiChunk.toEvent({ type: "start", messageId }), last: false })
    return message
  }

  const push: Replay["push"] = (message, chunks) => {
    for (const chunk of chunks) {
      const bytes = UiChunk.toEvent(chunk)
      keep(message, bytes)
      send(message, bytes, false)
    }
  }

  const end: Replay["end"] = (message, chunks, finish, now) => {
    push(message, chunks)
    message.ending = [UiChunk.toEvent({ type: "finish", finishReason: finish }), UiChunk.done]
    message.status = finish === "tool-calls" ? "paused" : "ended"
    message.endedAt = now
    send(message, message.ending[0]!, false)
    send(message, message.ending[1]!, true)
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

  const reattach: Replay["reattach"] = (chatId, now) =>
    Effect.flatMap(listen, ({ queue, stream }) =>
      Effect.sync((): Found => {
        const message = messages.get(chatId)
        if (message === undefined || (message.status === "ended" && now - message.endedAt > bounds.endedMillis)) return { _tag: "None" }
        if (message.events === undefined) return { _tag: "Dropped" }
        const replay = Stream.fromIterable([UiChunk.toEvent({ type: "start", messageId: message.messageId }), ...message.events])
        if (message.ending !== undefined) return { _tag: "Replay", events: Stream.concat(replay, Stream.fromIterable(message.ending)) }
        message.listeners.add(queue)
        return { _tag: "Replay", events: Stream.concat(replay, stream(() => message)) }
      })
    )

  return { open, push, end, reattach }
}
