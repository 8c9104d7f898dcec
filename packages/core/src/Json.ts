/**
 * JSON values: what crosses a process boundary (tool arguments, encoded results, checkpoints).
 *
 * @since 0.1.0
 */
import type * as AST from "effect/SchemaAST"
import * as Either from "effect/Result"
import * as ParseResult from "effect/SchemaIssue"
import * as Schema from "effect/Schema"

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
 * import type { AST } from "effect/SchemaAST"
import * as Either from "effect/Result"
import * as ParseResult from "effect/SchemaIssue"
import * as Schema from "effect/Schema"
 * import { Json } from "@agentfx/core"
 *
 * Schema.is(Json.JsonValue)({ city: "Oslo", days: [1, 2] }) // true
 * Schema.is(Json.JsonValue)({ n: NaN }) // false
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const JsonValue: Schema.Schema<JsonValue> = Schema.declare(
  [],
  {
    decode: () => (input, _, ast) => checked(input, ast),
    encode: () => (input, _, ast) => checked(input, ast)
  },
  {
    identifier: "JsonValue",
    description: "a JSON value",
    // what the recursive union this replaced generated: tool parameters' JSON Schema is unchanged
    jsonSchema: {
      anyOf: [
        { type: "null" },
        { type: "boolean" },
        { type: "number", description: "a finite number" },
        { type: "string" },
        { type: "array", items: { $ref: "#/$defs/JsonValue" } },
        { type: "object", required: [], properties: {}, additionalProperties: { $ref: "#/$defs/JsonValue" } }
      ]
    },
    arbitrary: () => (fc) => fc.jsonValue() as never
  }
)

/**
 * `input` as a JSON value, or what is not JSON in it, with its path. Iterative: a value nested
 * a hundred thousand levels deep (a hostile body) is checked without exhausting the stack.
 */
const checked = (input: unknown, ast: AST.AST): Result.Result<JsonValue, ParseResult.ParseIssue> => {
  const pending: Array<readonly [value: unknown, path: string]> = [[input, ""]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, path] = next
    const problem = notJson(value)
    if (problem !== undefined) {
      return Result.fail(new ParseResult.Type(ast, input, path === "" ? `Expected a JSON value, got ${problem}` : `${path.slice(1)}: expected a JSON value, got ${problem}`))
    }
    // children pushed last first: the first problem in document order is the one reported
    if (Array.isArray(value)) for (let i = value.length - 1; i >= 0; i--) pending.push([value[i], `${path}.${i}`])
    else if (typeof value === "object" && value !== null) {
      const keys = Object.keys(value)
      for (let i = keys.length - 1; i >= 0; i--) pending.push([(value as Record<string, unknown>)[keys[i]!], `${path}.${keys[i]}`])
    }
  }
  return Result.succeed(input as JsonValue)
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
