import { ParseResult } from "effect"
import type { ToolError } from "../ToolError.js"
import { semantic } from "../ToolError.js"

/** A parse error as one line: `path.to.field: what is wrong; other.field: …`. */
export const describeParseError = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message)
    .join("; ")

/** The semantic error the model reads for arguments a tool's `parameters` schema rejects. */
export const invalidArguments = (toolName: string, error: ParseResult.ParseError): ToolError =>
  semantic(`Invalid arguments for tool "${toolName}": ${describeParseError(error)}`)

/** The semantic error the model reads for a value a tool's `success` schema rejects. */
export const invalidResult = (toolName: string, error: ParseResult.ParseError): ToolError =>
  semantic(`Tool "${toolName}" returned an invalid result: ${describeParseError(error)}`)
