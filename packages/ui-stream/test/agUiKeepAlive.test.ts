/**
 * The AG-UI event stream's keepalive: a comment (`: keepalive`, which SSE clients ignore) every
 * `AgUi.keepAliveMillis` while the stream is open, between its events, and none once it ended —
 * and `@ag-ui/client`'s own reader of an event stream skips it.
 */
import { type BaseEvent, runHttpRequest, transformHttpEventStream } from "@ag-ui/client"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Fiber, Queue, Stream } from "effect"
import { TestClock } from "effect/testing"
import { keepingAlive } from "../src/internal/agUi/keepAlive.js"
import { AgUi, AgUiEvent } from "../src/index.js"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

describe("AG-UI keepalive", () => {
  it.effect("a comment every 15 seconds while the stream is open, between its events; the stream ends with its events", () =>
    Effect.gen(function*() {
      const events = yield* Queue.unbounded<Uint8Array, Cause.Done>()
      const sent: Array<string> = []
      const fiber = yield* Stream.fromQueue(events).pipe(
        keepingAlive(AgUi.keepAliveMillis),
        Stream.runForEach((bytes) => Effect.sync(() => sent.push(decoder.decode(bytes)))),
        Effect.forkChild
      )
      yield* TestClock.adjust("14 seconds")
      yield* Queue.offer(events, encoder.encode("data: {\"type\":\"RUN_STARTED\"}\n\n"))
      yield* TestClock.adjust("1 second")
      expect(sent).toEqual(["data: {\"type\":\"RUN_STARTED\"}\n\n", ": keepalive\n\n"])
      yield* TestClock.adjust("14 seconds")
      expect(sent).toHaveLength(2)
      yield* TestClock.adjust("1 second")
      expect(sent).toHaveLength(3)
      yield* Queue.end(events)
      yield* Fiber.join(fiber)
      yield* TestClock.adjust("1 minute")
      expect(sent).toEqual(["data: {\"type\":\"RUN_STARTED\"}\n\n", ": keepalive\n\n", ": keepalive\n\n"])
    }))

  it("HttpAgent's reader skips the comment: the events around it arrive as they were sent", async () => {
    const sent = [
      AgUiEvent.toEvent({ type: "RUN_STARTED", threadId: "t", runId: "r" }),
      AgUiEvent.keepAlive,
      AgUiEvent.toEvent({ type: "RUN_FINISHED", threadId: "t", runId: "r", outcome: { type: "success" } })
    ]
    const body = new Blob(sent.map((bytes) => new Uint8Array(bytes))).stream()
    const response = new Response(body, { headers: { "content-type": "text/event-stream" } })
    const received = await new Promise<Array<BaseEvent>>((resolve, reject) => {
      const events: Array<BaseEvent> = []
      transformHttpEventStream(runHttpRequest(() => Promise.resolve(response))).subscribe({
        next: (event) => void events.push(event),
        error: reject,
        complete: () => resolve(events)
      })
    })
    expect(received).toEqual([
      { type: "RUN_STARTED", threadId: "t", runId: "r" },
      { type: "RUN_FINISHED", threadId: "t", runId: "r", outcome: { type: "success" } }
    ])
  })
})
