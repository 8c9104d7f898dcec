/**
 * Credentials out of what leaves an adapter: `ModelError` messages and span attributes.
 */
import { ChatModel } from "@agentfx/core"

/** A credential value: no spaces, quotes or closing punctuation, not ending in a full stop. */
const value = String.raw`[^\s"',;)}\]]*[^\s"',;)}\].]`

/** A character a credential value stops at. */
const stop = /[\s"',;)}\]]/

const replacements: ReadonlyArray<readonly [RegExp, string]> = [
  // userinfo of any URL: https://user:pass@host → https://***@host; the scheme's length is
  // bounded (and it may start inside a word) so that each position is tried in constant work
  [/([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#@"'<>]+@/gi, "$1***@"],
  // a credential after its scheme: Bearer …, Basic …
  [new RegExp(String.raw`\b(Bearer|Basic)\s+` + value, "gi"), "$1 ***"],
  // header or field names that carry a credential, quoted or not: x-api-key: …, "api_key": "…", authorization=…
  [
    new RegExp(
      String.raw`\b((?:x-api-key|api[-_]?key|x-goog-api-key|authorization|access[-_]?token)["']?\s*[:=]\s*["']?)(?!\*\*\*|Bearer\b|Basic\b)` + value,
      "gi"
    ),
    "$1***"
  ]
]

/**
 * A function that masks credentials in a text: the userinfo of URLs, the value after
 * `Bearer`/`Basic`, values of `x-api-key`/`api_key`/`authorization` fields, and every
 * occurrence of each of `secrets`, however short (a blank one is no secret) — each becomes `***`.
 * The patterns go first (a short secret masked inside `Bearer` or `api_key` would hide the
 * credential after it from them), except for a secret they would cut short.
 */
export const masker = (secrets: ReadonlyArray<string>): (text: string) => string => {
  // trimmed as fetch trims a header value: what is sent (and echoed) is the trimmed key
  const exact = [...new Set(secrets.map((secret) => secret.trim()).filter((secret) => secret.length > 0))]
    .sort((a, b) => b.length - a.length)
  return (text) => {
    let masked = text
    // a secret the patterns would cut short (`Bearer ab,cd` masked as `Bearer ***,cd`) goes before them too
    for (const secret of exact) if (stop.test(secret)) masked = masked.split(secret).join("***")
    for (const [pattern, replacement] of replacements) masked = masked.replace(pattern, replacement)
    for (const secret of exact) masked = masked.split(secret).join("***")
    return masked
  }
}

/**
 * The start of `text` for a message quoting it: at most `length` characters (then `…`), cut
 * between two words — before the word the limit falls in — so that no credential is split:
 * the mask, applied to the whole message afterwards, finds each one whole or not at all.
 */
export const quote = (text: string, length: number): string => {
  if (text.length <= length) return text
  let end = length
  while (end > 0 && !stop.test(text[end - 1]!) && !stop.test(text[end]!)) end--
  return `${text.slice(0, end)}…`
}

/** The most characters of a `ModelError`'s message: a server's own message is quoted up to there. */
export const messageLimit = 1_000

/**
 * The same `ModelError` with its message masked, then cut at {@link messageLimit} characters
 * (`…`) — in that order, so that a cut never leaves part of a credential the mask would have
 * hidden whole. The error itself when nothing changes.
 */
export const maskError = (mask: (text: string) => string) => (error: ChatModel.ModelError): ChatModel.ModelError => {
  const masked = mask(error.message)
  const message = masked.length > messageLimit ? `${masked.slice(0, messageLimit)}…` : masked
  if (message === error.message) return error
  return new ChatModel.ModelError({
    reason: error.reason,
    message,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMillis === undefined ? {} : { retryAfterMillis: error.retryAfterMillis })
  })
}
