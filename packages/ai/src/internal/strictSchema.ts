/**
 * OpenAI's strict mode (structured outputs, strict function calling; docs/decisions/061 and
 * 135): a JSON Schema in the form strict mode takes, or none when it cannot be put in that form.
 * Strict mode wants every object closed (`additionalProperties: false`) with every property
 * required, the root an object, and only the keywords it documents. A schema outside that
 * subset is sent with `strict: false` (the model is steered, not constrained; the loop still
 * checks what it sends).
 */
import { isObject, type JsonObject } from "./wireJson.js"

const keywords = new Set([
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "const",
  "anyOf",
  "$ref",
  "$defs",
  "description",
  "title",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems"
])

const formats = new Set(["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"])

/**
 * Whether a property's schema takes `null`: Effect writes `Schema.optional(X)` as
 * `anyOf: [X, { type: "null" }]`, and its JSON codec reads `null` as the property left out.
 */
const takesNull = (node: unknown): boolean =>
  isObject(node) && (
    node.type === "null" ||
    (Array.isArray(node.type) && node.type.includes("null")) ||
    ("const" in node && node.const === null) ||
    (Array.isArray(node.enum) && node.enum.includes(null)) ||
    (Array.isArray(node.anyOf) && node.anyOf.some(takesNull))
  )

/** The strict form of one schema, or `undefined` when it has none. */
const strictNode = (node: unknown): JsonObject | undefined => {
  if (!isObject(node)) return undefined
  if (!("type" in node || "anyOf" in node || "$ref" in node || "enum" in node || "const" in node)) return undefined
  for (const key of Object.keys(node)) if (!keywords.has(key)) return undefined
  if ("format" in node && !(typeof node.format === "string" && formats.has(node.format))) return undefined
  const strict: { [key: string]: unknown } = { ...node }
  if ("properties" in node || node.type === "object") {
    if (node.additionalProperties !== false) return undefined
    const properties: JsonObject = isObject(node.properties) ? node.properties : {}
    const required = Array.isArray(node.required) ? node.required : []
    const strictProperties: { [name: string]: unknown } = {}
    for (const [name, property] of Object.entries(properties)) {
      // a property that may be left out can be required only when it takes null: null is "left out"
      if (!required.includes(name) && !takesNull(property)) return undefined
      const strictProperty = strictNode(property)
      if (strictProperty === undefined) return undefined
      strictProperties[name] = strictProperty
    }
    strict.properties = strictProperties
    strict.required = Object.keys(strictProperties)
  }
  if ("items" in node) {
    const items = strictNode(node.items)
    if (items === undefined) return undefined
    strict.items = items
  }
  if ("anyOf" in node) {
    if (!Array.isArray(node.anyOf)) return undefined
    const branches = node.anyOf.map(strictNode)
    if (branches.some((branch) => branch === undefined)) return undefined
    strict.anyOf = branches
  }
  if ("$defs" in node) {
    if (!isObject(node.$defs)) return undefined
    const definitions: { [name: string]: unknown } = {}
    for (const [name, definition] of Object.entries(node.$defs)) {
      const strictDefinition = strictNode(definition)
      if (strictDefinition === undefined) return undefined
      definitions[name] = strictDefinition
    }
    strict.$defs = definitions
  }
  return strict
}

/**
 * `schema` (a tool's parameters or an answer's schema, as `wireSchema` sends it) in the form
 * OpenAI's strict mode takes: every property required — a property that may be left out is
 * required when it takes `null`, which Effect's JSON codec reads as left out —, or `undefined`
 * when strict mode cannot take it: an open object (a record), a property that may be left out
 * but not be null (`Schema.optionalKey`), a keyword strict mode does not document (tuples'
 * `prefixItems`, `minLength`, …), a `format` it does not know, a schema of anything, a root
 * that is not an object.
 */
export const strictForm = (schema: JsonObject): JsonObject | undefined =>
  schema.type === "object" ? strictNode(schema) : undefined

/**
 * `schema` and the `strict` flag sent beside it: its strict form and `true` when strict mode is
 * asked for and takes it, else `schema` as it is and `false`.
 */
export const withStrict = (schema: JsonObject, asked: boolean): { readonly schema: JsonObject; readonly strict: boolean } => {
  const form = asked ? strictForm(schema) : undefined
  return form === undefined ? { schema, strict: false } : { schema: form, strict: true }
}
