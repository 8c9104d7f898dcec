/**
 * What a database said, for the typed errors of the store and the memory: each message of
 * the failure's cause chain (the client's, then SQLite's or PostgreSQL's), and its code.
 */

/**
 * SQLite's primary result codes by number: `node:sqlite` gives an error's code as a number
 * (`errcode`, its low byte the primary code) beside Node's generic `ERR_SQLITE_ERROR`.
 */
const sqliteCodes: Record<number, string> = {
  1: "SQLITE_ERROR",
  2: "SQLITE_INTERNAL",
  3: "SQLITE_PERM",
  4: "SQLITE_ABORT",
  5: "SQLITE_BUSY",
  6: "SQLITE_LOCKED",
  7: "SQLITE_NOMEM",
  8: "SQLITE_READONLY",
  9: "SQLITE_INTERRUPT",
  10: "SQLITE_IOERR",
  11: "SQLITE_CORRUPT",
  12: "SQLITE_NOTFOUND",
  13: "SQLITE_FULL",
  14: "SQLITE_CANTOPEN",
  15: "SQLITE_PROTOCOL",
  16: "SQLITE_EMPTY",
  17: "SQLITE_SCHEMA",
  18: "SQLITE_TOOBIG",
  19: "SQLITE_CONSTRAINT",
  20: "SQLITE_MISMATCH",
  21: "SQLITE_MISUSE",
  22: "SQLITE_NOLFS",
  23: "SQLITE_AUTH",
  24: "SQLITE_FORMAT",
  25: "SQLITE_RANGE",
  26: "SQLITE_NOTADB"
}

/** The code of one error of the chain: SQLite's name for `errcode`, else its own string `code` (PostgreSQL's SQLSTATE, a socket's `ECONNREFUSED`). */
const codeAt = (error: object): string | undefined => {
  const { code, errcode } = error as { readonly code?: unknown; readonly errcode?: unknown }
  if (typeof errcode === "number") return sqliteCodes[errcode & 0xff] ?? `SQLITE_${errcode}`
  return typeof code === "string" ? code : undefined
}

const messageOf = (error: unknown): string | undefined => {
  if (error === undefined || error === null) return undefined
  if (typeof error !== "object") return String(error)
  const { message } = error as { readonly message?: unknown }
  const code = codeAt(error)
  const text = typeof message === "string" && message !== "" ? message : undefined
  if (code === undefined || text?.includes(code)) return text
  return text === undefined ? code : `${text} (${code})`
}

/** The message of a database failure: what the client was doing, then what the database answered. */
export const describe = (error: unknown): string => {
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
    const code = codeAt(at)
    if (code !== undefined) return code
  }
  return undefined
}
