/**
 * What a database said, for the typed errors of the store and the memory: each message of
 * the failure's cause chain (the client's, then SQLite's or PostgreSQL's), and its code.
 */
import { SchemaIssue } from "effect"

const messageOf = (error: unknown): string | undefined => {
  if (error === undefined || error === null) return undefined
  if (typeof error !== "object") return String(error)
  const { code, message } = error as { readonly code?: unknown; readonly message?: unknown }
  const text = typeof message === "string" && message !== "" ? message : undefined
  if (typeof code !== "string" || text?.includes(code)) return text
  return text === undefined ? code : `${text} (${code})`
}

/** The message of a database failure: what the client was doing, then what the database answered. */
export const describe = (error: unknown): string => {
  if (ParseResult.isParseError(error)) return ParseResult.TreeFormatter.formatErrorSync(error)
  const parts: Array<string> = []
  for (let at: unknown = error; at !== undefined && at !== null && parts.length < 8; at = (at as { readonly cause?: unknown }).cause) {
    const message = messageOf(at)
    if (message !== undefined && !parts.includes(message)) parts.push(message)
    if (typeof at !== "object") break
  }
  return parts.length === 0 ? "Database error (no message)" : parts.join(": ")
}

/** The driver's error code along the cause chain (`SQLITE_BUSY`, PostgreSQL's SQLSTATE `23505`), if any. */
export const codeOf = (error: unknown): string | undefined => {
  for (let at: unknown = error, depth = 0; typeof at === "object" && at !== null && depth < 8; at = (at as { readonly cause?: unknown }).cause, depth++) {
    const code = (at as { readonly code?: unknown }).code
    if (typeof code === "string") return code
  }
  return undefined
}
