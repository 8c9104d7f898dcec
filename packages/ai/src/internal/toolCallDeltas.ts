/**
 * Streamed Chat Completions tool calls, put back together from their pieces as servers
 * really send them: OpenAI numbers each call with an `index` and sends its arguments in
 * fragments; Mistral and Gemini's compatible endpoint send whole calls without `index`;
 * older Ollama numbers every call `index: 0`, each piece a whole call with its own id.
 */

/** One piece of `delta.tool_calls`. */
export interface Piece {
  readonly index?: number | null | undefined
  readonly id?: string | null | undefined
  readonly function?: { readonly name?: string | null | undefined; readonly arguments?: string | null | undefined } | null | undefined
}

/** A call as assembled so far. */
export interface Assembled {
  readonly index: number | undefined
  id: string | undefined
  name: string
  args: string
}

const nonEmpty = (value: string | null | undefined): value is string => typeof value === "string" && value.length > 0

/** True when `text` is a whole JSON object or array on its own: nothing can follow it. */
const isWhole = (text: string): boolean => {
  const trimmed = text.trim()
  if (!(trimmed.startsWith("{") || trimmed.startsWith("["))) return false
  try {
    JSON.parse(trimmed)
    return true
  } catch {
    return false
  }
}

const latest = <A>(items: ReadonlyArray<A>, predicate: (item: A) => boolean): A | undefined => {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i]!)) return items[i]
  return undefined
}

/**
 * Assembles tool-call pieces. A piece belongs to the latest call with its `index`; without
 * one, to the call with its `id`; without either, to the latest call. It starts a new call
 * instead when there is none to join, when it brings an id other than the call's, or when
 * it brings a name while the call already has a name and whole arguments. Arguments are
 * concatenated, except that whole arguments never are: a piece with whole arguments
 * arriving after whole arguments replaces them (a server repeating the call).
 */
export class ToolCallDeltas {
  private readonly calls: Array<Assembled> = []

  add(piece: Piece): void {
    const index = typeof piece.index === "number" ? piece.index : undefined
    const id = nonEmpty(piece.id) ? piece.id : undefined
    const name = nonEmpty(piece.function?.name) ? piece.function.name : undefined
    const args = piece.function?.arguments ?? ""
    const joined = index !== undefined
      ? latest(this.calls, (call) => call.index === index)
      : id !== undefined
      ? this.calls.find((call) => call.id === id)
      : this.calls.at(-1)
    const sameId = id !== undefined && joined?.id === id
    const startsNew = joined === undefined ||
      (id !== undefined && joined.id !== undefined && !sameId) ||
      (!sameId && name !== undefined && joined.name.length > 0 && isWhole(joined.args))
    if (startsNew) {
      this.calls.push({ index, id, name: name ?? "", args })
      return
    }
    if (joined.id === undefined) joined.id = id
    if (joined.name.length === 0 && name !== undefined) joined.name = name
    joined.args = isWhole(joined.args) && isWhole(args) ? args : joined.args + args
  }

  /** The calls in the order they started. */
  all(): ReadonlyArray<Assembled> {
    return this.calls
  }
}
