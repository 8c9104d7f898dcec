/**
 * A page of a thread: the newest messages first — a page holds the `limit` messages before a
 * cursor (before the thread's end without one), oldest first within it — and the cursor of the
 * page before it while there are older messages. A cursor names a position in the conversation
 * (a message's index in `ChatMemory`, which only grows) and the conversation it is of, so that a
 * page asked again later holds the same messages, whatever was written since, and a cursor of
 * another conversation is refused. It is opaque to clients: base64url of `<position>:<chat id>`.
 */
import { Result } from "effect"
import { Base64Url } from "effect/encoding"
import { InvalidRequest } from "../ChatApi.js"

/** What a page read is held to: the limit without `limit`, and the largest one taken. */
export interface Bounds {
  readonly limit: number
  readonly maxLimit: number
}

/** A page's request, read: how many messages, and before which position (none: the thread's end). */
export interface Query {
  readonly limit: number
  readonly before: number | undefined
}

const invalid = (message: string) => new InvalidRequest({ message })

/** The cursor of position `at` in conversation `chatId`. */
export const cursor = (chatId: string, at: number): string => Base64Url.encode(`${at}:${chatId}`)

/**
 * The query of a page read (`?before=&limit=`), checked before the request is authorized: a
 * `limit` from 1 to `bounds.maxLimit`, a cursor this endpoint gave for this conversation (`noun`
 * is what the endpoint calls one: `chat`, `thread`). Whether the cursor is inside the conversation is checked
 * once it is read (`page`).
 */
export const query = (
  chatId: string,
  raw: { readonly before?: string | undefined; readonly limit?: string | undefined },
  bounds: Bounds,
  noun: string
): Result.Result<Query, InvalidRequest> => {
  let limit = bounds.limit
  if (raw.limit !== undefined) {
    if (!/^\d{1,9}$/.test(raw.limit) || Number(raw.limit) === 0) {
      return Result.fail(invalid(`limit must be a whole number from 1 to ${bounds.maxLimit} (it is ${JSON.stringify(raw.limit)})`))
    }
    limit = Number(raw.limit)
    if (limit > bounds.maxLimit) {
      return Result.fail(invalid(`limit ${limit} is more than ${bounds.maxLimit}, the most messages a page holds: ask for ${bounds.maxLimit} or fewer, and for the page before with its cursor`))
    }
  }
  if (raw.before === undefined) return Result.succeed({ limit, before: undefined })
  const foreign = invalid(`before must be a cursor this endpoint gave (a page's "before"); ${JSON.stringify(raw.before.slice(0, 80))} is not one`)
  const decoded = Base64Url.decodeString(raw.before)
  if (Result.isFailure(decoded)) return Result.fail(foreign)
  const match = /^(\d{1,15}):(.*)$/s.exec(decoded.success)
  if (match === null) return Result.fail(foreign)
  if (match[2] !== chatId) return Result.fail(invalid(`The cursor is one of ${noun} ${JSON.stringify(match[2])}, not of ${noun} ${JSON.stringify(chatId)}: ask each ${noun}'s pages with its own cursors`))
  return Result.succeed({ limit, before: Number(match[1]) })
}

/** What a page holds: its items, oldest first, and the cursor of the page before it, if any. */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly before: string | undefined
}

/**
 * The page `query` asks of `items` (the thread's, oldest first, at increasing positions), or its
 * refusal: a cursor past the conversation's `end` is not one of this conversation as it is (it was
 * forgotten and begun again since).
 */
export const page = <A extends { readonly at: number }>(
  chatId: string,
  items: ReadonlyArray<A>,
  end: number,
  { before, limit }: Query,
  noun: string
): Result.Result<Page<A>, InvalidRequest> => {
  if (before !== undefined && before > end) {
    return Result.fail(invalid(`The cursor points past the end of ${noun} ${JSON.stringify(chatId)}, which has ${end} messages in its memory: it is a cursor of the conversation before it was forgotten`))
  }
  let stop = items.length
  if (before !== undefined) while (stop > 0 && items[stop - 1]!.at >= before) stop--
  const start = Math.max(0, stop - limit)
  return Result.succeed({ items: items.slice(start, stop), before: start > 0 ? cursor(chatId, items[start]!.at) : undefined })
}
