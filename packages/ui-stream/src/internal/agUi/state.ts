/**
 * The agent's state on the AG-UI wire: its slots, each encoded with its slot's schema (as a
 * checkpoint holds them), as `STATE_SNAPSHOT`'s document; and what changed between two such
 * documents, as the JSON Patch (RFC 6902) of `STATE_DELTA` — an item appended to a list is an
 * `add` at its end (`/notes/-`), a changed key a `replace`, an object's keys added and removed.
 */
import type { Agent, Json } from "@agentfx/core"
import { Result, Schema } from "effect"
import type { PatchOperation } from "../../AgUiEvent.js"

export type State = { readonly [slot: string]: Json.JsonValue }

/** The agent's slots in `state` as JSON; `undefined` for an agent without slots (the client's state is left as it is). */
export const encode = (agent: Agent.Any, state: { readonly [slot: string]: unknown }): State | undefined => {
  const names = Object.keys(agent.slots)
  if (names.length === 0) return undefined
  const encoded: Record<string, Json.JsonValue> = {}
  for (const name of names) {
    const value = Schema.encodeUnknownResult(agent.slots[name]!.schema)(state[name])
    // a value its schema cannot encode could not have been checkpointed either: the run has failed on it
    if (Result.isSuccess(value)) encoded[name] = value.success as Json.JsonValue
  }
  return encoded
}

/** The state a run starts from: each slot's initial value. */
export const initial = (agent: Agent.Any): State | undefined =>
  encode(agent, Object.fromEntries(Object.keys(agent.slots).map((name) => [name, agent.slots[name]!.initial])))

const isObject = (value: Json.JsonValue): value is { readonly [key: string]: Json.JsonValue } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const equal = (a: Json.JsonValue, b: Json.JsonValue): boolean => {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => equal(item, b[i]!))
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((key) => key in b && equal(a[key]!, b[key]!))
  }
  return false
}

/** A key as a JSON Pointer token (RFC 6901): `~` as `~0`, `/` as `~1`. */
const token = (key: string) => key.replaceAll("~", "~0").replaceAll("/", "~1")

/** The operations that turn `from` into `to`, at `path`. */
export const diff = (from: Json.JsonValue, to: Json.JsonValue, path = ""): Array<PatchOperation> => {
  if (equal(from, to)) return []
  if (isObject(from) && isObject(to)) {
    const operations: Array<PatchOperation> = []
    for (const key of Object.keys(from)) if (!(key in to)) operations.push({ op: "remove", path: `${path}/${token(key)}` })
    for (const [key, value] of Object.entries(to)) {
      operations.push(...(key in from ? diff(from[key]!, value, `${path}/${token(key)}`) : [{ op: "add" as const, path: `${path}/${token(key)}`, value }]))
    }
    return operations
  }
  if (Array.isArray(from) && Array.isArray(to) && to.length > from.length && from.every((item, i) => equal(item, to[i]!))) {
    return to.slice(from.length).map((value) => ({ op: "add", path: `${path}/-`, value }))
  }
  return [{ op: "replace", path, value: to }]
}
