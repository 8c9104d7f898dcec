/**
 * The transport's credentials out of what the toolkit says: error messages and logs.
 */
import { Mask } from "@agentfx/core"
import type * as McpTransport from "../McpTransport.js"

/** What a header value or the URL carries that a server may echo: the value, and the credential after `Bearer`/`Basic`. */
const secretsOf = (transport: McpTransport.McpTransport): ReadonlyArray<string> => {
  if (transport._tag === "Stdio") return []
  const values = Object.values(transport.headers).flatMap((value) => [value, /^(?:Bearer|Basic)\s+(\S+)$/i.exec(value.trim())?.[1] ?? ""])
  try {
    const url = new URL(transport.url)
    values.push(url.password, decodeURIComponent(url.password))
  } catch {
    // a URL that does not parse has no password to mask (its userinfo is still masked)
  }
  return values
}

/**
 * A function that masks, in a text, the transport's credentials — every occurrence of its
 * header values and URL password — and whatever else looks like one (`Mask.make`: URL
 * userinfo, `Bearer` values, `api_key` fields…); each becomes `***`.
 */
export const masker = (transport: McpTransport.McpTransport): (text: string) => string => Mask.make(secretsOf(transport))
