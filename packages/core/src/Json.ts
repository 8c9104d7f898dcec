/**
 * JSON values: what crosses a process boundary (tool arguments, encoded results, checkpoints).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

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
export const JsonValue: Schema.Schema<JsonValue> = Schema.Union(
  Schema.Null,
  Schema.Boolean,
  Schema.Finite,
  Schema.String,
  Schema.Array(Schema.suspend(() => JsonValue)),
  Schema.Record({ key: Schema.String, value: Schema.suspend(() => JsonValue) })
).annotations({ identifier: "JsonValue" })
