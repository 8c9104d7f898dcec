/**
 * Whether OpenAI's strict structured outputs accept a JSON Schema (docs/decisions/061): every
 * object closed (`additionalProperties: false`) with every property required, and only the
 * keywords strict mode documents. A schema outside that subset is sent with `strict: false`
 * (the model is steered, not constrained; the loop still checks the answer).
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

const strictNode = (node: unknown): boolean => {
  if (!isObject(node)) return false
  if (!("type" in node || "anyOf" in node || "$ref" in node || "enum" in node || "const" in node)) return false
  for (const key of Object.keys(node)) if (!keywords.has(key)) return false
  if ("format" in node && !(typeof node.format === "string" && formats.has(node.format))) return false
  if ("properties" in node || node.type === "object") {
    const properties: JsonObject = isObject(node.properties) ? node.properties : {}
    const required = Array.isArray(node.required) ? node.required : []
    if (node.additionalProperties !== false) return false
    if (!Object.keys(properties).every((name) => required.includes(name))) return false
    if (!Object.values(properties).every(strictNode)) return false
  }
  if ("items" in node && !strictNode(node.items)) return false
  if ("anyOf" in node && !(Array.isArray(node.anyOf) && node.anyOf.every(strictNode))) return false
  if ("$defs" in node && !(isObject(node.$defs) && Object.values(node.$defs).every(strictNode))) return false
  return true
}

/** True when `schema` (an answer's JSON Schema, an object) fits OpenAI's strict mode. */
export const strictAllowed = (schema: unknown): boolean => strictNode(schema)
