import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Stream } from "effect"
import * as Sse from "../src/internal/sse.js"

/** The events of `text` sent as these byte chunks, decoded as the transport decodes them. */
const eventsOf = (chunks: ReadonlyArray<Uint8Array>, limit = Number.POSITIVE_INFINITY) =>
  Stream.runCollect(Sse.events({ limit, tooLarge: () => "too large" })(Stream.decodeText(Stream.fromIterable(chunks))))

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

  it.effect("an event may take its limit's characters, line endings included; every blank line (LF, CRLF, lone CR) starts the count again", () =>
    Effect.gen(function*() {
      const event = "data: 12345\n\n" // 13 characters
      const many = event.repeat(100)
      expect((yield* eventsOf([bytes(many)], 13)).length).toBe(100)
      expect((yield* eventsOf([bytes(many.replace(/\n/g, "\r"))], 13)).length).toBe(100)
      expect((yield* eventsOf([bytes(many.replace(/\n/g, "\r\n"))], 15)).length).toBe(100)
      expect((yield* eventsOf([...bytes(many)].map((byte) => Uint8Array.of(byte)), 13)).length).toBe(100)
    }))

  it.effect("a line, or an event of many lines, longer than the limit fails the stream as soon as it passes it, also inside one chunk", () =>
    Effect.gen(function*() {
      const endless = Stream.concat(
        Stream.make(bytes("data: {\"a\":1}\n\n"), bytes("data: ")),
        Stream.forever(Stream.make(bytes("x".repeat(1000))))
      )
      const lines = Stream.concat(Stream.make(bytes("data: 1\n\n")), Stream.forever(Stream.make(bytes("data: x\n"))))
      const collect = (chunks: Stream.Stream<Uint8Array>, limit = 10_000) =>
        Effect.result(Stream.runCollect(Sse.events({ limit, tooLarge: () => "too large" })(Stream.decodeText(chunks))))
      expect(yield* collect(endless)).toEqual(Result.fail("too large"))
      expect(yield* collect(lines)).toEqual(Result.fail("too large"))
      // one character over, inside a single chunk with the events around it
      expect(yield* collect(Stream.make(bytes("data: 1234\n\ndata: 123456\n\ndata: 1\n\n")), 13)).toEqual(Result.fail("too large"))
    }))
})
