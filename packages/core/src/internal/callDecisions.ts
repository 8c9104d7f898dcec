/**
 * Per-call decisions on the wire: an object keyed by call id, decoded into a `ReadonlyMap`.
 * Effect's `Schema.Record` builds its output by assignment, which drops a `"__proto__"` key
 * (it sets the prototype); here every own key of the input is read, and written back with
 * `Object.defineProperty`, so any string is a call id.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"

const isRecord = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

// as JSON, the record is itself (its values are encoded decisions): cluster runners send it in binary messages
const RecordOfUnknown = Schema.declare(isRecord, { identifier: "Record", description: "an object keyed by call id", toCodecJson: () => undefined })

/** An object of `value`s keyed by any string, as a `ReadonlyMap`. */
export const CallDecisionsFromRecord = <A, I>(value: Schema.Codec<A, I>) => {
  const decodeValue = Schema.decodeUnknownResult(value, { reportInput: true })
  const encodeValue = Schema.encodeResult(value, { reportInput: true })
  return RecordOfUnknown.pipe(Schema.decodeTo(Schema.ReadonlyMap(Schema.String, Schema.toType(value)), {
    decode: SchemaGetter.transformEffect((record: { readonly [key: string]: unknown }) => {
      const entries: Array<[string, A]> = []
      const issues: Array<SchemaIssue.Issue> = []
      for (const key of Object.keys(record)) {
        const decoded = decodeValue(record[key])
        if (Result.isFailure(decoded)) issues.push(new SchemaIssue.Pointer([key], decoded.failure.issue))
        else entries.push([key, decoded.success])
      }
      return issues.length > 0
        ? Effect.fail(new SchemaIssue.Composite(RecordOfUnknown.ast, issues as [SchemaIssue.Issue, ...Array<SchemaIssue.Issue>], record))
        : Effect.succeed(new Map(entries) as ReadonlyMap<string, A>)
    }),
    encode: SchemaGetter.transformEffect((map: ReadonlyMap<string, A>) => {
      const record: { [key: string]: unknown } = {}
      for (const [key, decision] of map) {
        const encoded = encodeValue(decision)
        if (Result.isFailure(encoded)) return Effect.fail(new SchemaIssue.Pointer([key], encoded.failure.issue))
        Object.defineProperty(record, key, { value: encoded.success, enumerable: true, writable: true, configurable: true })
      }
      return Effect.succeed(record as { readonly [key: string]: unknown })
    })
  }))
}
