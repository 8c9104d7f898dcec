/**
 * The final answer of an agent with an `output` schema: parsed, held to the agent's depth
 * limit like a call's arguments, decoded — or what is wrong with it, as the model reads it.
 */
import { Either, Schema } from "effect"
import { depthOf, type Limits } from "./admit.js"
import { describeParseError } from "./parseError.js"

/**
 * The most characters of a problem with an answer that the model is told (and
 * `InvalidOutput.problem` holds): a mismatch quotes the wrong value, and an answer may be
 * megabytes. The rest is left out, saying how much.
 */
export const problemChars = 2_000

/** `problem`, cut after {@link problemChars} characters (never inside a surrogate pair). */
const capped = (problem: string): string => {
  if (problem.length <= problemChars) return problem
  const code = problem.charCodeAt(problemChars - 1)
  const end = code >= 0xd800 && code <= 0xdbff ? problemChars - 1 : problemChars
  return `${problem.slice(0, end)}… (${problem.length - end} more characters)`
}

/** The answer as JSON decoded with the output schema, or what is wrong with it. */
export const decodeOutput = (schema: Schema.Schema<any, any>, text: string, limits: Limits): Either.Either<unknown, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Either.left("it is not JSON")
  }
  // decoding and describing a mismatch recurse through the value: a deeper one would exhaust the stack
  if (depthOf(json, limits.depth) > limits.depth) return Either.left(`it nests deeper than ${limits.depth} levels (the agent's limit)`)
  return Either.mapLeft(Schema.decodeUnknownEither(schema, { errors: "all" })(json), (error) => capped(describeParseError(error)))
}
