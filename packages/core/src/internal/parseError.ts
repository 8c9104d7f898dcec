import type * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import type { ToolError } from "../ToolError.js"
import { semantic } from "../ToolError.js"
import { invalidArgumentsMessage } from "./beforeHandler.js"

/**
 * The most characters of a problem with an answer that the model is told (and
 * `InvalidOutput.problem` holds): a mismatch quotes the wrong value, and an answer may be
 * megabytes. The rest is left out, saying how much.
 */
export const problemChars = 2_000

/** `problem`, cut after {@link problemChars} characters (never inside a surrogate pair). */
export const capped = (problem: string): string => {
  if (problem.length <= problemChars) return problem
  const code = problem.charCodeAt(problemChars - 1)
  const end = code >= 0xd800 && code <= 0xdbff ? problemChars - 1 : problemChars
  return `${problem.slice(0, end)}… (${problem.length - end} more characters)`
}

const standard = SchemaIssue.makeFormatterStandardSchemaV1()

/** A schema error as one line: `path.to.field: what is wrong; other.field: …`. */
export const describeParseError = (error: Schema.SchemaError): string =>
  standard(error.issue).issues
    .map((issue) => issue.path !== undefined && issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ${issue.message}` : issue.message)
    .join("; ")

/** The semantic error the model reads for arguments a tool's `parameters` schema rejects. */
export const invalidArguments = (toolName: string, error: Schema.SchemaError): ToolError =>
  semantic(invalidArgumentsMessage(toolName, describeParseError(error)))

/** The semantic error the model reads for a value a tool's `success` schema rejects. */
export const invalidResult = (toolName: string, error: Schema.SchemaError): ToolError =>
  semantic(`Tool "${toolName}" returned an invalid result: ${describeParseError(error)}`)
