/**
 * The cluster bench's section of RESULTS.md, between two markers: `pnpm bench:cluster --write`
 * replaces it (or adds it before "## Measured elsewhere"), and `pnpm bench --write`, which
 * writes the rest of the file, keeps it.
 */
const begin = "<!-- bench:cluster -->"
const end = "<!-- /bench:cluster -->"

/** The section in `text`, markers included; "" when there is none. */
export const sectionOf = (text: string): string => {
  const from = text.indexOf(begin)
  const to = text.indexOf(end)
  return from === -1 || to === -1 ? "" : text.slice(from, to + end.length)
}

/** `body` between the markers. */
export const section = (body: string): string => `${begin}\n${body.trimEnd()}\n${end}`

/** `text` with its section replaced by `replacement`, or with it added before "## Measured elsewhere" (else at the end). */
export const withSection = (text: string, replacement: string): string => {
  const old = sectionOf(text)
  if (old !== "") return text.replace(old, replacement)
  const at = text.indexOf("## Measured elsewhere")
  return at === -1 ? `${text.trimEnd()}\n\n${replacement}\n` : `${text.slice(0, at)}${replacement}\n\n${text.slice(at)}`
}
