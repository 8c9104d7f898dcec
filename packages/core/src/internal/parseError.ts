import { ParseResult } from "effect"

/** A parse error as one line: `path.to.field: what is wrong; other.field: …`. */
export const describeParseError = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message)
    .join("; ")
