import { describe, expect, it } from "@effect/vitest"
import { JsonSchema, Schema } from "effect"
import { strictAllowed } from "../src/internal/strictSchema.js"

const json = (schema: Schema.Schema.AnyNoContext) => {
  const { $schema: _, ...rest } = JsonSchema.make(schema)
  return rest
}

const Point = Schema.Struct({ x: Schema.Number, y: Schema.Number }).annotate({ identifier: "Point" })

describe("strictAllowed (OpenAI strict structured outputs)", () => {
  it("takes closed objects with every property required, nested ones, arrays, unions, literals, $defs and documented keywords", () => {
    const schemas: ReadonlyArray<Schema.Schema.AnyNoContext> = [
      Schema.Struct({ city: Schema.String, celsius: Schema.Number }),
      Schema.Struct({ place: Schema.Struct({ city: Schema.String }), days: Schema.Array(Schema.Int).pipe(Schema.maxItems(10)) }),
      Schema.Struct({ unit: Schema.Literals(["C", "F"]), note: Schema.NullOr(Schema.String), id: Schema.UUID }),
      Schema.Struct({ from: Point, to: Point }),
      Schema.Struct({ score: Schema.Number.pipe(Schema.between(0, 1)) })
    ]
    expect(schemas.map((schema) => strictAllowed(json(schema)))).toEqual([true, true, true, true, true])
  })

  it("refuses optional properties (also nested), open records, keywords strict mode does not document, and schemas of anything", () => {
    const schemas: ReadonlyArray<Schema.Schema.AnyNoContext> = [
      Schema.Struct({ city: Schema.String, note: Schema.optional(Schema.String) }),
      Schema.Struct({ place: Schema.Struct({ city: Schema.optional(Schema.String) }) }),
      Schema.Struct({ tags: Schema.Record(Schema.String, Schema.String) }),
      Schema.Struct({ name: Schema.NonEmptyString }),
      Schema.Struct({ pair: Schema.Tuple([Schema.String, Schema.Number]) }),
      Schema.Struct({ anything: Schema.Unknown })
    ]
    expect(schemas.map((schema) => strictAllowed(json(schema)))).toEqual([false, false, false, false, false, false])
    expect(strictAllowed({ type: "object", properties: { at: { type: "string", format: "uri" } }, required: ["at"], additionalProperties: false }))
      .toBe(false)
    expect(strictAllowed({ type: "object", properties: {}, required: [] })).toBe(false)
  })
})
