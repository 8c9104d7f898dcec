/**
 * Per-call decisions on the wire: an object keyed by call id, decoded into a `ReadonlyMap`.
 * Effect's `Schema.Record` builds its output by assignment, which drops a `"__proto__"` key
 * (it sets the prototype); here every own key of the input is read, and written back with
 * `Object.defineProperty`, so any string is a call id.
 */
import * as Either from "effect/Result"
import * as ParseResult from "effect/SchemaIssue"
import * as Schema from "effect/Schema"

const isRecord = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const RecordOfUnknown = Schema.declare(isRecord, { identifier: "Record", description: "an object keyed by call id" })

/** An object of `value`s keyed by any string, as a `ReadonlyMap`. */
export const CallDecisionsFromRecord = <A, I>(value: Schema.Schema<A, I>) => {
  const decodeValue = ParseResult.decodeUnknownEither(value)
  const encodeValue = ParseResult.encodeEither(value)
  return Schema.transformOrFail(RecordOfUnknown, Schema.ReadonlyMapFromSelf({ key: Schema.String, value: Schema.toType(value) }), {
    strict: true,
    decode: (record, _, ast) => {
      const entries: Array<[string, A]> = []
      const issues: Array<ParseResult.Pointer> = []
      for (const key of Object.keys(record)) {
        const decoded = decodeValue(record[key])
        if (Result.isFailure(decoded)) issues.push(new ParseResult.Pointer(key, record, decoded.left))
        else entries.push([key, decoded.right])
      }
      return issues.length > 0
        ? ParseResult.fail(new ParseResult.Composite(ast, record, issues as [ParseResult.Pointer, ...Array<ParseResult.Pointer>]))
        : ParseResult.succeed(new Map(entries))
    },
    encode: (map) => {
      const record: { [key: string]: unknown } = {}
      for (const [key, decision] of map) {
        const encoded = encodeValue(decision)
        if (Result.isFailure(encoded)) return ParseResult.fail(new ParseResult.Pointer(key, map, encoded.left))
        Object.defineProperty(record, key, { value: encoded.right, enumerable: true, writable: true, configurable: true })
      }
      return ParseResult.succeed(record)
    }
  })
}
