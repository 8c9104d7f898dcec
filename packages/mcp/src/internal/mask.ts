/**
 * The transport's credentials out of what the toolkit says: error messages and logs.
 */
import type * as McpTransport from "../McpTransport.js"

/** The userinfo of any URL: `https://user:pass@host` → `https://***@host`. */
const userinfo = /([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#@"'<>]+@/gi

/** What a header value or the URL carries that a server may echo: the value, and the credential after `Bearer`/`Basic`. */
const secretsOf = (transport: McpTransport.McpTransport): ReadonlyArray<string> => {
  if (transport._tag === "Stdio") return []
  const values = Object.values(transport.headers).flatMap((value) => [value.trim(), /^(?:Bearer|Basic)\s+(\S+)$/i.exec(value.trim())?.[1] ?? ""])
  try {
    const url = new URL(transport.url)
    values.push(url.password, decodeURIComponent(url.password))
  } catch {
    // a URL that does not parse has no password to mask (its userinfo is still masked)
  }
  return [...new Set(values.filter((value) => value.length > 0))].sort((a, b) => b.length - a.length)
}

/** A function that masks, in a text, the transport's URL userinfo and every occurrence of its header values (each becomes `***`). */
export const masker = (transport: McpTransport.McpTransport): (text: string) => string => {
  const secrets = secretsOf(transport)
  return (text) => secrets.reduce((masked, secret) => masked.split(secret).join("***"), text.replace(userinfo, "$1***@"))
}
