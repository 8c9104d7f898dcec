/**
 * A schema's JSON form: what a model is told to send (its JSON Schema) and how what it sends is
 * decoded (decision 121).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as JsonSchema from "effect/JsonSchema"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { settledExit } from "./settledExit.js"

/** An object without properties: Effect's JSON Schema of `Schema.Struct({})` is "not null", and providers require an object. */
const emptyObject: JsonSchema.JsonSchema = { type: "object", properties: {}, required: [], additionalProperties: false }

const isEmptyStruct = (ast: SchemaAST.AST): boolean =>
  SchemaAST.isObjects(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0

/** How Effect's JSON form writes a number that JSON cannot: one branch of a `Schema.Number`'s `anyOf`. */
const isNonFiniteStrings = (node: unknown): boolean =>
  typeof node === "object" && node !== null && (node as JsonSchema.JsonSchema).type === "string" &&
  JSON.stringify((node as JsonSchema.JsonSchema).enum) === `["Infinity","-Infinity","NaN"]`

/**
 * `node` without the `"NaN"`/`"Infinity"` strings Effect's JSON form admits for a number: a
 * model is told to send a number, as it was on Effect 3 (decoding still takes them).
 */
const withoutNonFinite = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(withoutNonFinite)
  if (typeof node !== "object" || node === null) return node
  const out: { [key: string]: unknown } = {}
  for (const [key, value] of Object.entries(node)) out[key] = withoutNonFinite(value)
  const anyOf = out.anyOf
  if (Array.isArray(anyOf) && anyOf.some(isNonFiniteStrings)) {
    const kept = anyOf.filter((branch) => !isNonFiniteStrings(branch))
    if (kept.length === 1 && typeof kept[0] === "object" && kept[0] !== null) {
      const { anyOf: _, ...rest } = out
      return { ...kept[0], ...rest }
    }
    out.anyOf = kept
  }
  return out
}

/**
 * Effect's JSON Schema (draft 2020-12) of `schema`'s JSON form, objects closed, numbers as
 * numbers, its definitions inlined as `$defs`; an empty struct is an object with no properties.
 */
export const jsonSchemaOf = (schema: Schema.Top): JsonSchema.JsonSchema => {
  if (isEmptyStruct(SchemaAST.toEncoded(schema.ast))) return emptyObject
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  const root = withoutNonFinite(document.schema) as JsonSchema.JsonSchema
  return Object.keys(document.definitions).length === 0 ? root : { ...root, $defs: withoutNonFinite(document.definitions) }
}

/**
 * A decoder of what a model sent (parsed JSON) with `schema`: as the schema's encoded side reads
 * it, else as its JSON form does (a `null` for a `Schema.optional` field, a date as its ISO
 * string). When both refuse, the encoded side's error is the one told: it names what was
 * expected of the value sent ("Expected number, got \"cold\""), where the JSON form's names the
 * strings it also takes.
 */
export const decodeJson = <A, R>(schema: Schema.Codec<A, unknown, R, unknown>, options: SchemaAST.ParseOptions) => {
  const plain = Schema.decodeUnknownEffect(schema, options)
  // what decodes is read with the first-problem options: a struct then takes Effect's fast path, where
  // `errors: "all"` runs a generator per value (issue 34: ~80 ns and ~0.9 KB per call); what does not is
  // decoded again as asked, so that every problem is told
  let quick = options.errors === "all" ? Schema.decodeUnknownEffect(schema, { ...options, errors: "first" }) : undefined
  const codec = Schema.toCodecJson(schema)
  const json = Schema.decodeUnknownEffect(codec, options)
  const jsonNow = Schema.decodeUnknownResult(codec as unknown as Schema.Codec<A, unknown>, options)
  return (input: unknown): Effect.Effect<A, Schema.SchemaError, R> => {
    if (quick !== undefined) {
      const tried = quick(input)
      const triedNow = settledExit(tried)
      if (triedNow !== undefined && Exit.isSuccess(triedNow)) return tried
      // an asynchronous schema is decoded once, as asked
      if (triedNow === undefined) quick = undefined
    }
    const first = plain(input)
    const now = settledExit(first)
    if (now === undefined) return Effect.catch(first, (error) => Effect.catch(json(input), () => Effect.fail(error)))
    if (Exit.isSuccess(now)) return first
    // a schema that decodes at once has a JSON form that does too: read it at once, the result stays settled
    const second = jsonNow(input)
    return Result.isSuccess(second) ? Exit.succeed(second.success) : first
  }
}
