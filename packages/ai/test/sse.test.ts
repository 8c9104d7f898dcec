import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import * as Sse from "../src/internal/sse.js"

/** The events of `text` sent as these byte chunks, decoded as the transport decodes them. */
const eventsOf = (chunks: ReadonlyArray<Uint8Array>) =>
  Effect.map(Stream.runCollect(Sse.events(Stream.decodeText(Stream.fromIterable(chunks)))), Chunk.toArray)

const bytes = (text: string) => new TextEncoder().encode(text)

/** `text` cut at byte `at` into two chunks. */
const cutAt = (text: string, at: number) => [bytes(text).slice(0, at), bytes(text).slice(at)]

/** Two events with every field kind: a comment, a BOM, `data:` without a space, two data lines, `id:`/`retry:`, a name, text in three languages. */
const stream = "\uFEFF: ping\n\nid: 7\nretry: 1000\ndata:{\"a\":1}\n\nevent: delta\ndata: Grüße, 日本,\ndata:  😀\n\n"
const expected = [{ event: "message", data: "{\"a\":1}" }, { event: "delta", data: "Grüße, 日本,\n 😀" }]

describe("Sse.events", () => {
  it.effect("reads each field kind; one chunk", () => Effect.map(eventsOf([bytes(stream)]), (events) => expect(events).toEqual(expected)))

  for (const [name, ending] of [["LF", "\n"], ["CRLF", "\r\n"], ["lone CR", "\r"]] as const) {
    it.effect(`${name} line endings, the stream cut at every byte (inside a character, between CR and LF): the same events`, () =>
      Effect.gen(function*() {
        const text = stream.replace(/\n/g, ending)
        for (let at = 0; at <= bytes(text).length; at++) {
          expect([at, yield* eventsOf(cutAt(text, at))]).toEqual([at, expected])
        }
      }))
  }

  it.effect("CR LF split by a chunk ends one line, not two: the event is not cut short", () =>
    Effect.map(eventsOf([bytes("data: a\r"), bytes("\ndata: b\r"), bytes("\n\r"), bytes("\n")]), (events) =>
      expect(events).toEqual([{ event: "message", data: "a\nb" }])))

  it.effect("an event the stream ends inside is dropped; an event: without data dispatches nothing", () =>
    Effect.map(eventsOf([bytes("event: ping\n\ndata: whole\n\ndata: cut")]), (events) =>
      expect(events).toEqual([{ event: "message", data: "whole" }])))
})
