import { ParseResult } from "effect"

/** A schema error as one line for the model: `path: message; …`. */
export const describeParseError = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message)
    .join("; ")
