/**
 * The replay buffer's bounds: a message's replay dropped past its bytes (its listeners still
 * get everything), the oldest settled messages forgotten past their count, an ended message
 * replayed for its time only; a paused message goes on in the same buffer when its run resumes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as Replay from "../src/internal/replay.js"
import * as UiChunk from "../src/UiChunk.js"

const decoder = new TextDecoder()
const text = (events: Stream.Stream<Uint8Array>) => Effect.map(Stream.runCollect(events), (all) => all.map((b) => decoder.decode(b)).join(""))
const delta = (delta: string) => [UiChunk.toEvent({ type: "text-delta", id: "t", delta })]
const start = (messageId: string) => [UiChunk.toEvent({ type: "start", messageId })]
const finish = (finishReason: UiChunk.FinishReason) => [UiChunk.toEvent({ type: "finish", finishReason }), UiChunk.done]

describe("Replay", () => {
  it.effect("a reattach gets the message from its start, then live until its end", () =>
    Effect.gen(function*() {
      const replay = Replay.make({ maxBytes: 10_000, maxSettled: 10, endedMillis: 1000 })
      const first = yield* Replay.listen
      const message = replay.open("c1", "r1", first.queue, start("r1"))
      replay.push(message, delta("a"))
      const found = yield* replay.reattach("c1", 0)
      if (found._tag !== "Replay") return expect.fail(found._tag)
      replay.push(message, delta("b"))
      replay.end(message, [], finish("stop"), "ended", 5)
      const expected = `data: {"type":"start","messageId":"r1"}\n\ndata: {"type":"text-delta","id":"t","delta":"a"}\n\n` +
        `data: {"type":"text-delta","id":"t","delta":"b"}\n\ndata: {"type":"finish","finishReason":"stop"}\n\ndata: [DONE]\n\n`
      expect(yield* text(found.events)).toBe(expected)
      expect(yield* text(first.stream(() => message))).toBe(expected)
      // ended: replayed for its time, then nothing
      expect((yield* replay.reattach("c1", 1005))._tag).toBe("Replay")
      expect((yield* replay.reattach("c1", 1006))._tag).toBe("None")
    }))

  it.effect("past its bytes a message's replay is dropped; its listener still gets every event", () =>
    Effect.gen(function*() {
      const replay = Replay.make({ maxBytes: 120, maxSettled: 10, endedMillis: 1000 })
      const listener = yield* Replay.listen
      const message = replay.open("c1", "r1", listener.queue, start("r1"))
      replay.push(message, delta("a")) // 50 bytes
      replay.push(message, delta("b")) // 100
      expect((yield* replay.reattach("c1", 0))._tag).toBe("Replay")
      replay.push(message, delta("c")) // 150: past the bound
      expect((yield* replay.reattach("c1", 0))._tag).toBe("Dropped")
      replay.end(message, [], finish("stop"), "ended", 0)
      expect((yield* text(listener.stream(() => message))).match(/"delta":"\w"/g)).toEqual([`"delta":"a"`, `"delta":"b"`, `"delta":"c"`])
    }))

  it.effect("a paused message goes on when its run resumes; the oldest settled chats are forgotten first", () =>
    Effect.gen(function*() {
      const replay = Replay.make({ maxBytes: 10_000, maxSettled: 2, endedMillis: 1000 })
      const pause = (chat: string) =>
        Effect.map(Replay.listen, ({ queue }) => {
          const message = replay.open(chat, `run-${chat}`, queue, start(`run-${chat}`))
          replay.push(message, delta(chat))
          replay.end(message, [], finish("tool-calls"), "paused", 0)
        })
      yield* pause("c1")
      yield* pause("c2")
      // c1's run resumes: the same message goes on
      const resumed = replay.open("c1", "run-c1", (yield* Replay.listen).queue, start("run-c1"))
      replay.push(resumed, delta("after"))
      replay.end(resumed, [], finish("tool-calls"), "paused", 0)
      const c1 = yield* replay.reattach("c1", 1_000_000)
      if (c1._tag !== "Replay") return expect.fail(c1._tag)
      expect((yield* text(c1.events)).match(/"delta":"\w+"/g)).toEqual([`"delta":"c1"`, `"delta":"after"`])
      // a third paused chat: c2, settled longest ago, is forgotten
      yield* pause("c3")
      expect((yield* replay.reattach("c2", 0))._tag).toBe("None")
      expect((yield* replay.reattach("c1", 0))._tag).toBe("Replay")
      expect((yield* replay.reattach("c3", 0))._tag).toBe("Replay")
    }))
})
