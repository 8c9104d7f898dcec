// The checker thread of an McpToolkit (see checker.ts for the other side): it compiles the JSON
// Schemas of a server's tools with the MCP SDK's validator (Ajv, with formats; of the schema's
// dialect, `$schema`: draft-07 by default, 2019-09, 2020-12) and checks values
// against them, so that a check that never ends — a `pattern` that backtracks catastrophically —
// blocks this thread only, which the main thread ends at its deadline.
//
// Plain JavaScript on purpose: a `.ts` entry fails under tsx and vitest ("Unknown file extension").
//
// Protocol (one request at a time, answered with its `id`):
//   worker → main  { ready: true }, once the validator is loaded
//   main → worker  { id, kind: "compile", key, schema }
//                  { id, kind: "check", key, schema, value }
//   worker → main  { id, error? }                  (compile: why the schema cannot be compiled)
//                  { id, valid, errorMessage? }    (check)
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { Ajv2019 } from "ajv/dist/2019.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { parentPort, workerData } from "node:worker_threads"

/**
 * The Ajv for a schema's dialect (its `$schema`): JSON Schema 2020-12 (MCP's default dialect:
 * `prefixItems`, and `items` after it) and 2019-09 by Ajv's classes for them, with the options
 * and formats the SDK gives its own; anything else (draft-07, none) by the SDK's default.
 */
const ajvFor = (schema) => {
  const dialect = typeof schema?.$schema === "string" ? schema.$schema : ""
  const Dialect = dialect.includes("2020-12") ? Ajv2020 : dialect.includes("2019-09") ? Ajv2019 : undefined
  if (Dialect === undefined) return undefined
  const ajv = new Dialect({ strict: false, validateFormats: true, validateSchema: false, allErrors: true })
  addFormats(ajv)
  return ajv
}

/** The validators compiled so far, by key, least recently used first; at most `workerData.capacity`. */
const validators = new Map()

/**
 * The validator of a schema. Each is compiled by an Ajv of its own: the SDK's validator takes a
 * schema with an `$id` it has seen for that schema, so a shared one would check a tool against
 * another tool's schema with the same `$id`. A request carries its schema, so a validator
 * dropped from the cache (or lost with an ended thread) is compiled again.
 */
const validatorOf = (key, schema) => {
  let validate = validators.get(key)
  if (validate === undefined) {
    validate = new AjvJsonSchemaValidator(ajvFor(schema)).getValidator(schema)
    if (validators.size >= workerData.capacity) validators.delete(validators.keys().next().value)
  } else {
    validators.delete(key)
  }
  validators.set(key, validate)
  return validate
}

const answer = ({ id, kind, key, schema, value }) => {
  if (kind === "compile") {
    try {
      validatorOf(key, schema)
      return { id }
    } catch (error) {
      return { id, error: error instanceof Error ? error.message : String(error) }
    }
  }
  try {
    const { valid, errorMessage } = validatorOf(key, schema)(value)
    return { id, valid, errorMessage }
  } catch (error) {
    // a recursive schema exhausting the stack on a deep value: a failed check
    return { id, valid: false, errorMessage: `the check threw ${String(error)}` }
  }
}

parentPort.on("message", (request) => parentPort.postMessage(answer(request)))
parentPort.postMessage({ ready: true })
