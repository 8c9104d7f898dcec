/**
 * JSON values: what crosses a process boundary (tool arguments, encoded results, checkpoints).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

/**
 * A JSON value.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<JsonValue>
  | { readonly [key: string]: JsonValue }

/**
 * Schema of a JSON value. Rejects what JSON cannot carry (`NaN`, `undefined`, functions,
 * bigints, class instances other than plain objects and arrays).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Json } from "@agentfx/core"
 *
 * Schema.is(Json.JsonValue)({ city: "Oslo", days: [1, 2] }) // true
 * Schema.is(Json.JsonValue)({ n: NaN }) // false
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const JsonValue: Schema.Codec<JsonValue> = Schema.declareConstructor<JsonValue>()(
  [],
  () => (input) => {
    const issue = issueIn(input)
    return issue === undefined ? Effect.succeed(input as JsonValue) : Effect.fail(issue)
  },
  // as JSON, the value is itself: what Effect's own `Schema.Json` says (cluster runners send it in binary messages)
  { description: "a JSON value", toCodecJson: () => undefined }
)

/** A value waiting to be checked: its parent's entry and its key there, its path built only if it is not JSON. */
interface Pending {
  readonly value: unknown
  readonly parent: Pending | undefined
  readonly key: string | number
}

const pathOf = (entry: Pending): Array<string | number> => {
  const path: Array<string | number> = []
  for (let at: Pending | undefined = entry; at?.parent !== undefined; at = at.parent) path.push(at.key)
  return path.reverse()
}

/**
 * What is not JSON in `input`, at its path, or `undefined`. Iterative, and linear in the size of
 * the value: a value nested a hundred thousand levels deep (a hostile body) is checked without
 * exhausting the stack, and without copying a path per level.
 */
const issueIn = (input: unknown): SchemaIssue.Issue | undefined => {
  const pending: Array<Pending> = [{ value: input, parent: undefined, key: "" }]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value } = next
    const problem = notJson(value)
    if (problem !== undefined) {
      return next.parent === undefined
        ? new SchemaIssue.InvalidValue({ message: `Expected a JSON value, got ${problem}` }, input)
        : new SchemaIssue.Pointer(pathOf(next), new SchemaIssue.InvalidValue({ message: `expected a JSON value, got ${problem}` }, value))
    }
    // children pushed last first: the first problem in document order is the one reported
    if (Array.isArray(value)) for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], parent: next, key: i })
    else if (typeof value === "object" && value !== null) {
      const keys = Object.keys(value)
      for (let i = keys.length - 1; i >= 0; i--) pending.push({ value: (value as Record<string, unknown>)[keys[i]!], parent: next, key: keys[i]! })
    }
  }
  return undefined
}

/** What makes one value (not its children) something JSON cannot carry. */
const notJson = (value: unknown): string | undefined => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined
    case "number":
      return Number.isFinite(value) ? undefined : String(value)
    case "object": {
      if (value === null || Array.isArray(value)) return undefined
      const proto = Object.getPrototypeOf(value)
      return proto === Object.prototype || proto === null ? undefined : `an instance of ${proto?.constructor?.name ?? "a class"}`
    }
    default:
      return typeof value
  }
}
