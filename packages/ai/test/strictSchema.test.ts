import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { strictForm } from "../src/internal/strictSchema.js"
import { wireSchema } from "../src/internal/toolSchema.js"

/** A schema's JSON Schema as core writes a tool's parameters (definitions as `$defs`), then as every provider is sent it. */
const json = (schema: Schema.Top) => {
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  return wireSchema(Object.keys(document.definitions).length === 0 ? document.schema : { ...document.schema, $defs: document.definitions })
}

const Point = Schema.Struct({ x: Schema.Finite, y: Schema.Finite }).annotate({ identifier: "Point" })

describe("strictForm (OpenAI strict structured outputs)", () => {
  it("takes closed objects with every property required, nested ones, arrays, unions, literals, $defs and documented keywords, as they are", () => {
    const schemas: ReadonlyArray<Schema.Top> = [
      Schema.Struct({ city: Schema.String, celsius: Schema.Finite }),
      Schema.Struct({ place: Schema.Struct({ city: Schema.String }), days: Schema.Array(Schema.Int).check(Schema.isMaxLength(10)) }),
      Schema.Struct({ unit: Schema.Literals([
        "C",
        "F"
      ]), note: Schema.NullOr(Schema.String), id: Schema.String.check(Schema.isUUID()) }),
      Schema.Struct({ from: Point, to: Point }),
      Schema.Struct({ score: Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 })) })
    ]
    expect(schemas.map((schema) => strictForm(json(schema)))).toEqual(schemas.map(json))
  })

  it("makes a property that may be left out required when it takes null (Schema.optional: null is read as left out), also nested", () => {
    const schema = json(Schema.Struct({ city: Schema.String, note: Schema.optional(Schema.String), place: Schema.Struct({ zip: Schema.optional(Schema.String) }) }))
    const nullable = { anyOf: [{ type: "string" }, { type: "null" }] }
    expect(strictForm(schema)).toEqual({
      type: "object",
      properties: {
        city: { type: "string" },
        note: nullable,
        place: { type: "object", properties: { zip: nullable }, required: ["zip"], additionalProperties: false }
      },
      required: ["city", "note", "place"],
      additionalProperties: false
    })
  })

  it("refuses properties that may be left out but not be null (also nested), open records, keywords strict mode does not document, and schemas of anything", () => {
    const schemas: ReadonlyArray<Schema.Top> = [
      Schema.Struct({ city: Schema.String, note: Schema.optionalKey(Schema.String) }),
      Schema.Struct({ place: Schema.Struct({ city: Schema.optionalKey(Schema.String) }) }),
      Schema.Struct({ tags: Schema.Record(Schema.String, Schema.String) }),
      Schema.Struct({ name: Schema.NonEmptyString }),
      Schema.Struct({ pair: Schema.Tuple([Schema.String, Schema.Finite]) }),
      Schema.Struct({ anything: Schema.Unknown })
    ]
    expect(schemas.map((schema) => strictForm(json(schema)))).toEqual([undefined, undefined, undefined, undefined, undefined, undefined])
    expect(strictForm({ type: "object", properties: { at: { type: "string", format: "uri" } }, required: ["at"], additionalProperties: false }))
      .toBeUndefined()
    expect(strictForm({ type: "object", properties: {}, required: [] })).toBeUndefined()
    expect(strictForm({ anyOf: [{ type: "object", properties: {}, required: [], additionalProperties: false }] })).toBeUndefined()
  })
})

describe("wireSchema (what every provider is sent)", () => {
  it("leaves out the $schema key and the safe-integer bounds Effect writes on every Int; bounds the schema sets stay", () => {
    const schema = Schema.Struct({
      count: Schema.Int,
      page: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
      sizes: Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 })))
    })
    const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
    expect(wireSchema({ $schema: "https://json-schema.org/draft/2020-12/schema", ...document.schema })).toEqual({
      type: "object",
      properties: {
        count: { type: "integer" },
        page: { type: "integer", minimum: 1 },
        sizes: { type: "array", items: { type: "integer", minimum: 1, maximum: 5 } }
      },
      required: ["count", "page", "sizes"],
      additionalProperties: false
    })
  })
})
