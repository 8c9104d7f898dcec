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

/** A call as assembled. */
export interface Assembled {
  readonly index: number | undefined
  readonly id: string | undefined
  readonly name: string
  readonly args: string
}

/** A call while it is being assembled. */
interface Assembling {
  readonly index: number | undefined
  id: string | undefined
  name: string
  args: Arguments
}

const nonEmpty = (value: string | null | undefined): value is string => typeof value === "string" && value.length > 0

/**
 * Follows a call's arguments piece by piece to tell whether they are a whole JSON object or
 * array: each character is scanned once, and the text is parsed (to confirm) only when its
 * brackets close — so assembling arguments is linear in their length, however small the pieces.
 */
class Arguments {
  text = ""
  /** Nothing but whitespace yet, inside the top object or array, just after its end, or anything else. */
  private state: "empty" | "open" | "closed" | "other" = "empty"
  private depth = 0
  private inString = false
  private escaped = false
  /**
   * The parse's verdict once asked, asked only when closed: after that the text can only
   * gain whitespace (the verdict stands) or something else (never whole), so it is kept.
   */
  private confirmed: boolean | undefined = undefined

  constructor(text: string) {
    this.append(text)
  }

  append(piece: string): void {
    this.text += piece
    for (let i = 0; i < piece.length && this.state !== "other"; i++) this.step(piece[i]!)
  }

  private step(char: string): void {
    const blank = char === " " || char === "\n" || char === "\r" || char === "\t"
    if (this.state !== "open") {
      if (blank) return
      if (this.state === "empty" && (char === "{" || char === "[")) {
        this.state = "open"
        this.depth = 1
      } else {
        this.state = "other"
      }
      return
    }
    if (this.inString) {
      if (this.escaped) this.escaped = false
      else if (char === "\\") this.escaped = true
      else if (char === "\"") this.inString = false
    } else if (char === "\"") {
      this.inString = true
    } else if (char === "{" || char === "[") {
      this.depth++
    } else if ((char === "}" || char === "]") && --this.depth === 0) {
      this.state = "closed"
    }
  }

  /** True when the text is a whole JSON object or array on its own: nothing can follow it. */
  isWhole(): boolean {
    if (this.state !== "closed") return false
    if (this.confirmed === undefined) this.confirmed = parses(this.text)
    return this.confirmed
  }
}

const parses = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
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
  private readonly calls: Array<Assembling> = []
  /** The latest call with each index, and the first with each id: a piece finds its call in constant time, however many calls came. */
  private readonly byIndex = new Map<number, Assembling>()
  private readonly byId = new Map<string, Assembling>()

  add(piece: Piece): void {
    const index = typeof piece.index === "number" ? piece.index : undefined
    const id = nonEmpty(piece.id) ? piece.id : undefined
    const name = nonEmpty(piece.function?.name) ? piece.function.name : undefined
    const args = piece.function?.arguments ?? ""
    const joined = index !== undefined
      ? this.byIndex.get(index)
      : id !== undefined
      ? this.byId.get(id)
      : this.calls.at(-1)
    const sameId = id !== undefined && joined?.id === id
    const startsNew = joined === undefined ||
      (id !== undefined && joined.id !== undefined && !sameId) ||
      (!sameId && name !== undefined && joined.name.length > 0 && joined.args.isWhole())
    if (startsNew) {
      const call: Assembling = { index, id, name: name ?? "", args: new Arguments(args) }
      this.calls.push(call)
      if (index !== undefined) this.byIndex.set(index, call)
      this.identify(call, id)
      return
    }
    if (joined.id === undefined) {
      joined.id = id
      this.identify(joined, id)
    }
    if (joined.name.length === 0 && name !== undefined) joined.name = name
    if (joined.args.isWhole()) {
      const replacing = new Arguments(args)
      if (replacing.isWhole()) {
        joined.args = replacing
        return
      }
    }
    joined.args.append(args)
  }

  private identify(call: Assembling, id: string | undefined): void {
    if (id !== undefined && !this.byId.has(id)) this.byId.set(id, call)
  }

  /** The calls in the order they started. */
  all(): ReadonlyArray<Assembled> {
    return this.calls.map((call) => ({ index: call.index, id: call.id, name: call.name, args: call.args.text }))
  }
}
