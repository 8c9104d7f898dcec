/**
 * Tool parameter and answer JSON Schemas as providers are sent them (docs/decisions/135). Core
 * writes them with Effect 4's `Schema.toJsonSchemaDocument` (draft 2020-12, definitions as
 * `$defs` at the root); what every provider gets is that, tidied here.
 */
import type { JsonSchema } from "effect"
import { isObject, type JsonObject } from "./wireJson.js"

/** Keywords whose value is one subschema. */
const oneSchema = [
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else"
]

/** Keywords whose value is an array of subschemas. */
const schemaArrays = ["anyOf", "oneOf", "allOf", "prefixItems"]

/** Keywords whose value maps names to subschemas. */
const schemaMaps = ["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"]

/**
 * `f` applied to every subschema of `node` (bottom-up), then to `node`: values of other keywords
 * (`enum`, `const`, `default`, …) are data, left as they are.
 */
const mapSchema = (node: JsonObject, f: (node: JsonObject) => JsonObject): JsonObject => {
  const mapped: { [key: string]: unknown } = { ...node }
  for (const key of oneSchema) if (isObject(node[key])) mapped[key] = mapSchema(node[key], f)
  for (const key of schemaArrays) {
    const value = node[key]
    if (Array.isArray(value)) mapped[key] = value.map((item) => (isObject(item) ? mapSchema(item, f) : item))
  }
  for (const key of schemaMaps) {
    const value = node[key]
    if (isObject(value)) {
      mapped[key] = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, isObject(item) ? mapSchema(item, f) : item]))
    }
  }
  return f(mapped)
}

/** The bounds Effect writes on every `Schema.Int`: the range of integers a JSON number holds exactly. */
const safeBounds: { readonly [keyword: string]: number } = { minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }

/** An integer without the bounds that only say it is a safe integer (a bound the schema itself set stays). */
const withoutSafeBounds = (node: JsonObject): JsonObject => {
  if (node.type !== "integer") return node
  const kept: { [key: string]: unknown } = {}
  for (const [key, value] of Object.entries(node)) if (safeBounds[key] !== value) kept[key] = value
  return kept
}

/**
 * The JSON Schema every provider is sent: without a `$schema` key (a draft marker providers do
 * not need and strict validators may refuse), without Effect's ±(2^53 − 1) bounds on integers
 * (they tell a model nothing, and a server that compiles the schema into a grammar, as
 * llama.cpp does, builds digit-range rules from them); `$defs` and `$ref`s stay, relative to
 * this root.
 */
export const wireSchema = (schema: JsonSchema.JsonSchema): JsonObject => {
  const { $schema: _draft, ...rest } = schema
  return mapSchema(rest, withoutSafeBounds)
}
