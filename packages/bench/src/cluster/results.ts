/**
 * Sections of RESULTS.md between markers, which `pnpm bench --write` (which writes the rest of
 * the file) keeps: the cluster bench's (`pnpm bench:cluster --write` replaces it, or adds it
 * before "## Measured elsewhere"), and the last run of record on Effect 3 beside which the
 * first runs on Effect 4 are read (`effect3`, copied from that run's output: issue 33).
 */
type Name = "cluster" | "effect3"

const begin = (name: Name) => `<!-- bench:${name} -->`
const end = (name: Name) => `<!-- /bench:${name} -->`

/** The section in `text`, markers included; "" when there is none. */
export const sectionOf = (text: string, name: Name = "cluster"): string => {
  const from = text.indexOf(begin(name))
  const to = text.indexOf(end(name))
  return from === -1 || to === -1 ? "" : text.slice(from, to + end(name).length)
}

/** Every section `pnpm bench --write` keeps, in their order in the file. */
export const keptSections = (text: string): string =>
  (["effect3", "cluster"] as const).map((name) => sectionOf(text, name)).filter((kept) => kept !== "").join("\n\n")

/** `body` between the markers. */
export const section = (body: string, name: Name = "cluster"): string => `${begin(name)}\n${body.trimEnd()}\n${end(name)}`

/** `text` with its section replaced by `replacement`, or with it added before "## Measured elsewhere" (else at the end). */
export const withSection = (text: string, replacement: string, name: Name = "cluster"): string => {
  const old = sectionOf(text, name)
  if (old !== "") return text.replace(old, replacement)
  const at = text.indexOf("## Measured elsewhere")
  return at === -1 ? `${text.trimEnd()}\n\n${replacement}\n` : `${text.slice(0, at)}${replacement}\n\n${text.slice(at)}`
}
