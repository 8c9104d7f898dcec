/**
 * Reading the JSON providers send: tolerant accessors, and the `invalid-response` for what
 * cannot be read.
 */
import { ChatModel, Mask } from "@agentfx/core"
import { Result } from "effect"
import type * as Sse from "./sse.js"

export type JsonObject = { readonly [key: string]: unknown }

export const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/** The value if it is a string, else `""`. */
export const text = (value: unknown): string => (typeof value === "string" ? value : "")

/** True for a token count (`ChatModel.isTokenCount`): a finite number, not negative. */
export const isCount = ChatModel.isTokenCount

/** The value if it is a token count, else 0: a count that is not one is taken as not sent. */
export const count = (value: unknown): number => (isCount(value) ? value : 0)

export const invalid = (message: string) => new ChatModel.ModelError({ reason: "invalid-response", message })

/** An event's data as JSON; data that is not JSON is an `invalid-response` quoting its start. */
export const parseEvent = (event: Sse.Event, provider: string): Result.Result<unknown, ChatModel.ModelError> =>
  Result.try({
    try: (): unknown => JSON.parse(event.data),
    catch: () => invalid(`${provider} sent a stream event that is not JSON: ${Mask.quote(event.data, 200)}`)
  })

/**
 * Deeper than this, a value is not written out: `JSON.stringify` overflows the stack some
 * thousands of levels down, and a server's JSON (which `JSON.parse` reads to far greater
 * depths) may nest that deep.
 */
export const writableDepth = 512

/** True when `value` nests objects and arrays deeper than `limit`; no recursion, so any depth is measured safely. */
const deeperThan = (value: unknown, limit: number): boolean => {
  const pending: Array<readonly [unknown, number]> = [[value, 0]]
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!
    if (typeof item !== "object" || item === null) continue
    if (depth >= limit) return true
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, depth + 1])
  }
  return false
}

/** `value` as JSON, or `undefined` when it cannot be written: nested deeper than `writableDepth`, or not JSON at all. */
export const writeJson = (value: unknown): string | undefined => {
  if (deeperThan(value, writableDepth)) return undefined
  try {
    return JSON.stringify(value)
  } catch {
    return undefined
  }
}

/** What a message shows of a value that cannot be written as JSON. */
export const unwritable = `(a value nested deeper than ${writableDepth} levels, or not JSON)`

/** The start of `value`'s JSON for a message, at most `length` characters (`Mask.quote`); a marker for a value that cannot be written. */
export const snippet = (value: unknown, length: number): string => {
  const written = writeJson(value)
  return written === undefined ? unwritable : Mask.quote(written, length)
}
