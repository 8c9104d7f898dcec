/**
 * Server-sent events from text, per the WHATWG rules the providers follow: lines end at LF,
 * CR LF or a lone CR (`Stream.splitLines` alone takes no lone CR), `data:` lines
 * joined by newlines, `event:` naming the event (default `message`), comments (`:`) and
 * other fields skipped, a blank line ending each event; an event the stream ends inside is
 * dropped. One field beyond the rules: llama.cpp's server (builds up to mid-2025) sends a
 * failure as a bare `error: {…}` line, read as an event named `error` with that data, so that
 * its message is not lost. A plain line parser: about 20 times faster than `@effect/experimental`'s
 * mailbox-based `Sse` channel on a 2,000-event answer (docs/decisions/020).
 */
import { Stream } from "effect"

/** One event. */
export interface Event {
  readonly event: string
  readonly data: string
}

/** The events of a text stream. */
export const events = <E, R>(text: Stream.Stream<string, E, R>): Stream.Stream<Event, E, R> =>
  Stream.suspend(() => {
    let name = ""
    let data: Array<string> = []
    /** The last chunk ended in CR: an LF starting this one is the same line ending. */
    let afterCR = false
    return text.pipe(
      Stream.map((chunk) => {
        if (chunk.length === 0) return chunk
        const rest = afterCR && chunk[0] === "\n" ? chunk.slice(1) : chunk
        afterCR = chunk.endsWith("\r")
        return rest.replace(/\r\n?/g, "\n")
      }),
      Stream.splitLines,
      Stream.mapConcat((line): ReadonlyArray<Event> => {
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
      })
    )
  })
