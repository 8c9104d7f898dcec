/**
 * Credentials out of text that leaves a component: error messages, logs, span attributes.
 * One masker for every package that quotes what a server said (`@agentfx/ai`'s model
 * adapters, `@agentfx/mcp`'s toolkit).
 *
 * @since 0.1.0
 */

/** A credential value: no spaces, quotes or closing punctuation, not ending in a full stop. */
const value = String.raw`[^\s"',;)}\]]*[^\s"',;)}\].]`

/** A character a credential value stops at: what ends a word for the mask. */
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
 * A function that masks credentials in a text, each becoming `***`:
 * - every occurrence of each of `secrets`, however short (a short one also masks the same
 *   letters inside ordinary words: better a masked word than a leaked key). Each is trimmed
 *   first, as `fetch` trims a header value; a blank one is no secret;
 * - the userinfo of any URL (`https://user:pass@host` → `https://***@host`);
 * - the value after `Bearer` or `Basic`;
 * - the values of `x-api-key`, `api_key`, `x-goog-api-key`, `authorization` and
 *   `access_token` fields, quoted or not (`"api_key": "…"`, `authorization=…`).
 *
 * Linear in the text's length. Masking is for messages: it never makes a value safe to
 * send or store.
 *
 * @example
 * ```ts
 * import { Mask } from "@agentfx/core"
 *
 * const mask = Mask.make(["sk-live-123"])
 * mask("401: key sk-live-123 refused; Authorization: Bearer t0k3n at https://ada:pw@proxy/v1")
 * // "401: key *** refused; Authorization: Bearer *** at https://***@proxy/v1"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (secrets: ReadonlyArray<string>): (text: string) => string => {
  const exact = [...new Set(secrets.map((secret) => secret.trim()).filter((secret) => secret.length > 0))]
    .sort((a, b) => b.length - a.length)
  return (text) => {
    let masked = text
    // the patterns go first (a short secret masked inside `Bearer` or `api_key` would hide the
    // credential after it from them), except for a secret they would cut short (`Bearer ab,cd`
    // masked as `Bearer ***,cd`)
    for (const secret of exact) if (stop.test(secret)) masked = masked.split(secret).join("***")
    for (const [pattern, replacement] of replacements) masked = masked.replace(pattern, replacement)
    for (const secret of exact) masked = masked.split(secret).join("***")
    return masked
  }
}

/**
 * The start of `text` for a message quoting it: at most `length` characters (then `…`), cut
 * between two words — before the word the limit falls in — so that no credential is split:
 * a mask applied to the whole message afterwards finds each one whole or not at all. A single
 * word longer than `length` is left out.
 *
 * @example
 * ```ts
 * import { Mask } from "@agentfx/core"
 *
 * Mask.quote("bad key sk-live-abc, retry", 12) // "bad key …"
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const quote = (text: string, length: number): string => {
  if (text.length <= length) return text
  let end = length
  while (end > 0 && !stop.test(text[end - 1]!) && !stop.test(text[end]!)) end--
  return `${text.slice(0, end)}…`
}
