/**
 * The page's JSON Schema check (static/check.js: @cfworker/json-schema, its output in words)
 * against the schemas `Tool.parametersJsonSchema` writes: it accepts every value the tool's
 * Schema accepts (generated), agrees with the Schema on values it refuses, and names each
 * problem with its path.
 */
import { Tool } from "@agentfx/core"
import { describe as group, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Result, Schema } from "effect"
import { check } from "../static/check.js"

const jsonSchemaOf = (parameters: Schema.Codec<any, any>) =>
  Tool.parametersJsonSchema(Tool.make("t", { description: "", parameters, success: Schema.Void, handler: () => Effect.void }) as Tool.Any)

interface Item {
  readonly name: string
  readonly children: ReadonlyArray<Item>
}
const Item: Schema.Codec<Item> = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1)),
  children: Schema.Array(Schema.suspend((): Schema.Codec<Item> => Item))
}).annotate({ identifier: "Item" })

const schemas = {
  transfer: Schema.Struct({
    to: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(20)),
    amount: Schema.Finite.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(10_000)),
    memo: Schema.optional(Schema.String)
  }),
  kinds: Schema.Struct({
    count: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10 })),
    mode: Schema.Literals(["fast", "slow"]),
    flag: Schema.Boolean,
    note: Schema.NullOr(Schema.String),
    tags: Schema.Array(Schema.String.check(Schema.isPattern(/^[a-z]+$/u))).check(Schema.isMaxLength(3)),
    pair: Schema.Tuple([Schema.String, Schema.Finite]),
    step: Schema.Finite.check(Schema.isMultipleOf(5))
  }),
  union: Schema.Struct({
    target: Schema.Union([Schema.Struct({ kind: Schema.Literal("email"), address: Schema.String }), Schema.Struct({ kind: Schema.Literal("sms"), phone: Schema.String.check(Schema.isPattern(/^\+\d+$/u)) })])
  }),
  record: Schema.Struct({ limits: Schema.Record(Schema.String, Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))) }),
  recursive: Schema.Struct({ root: Item })
}

group("check (static/check.js)", () => {
  it("accepts every value the tools' Schemas accept (generated)", () => {
    const accepts = <A, I>(schema: Schema.Codec<A, I>) => {
      const json = jsonSchemaOf(schema)
      const encode = Schema.encodeSync(schema)
      const result = Effect.runSync(Arbitrary.checkEffect(
        Arbitrary.schema(schema),
        (value) => check(json, JSON.parse(JSON.stringify(encode(value)))).length === 0,
        { runs: 200, seed: 17 }
      ))
      expect(Arbitrary.formatCheckFailure(result)).toBeUndefined()
    }
    accepts(schemas.transfer)
    accepts(schemas.kinds)
    accepts(schemas.union)
    accepts(schemas.record)
    accepts(schemas.recursive)
  })

  it("refuses what the Schemas refuse, naming each problem and its path", () => {
    const cases: Array<[keyof typeof schemas, unknown, Array<string>]> = [
      ["transfer", { to: "Ada", amount: -5 }, ["amount: must be greater than 0"]],
      ["transfer", { to: "", amount: 20_000 }, ["to: must be at least 1 character long", "amount: must be at most 10000"]],
      ["transfer", { to: "Ada Lovelace, Countess", amount: 1 }, ["to: must be at most 20 characters long"]],
      ["transfer", { amount: "lots" }, ["(arguments): missing required property \"to\"", "amount: expected a number, got \"lots\""]],
      ["transfer", { to: "Ada", amount: 1, cc: "Bob" }, ["cc: unexpected property"]],
      ["transfer", [1, 2], ["(arguments): expected an object, got an array"]],
      ["kinds", { count: 2.5, mode: "medium", flag: "yes", note: 3, tags: ["ok", "NO", "x", "y"], pair: ["a"], step: 7 }, [
        "count: expected an integer, got 2.5",
        "mode: expected one of \"fast\", \"slow\", got \"medium\"",
        "flag: expected a boolean, got \"yes\"",
        "note: expected a string or null, got 3",
        "tags: must have at most 3 items",
        "tags[1]: must match the pattern ^[a-z]+$",
        "pair: must have at least 2 items"
      ]],
      ["kinds", { count: 11, mode: "fast", flag: true, note: null, tags: [], pair: ["a", 1, 2], step: 10 }, [
        "count: must be at most 10",
        "pair: must have at most 2 items"
      ]],
      ["union", { target: { kind: "sms", phone: "0800" } }, ["target.phone: must match the pattern ^\\+\\d+$"]],
      ["record", { limits: { daily: -1, weekly: 5 } }, ["limits.daily: must be at least 0"]],
      ["recursive", { root: { name: "a", children: [{ name: "", children: [] }] } }, ["root.children[0].name: must be at least 1 character long"]]
    ]
    expect(cases.map(([name, value]) => check(jsonSchemaOf(schemas[name]), value))).toEqual(cases.map((c) => c[2]))
    // and the Schemas refuse every one of them
    for (const [name, value] of cases) {
      const schema: Schema.Codec<unknown, unknown> = schemas[name] as any
      expect(Result.isFailure(Schema.decodeUnknownResult(schema, { onExcessProperty: "error" })(value))).toBe(true)
    }
  })

  it("a schema the browser cannot use (a pattern `\\-` under the u flag) checks nothing: the server checks anyway", () => {
    // a hand-written schema (an MCP server's, say): Tool.parametersJsonSchema writes patterns JavaScript compiles
    const schema = {
      type: "object",
      properties: { code: { type: "string", pattern: "^\\-?[0-9]+$" }, n: { type: "number" } },
      additionalProperties: false
    }
    expect(() => new RegExp("^\\-?[0-9]+$", "u")).toThrow(SyntaxError)
    expect(check(schema, { code: "a b", n: "two", extra: 1 })).toEqual([])
    expect(check({ ...schema, properties: { n: { type: "number" } } }, { n: "two" })).toEqual(["n: expected a number, got \"two\""])
  })

  it("where the tool's Schema takes what JSON Schema's rules refuse, the page does not refuse it: a length in UTF-16 units, multipleOf", () => {
    // a multiple of 3 as a float remainder, not as the decimal JSON Schema reads; "😀" is 2 UTF-16 units, 1 code point
    const schema = Schema.Struct({ s: Schema.String.check(Schema.isMinLength(2)), step: Schema.Finite.check(Schema.isMultipleOf(3)) })
    const accepted = { s: "😀", step: 4.88137e22 }
    expect(Result.isSuccess(Schema.decodeUnknownResult(schema)(accepted))).toBe(true)
    expect(check(jsonSchemaOf(schema), accepted)).toEqual([])
    // a minimum length in UTF-16 units, as a hand-written schema (an MCP server's) may have it; Effect 4 writes one in code points
    const written = { type: "object", properties: { s: { type: "string", minLength: 2 }, step: { type: "number", multipleOf: 3 } } }
    expect(check(written, accepted)).toEqual([])
    // a value both refuse: the length is the page's to say; the multiple, the server's
    expect(check(written, { s: "a", step: 7 })).toEqual(["s: must be at least 2 characters long"])
  })

  it("an alternative that failed alike, or on its type only: said once; a draft-2020 schema's tuple (prefixItems), and Effect 4's with a rest", () => {
    const union = {
      anyOf: [
        { type: "object", required: ["kind", "address"], properties: { kind: { enum: ["email"] }, address: { type: "string" } }, additionalProperties: false },
        { type: "object", required: ["kind", "phone"], properties: { kind: { enum: ["sms"] }, phone: { type: "string" } }, additionalProperties: false }
      ]
    }
    expect(check(union, { kind: "fax" })).toEqual(["(arguments): matches none of its 2 alternatives"])
    expect(check({ type: "object", properties: { at: { anyOf: [{ type: "string" }, { type: "integer" }] } } }, { at: 1.5 })).toEqual([
      "at: expected a string or an integer, got 1.5"
    ])
    const tuple = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false }
    expect(check(tuple, ["a", "b", 3])).toEqual(["[1]: expected a number, got \"b\"", "[2]: unexpected item"])
    // Effect 4 writes a tool's parameters in draft 2020-12, without `$schema`: a tuple with a rest
    // is `prefixItems` then `items` for what follows, and the page reads it so
    const withRest = jsonSchemaOf(Schema.Struct({ rest: Schema.TupleWithRest(Schema.Tuple([Schema.String]), [Schema.Finite]) }))
    expect(withRest.$schema).toBeUndefined()
    expect(check(withRest, { rest: ["a", 1, 2] })).toEqual([])
    expect(check(withRest, { rest: ["a", "b"] })).toEqual(["rest[1]: expected a number, got \"b\""])
  })
})
