import type * as JsonSchema from "effect/JsonSchema"
import * as Schema from "effect/Schema"

/**
 * Effect's JSON Schema (draft 2020-12) of `schema`'s JSON form (`Schema.toCodecJson`, what a
 * model's JSON is decoded with), objects closed, its definitions inlined as `$defs` (decision 121).
 */
export const jsonSchemaOf = (schema: Schema.Top): JsonSchema.JsonSchema => {
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  return Object.keys(document.definitions).length === 0 ? document.schema : { ...document.schema, $defs: document.definitions }
}
