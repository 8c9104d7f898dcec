// @ts-check
/**
 * The page's check of edited arguments against a tool's JSON Schema, before anything is sent.
 * `@cfworker/json-schema` validates (served to the page as published, under
 * `/inbox/assets/json-schema/`, named by the page's import map); this module turns its output
 * into one line per problem, named by its path: `amount: must be greater than 0`. The server
 * decodes the arguments with the tool's own Schema again, and is the authority.
 */
import { Validator } from "@cfworker/json-schema"
import { pathOf } from "./paths.js"

/** @typedef {import("@cfworker/json-schema").OutputUnit} OutputUnit */

/** Units that only say that something inside them failed: their inner units say what. */
const wrappers = new Set([
  "properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "dependentSchemas", "propertyNames",
  "items", "prefixItems", "additionalItems", "unevaluatedItems", "contains", "$ref", "$recursiveRef", "allOf", "if", "then", "else", "not"
])

/** @param {unknown} value */
const isObject = (value) => typeof value === "object" && value !== null

/**
 * The rules a schema is read by: those its `$schema` names, except that draft-07 (what Effect's
 * `JSONSchema.make` declares) is read as 2019-09 — Effect puts constraints beside a `$ref`
 * (`{ "$ref": "#/$defs/Int", "maximum": 10 }`), which draft-07 ignores and 2019-09 applies; the
 * rest (`items` arrays, `additionalItems`) means the same in both.
 *
 * @param {unknown} schema
 * @returns {import("@cfworker/json-schema").SchemaDraft}
 */
function draftOf(schema) {
  const uri = isObject(schema) && typeof (/** @type {any} */ (schema).$schema) === "string" ? /** @type {any} */ (schema).$schema : ""
  if (uri.includes("draft-04")) return "4"
  if (uri.includes("2020-12")) return "2020-12"
  return "2019-09"
}

/** @param {string} pointer `#/a/0/b~1c` @returns {Array<string>} */
const segmentsOf = (pointer) =>
  pointer.replace(/^#\/?/, "").split("/").filter((s) => s !== "").map((s) => decodeURIComponent(s).replace(/~1/g, "/").replace(/~0/g, "~"))

/**
 * Follows a JSON pointer into `root`; a `$ref` segment (in a keyword location) goes to the
 * schema the reference names, when it is local.
 *
 * @param {unknown} root
 * @param {Array<string>} segments
 * @returns {unknown}
 */
function at(root, segments) {
  let node = root
  for (const segment of segments) {
    if (!isObject(node)) return undefined
    const next = /** @type {any} */ (node)[segment]
    node = segment === "$ref" && typeof next === "string" && next.startsWith("#") ? at(root, segmentsOf(next)) : next
  }
  return node
}

/** @param {unknown} value */
function shown(value) {
  if (Array.isArray(value)) return "an array"
  if (isObject(value)) return "an object"
  return JSON.stringify(value)
}

/** @param {string} type */
const named = (type) => (type === "null" ? "null" : `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`)

/** @param {number} n @param {string} noun */
const count = (n, noun) => `${n} ${noun}${n === 1 ? "" : "s"}`

/**
 * What a failed keyword means, in words; the library's own message for the rare ones.
 *
 * @param {OutputUnit} unit
 * @param {unknown} expected the keyword's value in the schema
 * @param {unknown} actual the value it judged
 * @param {string} name the last segment of the value's path
 */
function meaning(unit, expected, actual, name) {
  switch (unit.keyword) {
    case "type":
      return `expected ${[expected].flat().map((t) => named(String(t))).join(" or ")}, got ${shown(actual)}`
    case "enum":
      return Array.isArray(expected) && expected.length > 1
        ? `expected one of ${expected.map((v) => JSON.stringify(v)).join(", ")}, got ${shown(actual)}`
        : `expected ${JSON.stringify([expected].flat()[0])}, got ${shown(actual)}`
    case "const":
      return `expected ${JSON.stringify(expected)}, got ${shown(actual)}`
    case "false":
      return /^\d+$/.test(name) ? "unexpected item" : "unexpected property"
    case "minimum":
      return `must be at least ${expected}`
    case "maximum":
      return `must be at most ${expected}`
    case "exclusiveMinimum":
      return `must be greater than ${expected}`
    case "exclusiveMaximum":
      return `must be less than ${expected}`
    case "minLength":
      return `must be at least ${count(Number(expected), "character")} long`
    case "maxLength":
      return `must be at most ${count(Number(expected), "character")} long`
    case "pattern":
      return `must match the pattern ${expected}`
    case "format":
      return `must be a valid ${expected}`
    case "minItems":
      return `must have at least ${count(Number(expected), "item")}`
    case "maxItems":
      return `must have at most ${count(Number(expected), "item")}`
    default:
      return unit.error.replace(/\.$/, "")
  }
}

/** @typedef {{ readonly unit: OutputUnit, readonly expected?: unknown }} Problem a failed keyword; `expected`: its value, when not the schema's at the unit's location */

/**
 * The failed keywords that say what is wrong: of an `anyOf`/`oneOf`, those of the alternative
 * that failed least (two that failed alike: "matches none of its N alternatives", or, when
 * each failed on its type only, "expected a string or null").
 *
 * @param {Array<OutputUnit>} units in the library's order: a unit before the units inside it
 * @param {unknown} schema
 * @returns {Array<Problem>}
 */
function telling(units, schema) {
  /** @type {Array<Problem>} */
  const problems = []
  let rest = units
  for (let unit = rest[0]; unit !== undefined; unit = rest[0]) {
    rest = rest.slice(1)
    if (unit.keyword !== "anyOf" && unit.keyword !== "oneOf") {
      if (!wrappers.has(unit.keyword)) problems.push({ unit })
      continue
    }
    const inside = `${unit.keywordLocation}/`
    /** @type {Map<string, Array<OutputUnit>>} */
    const branches = new Map()
    for (const inner of rest.filter((u) => u.keywordLocation.startsWith(inside))) {
      const branch = inner.keywordLocation.slice(inside.length).split("/")[0] ?? ""
      branches.set(branch, [...(branches.get(branch) ?? []), inner])
    }
    rest = rest.filter((u) => !u.keywordLocation.startsWith(inside))
    const outcomes = [...branches.values()].map((branch) => telling(branch, schema))
    const fewest = Math.min(...outcomes.map((o) => o.length))
    const best = outcomes.filter((o) => o.length === fewest)
    const typesOnly = best.every((o) => o.length === 1 && o[0]?.unit.keyword === "type" && o[0].unit.instanceLocation === unit.instanceLocation)
    if (best.length === 1) problems.push(...best[0] ?? [])
    else if (best.length > 1 && typesOnly) {
      const types = best.flatMap((o) => [at(schema, segmentsOf(o[0]?.unit.keywordLocation ?? ""))].flat())
      problems.push({ unit: { ...unit, keyword: "type" }, expected: types })
    } else problems.push({ unit: { ...unit, error: `matches none of its ${branches.size} alternatives` } })
  }
  return problems
}

/**
 * Whether the tool's Schema accepts what the library refused, where their rules differ: the
 * page must not refuse what the server takes. Effect counts a string's length in UTF-16 units
 * (JSON Schema in code points: "😀" is 2 long for one, 1 for the other), and its `multipleOf`
 * of a large number is a float remainder (it takes 4.88137e22 as a multiple of 3): left to the
 * server.
 *
 * @param {string} keyword
 * @param {unknown} expected
 * @param {unknown} actual
 */
function serverTakes(keyword, expected, actual) {
  if (keyword === "minLength") return typeof actual === "string" && actual.length >= Number(expected)
  return keyword === "multipleOf"
}

/**
 * The problems of `value` against the JSON Schema `schema`, one line each (`path: what`), in
 * the order the schema is written; none when it conforms. A schema the browser cannot use (a
 * pattern its regular expressions refuse) checks nothing: the server checks anyway.
 *
 * @param {unknown} schema
 * @param {unknown} value
 * @returns {Array<string>}
 */
export function check(schema, value) {
  /** @type {Array<OutputUnit>} */
  let units
  try {
    units = new Validator(/** @type {any} */ (schema), draftOf(schema), false).validate(value).errors
  } catch {
    return []
  }
  // a `false` schema's unit (an unexpected property or item) belongs to the keyword before it
  const placed = units.map((unit, i) =>
    unit.keyword === "false" && i > 0 ? { ...unit, keywordLocation: `${units[i - 1]?.keywordLocation}/false` } : unit)
  const lines = telling(placed, schema).map((problem) => {
    const { unit } = problem
    const segments = segmentsOf(unit.instanceLocation)
    const actual = at(value, segments)
    const expected = "expected" in problem ? problem.expected : at(schema, segmentsOf(unit.keywordLocation))
    if (serverTakes(unit.keyword, expected, actual)) return ""
    if (unit.keyword === "required") {
      const missing = (Array.isArray(expected) ? expected : []).filter((key) => !(isObject(actual) && Object.hasOwn(actual, key)))
      return missing.map((key) => `${pathOf(value, segments)}: missing required property ${JSON.stringify(key)}`).join("\n")
    }
    return `${pathOf(value, segments)}: ${meaning(unit, expected, actual, segments.at(-1) ?? "")}`
  })
  return [...new Set(lines.flatMap((line) => line === "" ? [] : line.split("\n")))]
}
