/**
 * Shared by every project's tests (`test.setupFiles`). An Effect 4 tagged error keeps its
 * `message` out of its enumerable fields, so `toEqual` of two errors (or of values holding them)
 * ignored their messages: two `ToolError`s with different messages were equal, and a test that
 * pinned a message that way pinned nothing. Here two such objects with different messages differ.
 */
import { expect } from "vitest"

const messageOf = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null || !("_tag" in value)) return undefined
  const descriptor = Object.getOwnPropertyDescriptor(value, "message") ?? Object.getOwnPropertyDescriptor(Object.getPrototypeOf(value) ?? {}, "message")
  if (descriptor === undefined || descriptor.enumerable === true) return undefined
  const message = (value as { readonly message?: unknown }).message
  return typeof message === "string" ? message : undefined
}

expect.addEqualityTesters([
  (a: unknown, b: unknown) => {
    const left = messageOf(a)
    const right = messageOf(b)
    return left !== undefined && right !== undefined && left !== right ? false : undefined
  }
])
