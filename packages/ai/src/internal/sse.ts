/**
 * Server-sent events from text, per the WHATWG rules the providers follow: lines end at LF,
 * CR LF or a lone CR (made LF first, so that an event's size counts each ending once), `data:` lines
 * joined by newlines, `event:` naming the event (default `message`), comments (`:`) and
 * other fields skipped, a blank line ending each event; an event the stream ends inside is
 * dropped. One field beyond the rules: llama.cpp's server (builds up to mid-2025) sends a
 * failure as a bare `error: {…}` line, read as an event named `error` with that data, so that
 * its message is not lost. A plain line parser: about 20 times faster than `@effect/experimental`'s
 * mailbox-based `Sse` channel was on a 2,000-event answer (docs/decisions/020).
 */
import { Effect, Result, Stream } from "effect"

/** One event. */
export interface Event {
  readonly event: string
  readonly data: string
}

/** How large one event may grow, and the error of one that grows larger. */
export interface Bound<E> {
  /** The most characters of one event, from its first line to the blank line that ends it, each line ending one character. */
  readonly limit: number
  readonly tooLarge: () => E
}

/**
 * The events of a text stream. An event (or a line) that grows past `bound.limit` characters
 * without ending fails the stream with `bound.tooLarge()` as soon as it does: an endless line
 * is not kept in memory to the end.
 */
export const events = <E2>(bound: Bound<E2>) => <E, R>(text: Stream.Stream<string, E, R>): Stream.Stream<Event, E | E2, R> =>
  Stream.suspend(() => {
    let name = ""
    let data: Array<string> = []
    /** The last chunk ended in CR: an LF starting this one is the same line ending. */
    let afterCR = false
    /** Characters of the event being read so far, and whether the last one read ended a line. */
    let pending = 0
    let afterLF = false
    /** Where in `lines` an event ends, from `from` on: the second LF of a pair (the first may have ended the last chunk). */
    const endOf = (lines: string, from: number) => {
      if (from === 0 && afterLF && lines.startsWith("\n")) return 0
      const pair = lines.indexOf("\n\n", from)
      return pair === -1 ? -1 : pair + 1
    }
    /** Measures each event of a chunk (line endings already LF, one character each). */
    const measure = (lines: string): Result.Result<string, E2> => {
      let start = 0
      for (let end = endOf(lines, 0); end !== -1; end = endOf(lines, start)) {
        if (pending + end - start + 1 > bound.limit) return Result.fail(bound.tooLarge())
        pending = 0
        start = end + 1
      }
      pending += lines.length - start
      if (lines.length > 0) afterLF = lines.endsWith("\n")
      return pending > bound.limit ? Result.fail(bound.tooLarge()) : Result.succeed(lines)
    }
    return text.pipe(
      Stream.map((chunk) => {
        if (chunk.length === 0) return chunk
        const rest = afterCR && chunk[0] === "\n" ? chunk.slice(1) : chunk
        afterCR = chunk.endsWith("\r")
        return rest.replace(/\r\n?/g, "\n")
      }),
      Stream.mapEffect((lines) => Effect.fromResult(measure(lines))),
      Stream.splitLines,
      Stream.map((line): ReadonlyArray<Event> => {
        if (line.length === 0) {
          const dispatched = data.length === 0 ? [] : [{ event: name.length > 0 ? name : "message", data: data.join("\n") }]
          name = ""
          data = []
          return dispatched
        }
        if (line.startsWith(":")) return []
        const colon = line.indexOf(":")
        const field = colon === -1 ? line : line.slice(0, colon)
        const value = colon === -1 ? "" : line.slice(line[colon + 1] === " " ? colon + 2 : colon + 1)
        if (field === "data") data.push(value)
        else if (field === "event") name = value
        else if (field === "error") {
          name = "error"
          data.push(value)
        }
        return []
      }),
      Stream.flattenIterable
    )
  })
