// @ts-check
/**
 * A small JSON Schema validator for the subset that Effect's `JSONSchema.make` writes (what
 * `Tool.parametersJsonSchema` gives the inbox): `type`, `enum`, `const`, `anyOf`, `allOf`,
 * `not`, `$ref` to `#/$defs/…` or `#/definitions/…`; strings (`minLength`, `maxLength`,
 * `pattern`), numbers (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
 * `multipleOf`), arrays (`items`, `prefixItems`, `additionalItems`, `minItems`, `maxItems`),
 * objects (`required`, `properties`, `patternProperties`, `additionalProperties`,
 * `propertyNames`). Other keywords (`format`, annotations) are not checked: the server decodes
 * the arguments with the tool's own schema again, and its answer is the last word.
 *
 * Runs in the browser (the inbox page) and in Node (its tests).
 */

/**
 * @typedef {{ readonly path: string, readonly message: string }} Problem
 * @typedef {{ [key: string]: any }} SchemaObject
 */

/** How deeply `$ref`s may chain without consuming the value (a guard against self-references). */
const maxDepth = 200

/**
 * The problems of `value` against `schema`, in document order; none when it conforms.
 *
 * @param {unknown} schema
 * @param {unknown} value
 * @returns {Array<Problem>}
 */
export function validate(schema, value) {
  /** @type {Array<Problem>} */
  const problems = []
  check(schema, value, "", /** @type {SchemaObject} */ (schema), problems, 0)
  return problems
}

/**
 * A problem's path as a person reads it: `amount`, `items[0].name`, or `(arguments)` for the whole value.
 *
 * @param {Problem} problem
 * @returns {string}
 */
export function describe(problem) {
  return `${problem.path === "" ? "(arguments)" : problem.path}: ${problem.message}`
}

/**
 * @param {unknown} value
 * @returns {string}
 */
function typeOf(value) {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number"
  return typeof value
}

/**
 * @param {string} type
 * @param {unknown} value
 * @returns {boolean}
 */
function isType(type, value) {
  switch (type) {
    case "null":
      return value === null
    case "array":
      return Array.isArray(value)
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value)
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "string":
      return typeof value === "string"
    case "boolean":
      return typeof value === "boolean"
    default:
      return false
  }
}

/**
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
function equal(a, b) {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return ka.length === kb.length &&
    ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && equal(/** @type {any} */ (a)[k], /** @type {any} */ (b)[k]))
}

/**
 * @param {string} path
 * @param {string} key
 * @returns {string}
 */
function child(path, key) {
  const part = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key)
  return path === "" ? part : /^[A-Za-z_$]/.test(part) ? `${path}.${part}` : `${path}[${part}]`
}

/**
 * A path inside the value at `path`.
 *
 * @param {string} path
 * @param {string} sub
 * @returns {string}
 */
function join(path, sub) {
  return path === "" ? sub : sub === "" ? path : sub.startsWith("[") ? `${path}${sub}` : `${path}.${sub}`
}

/**
 * @param {SchemaObject} root
 * @param {string} ref
 * @returns {unknown}
 */
function resolve(root, ref) {
  if (!ref.startsWith("#/")) return undefined
  /** @type {any} */
  let target = root
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~")
    if (typeof target !== "object" || target === null || !Object.prototype.hasOwnProperty.call(target, key)) return undefined
    target = target[key]
  }
  return target
}

/**
 * @param {number} n
 * @param {string} one
 * @returns {string}
 */
function plural(n, one) {
  return `${n} ${one}${n === 1 ? "" : "s"}`
}

/**
 * @param {unknown} schema
 * @param {unknown} value
 * @param {string} path
 * @param {SchemaObject} root
 * @param {Array<Problem>} problems
 * @param {number} depth
 * @returns {void}
 */
function check(schema, value, path, root, problems, depth) {
  /** @param {string} message */
  const fail = (message) => {
    problems.push({ path, message })
  }
  if (schema === true || schema === undefined) return
  if (schema === false) return fail("no value is allowed here")
  if (typeof schema !== "object" || schema === null) return
  const s = /** @type {SchemaObject} */ (schema)
  if (depth > maxDepth) return fail("the schema refers to itself too deeply to check")
  if (typeof s.$ref === "string") {
    const target = resolve(root, s.$ref)
    if (target === undefined) return fail(`the schema refers to ${s.$ref}, which it does not define`)
    check(target, value, path, root, problems, depth + 1)
  }
  if (s.not !== undefined && validate1(s.not, value, root, depth).length === 0) fail("no value is allowed here")
  if (Array.isArray(s.allOf)) for (const part of s.allOf) check(part, value, path, root, problems, depth + 1)
  if (Array.isArray(s.anyOf)) {
    const results = s.anyOf.map((/** @type {unknown} */ alternative) => validate1(alternative, value, root, depth))
    if (!results.some((/** @type {Array<Problem>} */ r) => r.length === 0)) {
      // of the alternatives of the value's own type, the closest says best what is wrong; else name the types allowed
      /** @type {Array<Problem> | undefined} */
      let closest
      s.anyOf.forEach((/** @type {any} */ a, /** @type {number} */ i) => {
        const own = typeof a === "object" && a !== null && typeof a.type === "string" && isType(a.type, value)
        if (own && (closest === undefined || results[i].length < closest.length)) closest = results[i]
      })
      if (closest !== undefined) {
        for (const p of closest) problems.push({ path: join(path, p.path), message: p.message })
      } else {
        const types = s.anyOf.map((/** @type {any} */ a) => describeShape(a)).filter((/** @type {string} */ t, /** @type {number} */ i, /** @type {Array<string>} */ all) => all.indexOf(t) === i)
        fail(`expected ${types.join(" or ")}, got ${describeValue(value)}`)
      }
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((/** @type {unknown} */ e) => equal(e, value))) {
    return fail(`expected ${s.enum.length === 1 ? JSON.stringify(s.enum[0]) : `one of ${s.enum.map((/** @type {unknown} */ e) => JSON.stringify(e)).join(", ")}`}, got ${describeValue(value)}`)
  }
  if ("const" in s && !equal(s.const, value)) return fail(`expected ${JSON.stringify(s.const)}, got ${describeValue(value)}`)
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type]
    if (!types.some((/** @type {string} */ t) => isType(t, value))) {
      return fail(`expected ${types.map((/** @type {string} */ t) => article(t)).join(" or ")}, got ${describeValue(value)}`)
    }
  }
  if (typeof value === "string") checkString(s, value, fail)
  if (typeof value === "number") checkNumber(s, value, fail)
  if (Array.isArray(value)) checkArray(s, value, path, root, problems, depth, fail)
  else if (typeof value === "object" && value !== null) checkObject(s, /** @type {Record<string, unknown>} */ (value), path, root, problems, depth, fail)
}

/**
 * The problems of one alternative, with paths relative to the value.
 *
 * @param {unknown} schema
 * @param {unknown} value
 * @param {SchemaObject} root
 * @param {number} depth
 * @returns {Array<Problem>}
 */
function validate1(schema, value, root, depth) {
  /** @type {Array<Problem>} */
  const problems = []
  check(schema, value, "", root, problems, depth + 1)
  return problems
}

/**
 * @param {string} type
 * @returns {string}
 */
function article(type) {
  return type === "integer" || type === "array" || type === "object" ? `an ${type}` : type === "null" ? "null" : `a ${type}`
}

/**
 * @param {any} schema
 * @returns {string}
 */
function describeShape(schema) {
  if (typeof schema !== "object" || schema === null) return "a value"
  if (Array.isArray(schema.enum)) return schema.enum.map((/** @type {unknown} */ e) => JSON.stringify(e)).join(" or ")
  if ("const" in schema) return JSON.stringify(schema.const)
  if (typeof schema.type === "string") return article(schema.type)
  return "another shape"
}

/**
 * @param {unknown} value
 * @returns {string}
 */
function describeValue(value) {
  const type = typeOf(value)
  if (type === "string" || type === "number" || type === "integer" || type === "boolean") {
    const text = JSON.stringify(value) ?? String(value)
    return text.length > 40 ? `${article(type === "integer" ? "number" : type)}` : text
  }
  return type === "null" ? "null" : article(type)
}

/**
 * A schema's pattern as a regular expression; `undefined` when JavaScript cannot compile it
 * (a schema written for another dialect, say with `\-`, which the `u` flag refuses): the check
 * is then left to the server, which validates anyway.
 *
 * @param {string} source
 * @returns {RegExp | undefined}
 */
function compile(source) {
  try {
    return new RegExp(source, "u")
  } catch {
    return undefined
  }
}

/**
 * @param {SchemaObject} s
 * @param {string} value
 * @param {(message: string) => void} fail
 */
function checkString(s, value, fail) {
  const length = [...value].length
  if (typeof s.minLength === "number" && length < s.minLength) fail(`must be at least ${plural(s.minLength, "character")} long`)
  if (typeof s.maxLength === "number" && length > s.maxLength) fail(`must be at most ${plural(s.maxLength, "character")} long`)
  if (typeof s.pattern === "string") {
    const pattern = compile(s.pattern)
    if (pattern !== undefined && !pattern.test(value)) fail(`must match the pattern ${s.pattern}`)
  }
}

/**
 * @param {SchemaObject} s
 * @param {number} value
 * @param {(message: string) => void} fail
 */
function checkNumber(s, value, fail) {
  if (typeof s.minimum === "number" && value < s.minimum) fail(`must be at least ${s.minimum}`)
  if (typeof s.maximum === "number" && value > s.maximum) fail(`must be at most ${s.maximum}`)
  if (typeof s.exclusiveMinimum === "number" && value <= s.exclusiveMinimum) fail(`must be greater than ${s.exclusiveMinimum}`)
  if (typeof s.exclusiveMaximum === "number" && value >= s.exclusiveMaximum) fail(`must be less than ${s.exclusiveMaximum}`)
  if (typeof s.multipleOf === "number" && s.multipleOf > 0) {
    const quotient = value / s.multipleOf
    if (Math.abs(quotient - Math.round(quotient)) > 1e-9) fail(`must be a multiple of ${s.multipleOf}`)
  }
}

/**
 * @param {SchemaObject} s
 * @param {Array<unknown>} value
 * @param {string} path
 * @param {SchemaObject} root
 * @param {Array<Problem>} problems
 * @param {number} depth
 * @param {(message: string) => void} fail
 */
function checkArray(s, value, path, root, problems, depth, fail) {
  if (typeof s.minItems === "number" && value.length < s.minItems) fail(`must have at least ${plural(s.minItems, "item")}`)
  if (typeof s.maxItems === "number" && value.length > s.maxItems) fail(`must have at most ${plural(s.maxItems, "item")}`)
  const tuple = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : undefined
  const rest = Array.isArray(s.prefixItems) ? s.items : Array.isArray(s.items) ? s.additionalItems : s.items
  value.forEach((item, i) => {
    const at = `${path}[${i}]`
    if (tuple !== undefined && i < tuple.length) check(tuple[i], item, at, root, problems, depth + 1)
    else if (rest === false) problems.push({ path: at, message: `unexpected item: at most ${plural(tuple?.length ?? 0, "item")}` })
    else check(rest, item, at, root, problems, depth + 1)
  })
}

/**
 * @param {SchemaObject} s
 * @param {Record<string, unknown>} value
 * @param {string} path
 * @param {SchemaObject} root
 * @param {Array<Problem>} problems
 * @param {number} depth
 * @param {(message: string) => void} fail
 */
function checkObject(s, value, path, root, problems, depth, fail) {
  const properties = typeof s.properties === "object" && s.properties !== null ? s.properties : {}
  if (Array.isArray(s.required)) {
    for (const key of s.required) if (!Object.prototype.hasOwnProperty.call(value, key)) fail(`missing required property ${JSON.stringify(key)}`)
  }
  const patterns = typeof s.patternProperties === "object" && s.patternProperties !== null
    ? Object.entries(s.patternProperties).map(([p, schema]) => /** @type {const} */ ([compile(p), schema]))
    : []
  for (const key of Object.keys(value)) {
    const at = child(path, key)
    if (s.propertyNames !== undefined) {
      for (const p of validate1(s.propertyNames, key, root, depth)) problems.push({ path: at, message: `the property name ${p.message}` })
    }
    let matched = false
    if (Object.prototype.hasOwnProperty.call(properties, key)) {
      matched = true
      check(properties[key], value[key], at, root, problems, depth + 1)
    }
    for (const [pattern, schema] of patterns) {
      // a pattern that cannot be compiled may match any key: not checked, and not "unexpected" either
      if (pattern === undefined) matched = true
      else if (pattern.test(key)) {
        matched = true
        check(schema, value[key], at, root, problems, depth + 1)
      }
    }
    if (matched) continue
    if (s.additionalProperties === false) problems.push({ path: at, message: "unexpected property" })
    else if (typeof s.additionalProperties === "object") check(s.additionalProperties, value[key], at, root, problems, depth + 1)
  }
}
