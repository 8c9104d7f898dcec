/**
 * The final answer of an agent with an `output` schema: parsed, held to the agent's depth
 * limit like a call's arguments, decoded — or what is wrong with it, as the model reads it.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { depthOf, type Limits } from "./admit.js"
import { decodeJson } from "./jsonForm.js"
import { capped, describeParseError } from "./parseError.js"
import { settledResult } from "./settled.js"

/** The answer as JSON decoded with the output schema, or what is wrong with it. */
export const decodeOutput = (schema: Schema.Codec<any, any>, text: string, limits: Limits): Result.Result<unknown, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Result.fail("it is not JSON")
  }
  // decoding and describing a mismatch recurse through the value: a deeper one would exhaust the stack
  if (depthOf(json, limits.depth) > limits.depth) return Result.fail(`it nests deeper than ${limits.depth} levels (the agent's limit)`)
  const decoded = decodeJson(schema, { errors: "all", reportInput: true })(json)
  const now = settledResult(decoded)
  return now === undefined
    ? Result.fail("its schema decodes asynchronously, which an output schema cannot")
    : Result.mapError(now, (error) => capped(describeParseError(error)))
}
