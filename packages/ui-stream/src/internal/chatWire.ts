/**
 * The UI message stream's encoding of a segment of a chat's message: `start` first, once per
 * message (its id the run's: one assistant message per run, across its pauses), then the
 * chunks of the run's events (`translate.ts`), and `finish` and `[DONE]` where the segment ends
 * — replayed only at the end of the whole message, which goes on after a pause. A run a newer
 * message cancelled ends with a `data-interrupted` part and `finish` (`other`), not an error: the
 * person sent the message that cancelled it.
 */
import * as UiChunk from "../UiChunk.js"
import type * as Runner from "./runner.js"
import * as Translate from "./translate.js"

const encode = (chunks: ReadonlyArray<UiChunk.UiChunk>) => chunks.map(UiChunk.toEvent)

const ending = (finishReason: UiChunk.FinishReason) => [UiChunk.toEvent({ type: "finish", finishReason }), UiChunk.done]

/** The wire of a segment that says `prelude` first (a resume: the calls its decision denies). */
export const make = (prelude: ReadonlyArray<UiChunk.UiChunk>) => (runId: string): Runner.Wire => {
  const translator = Translate.make(runId)
  return {
    head: [UiChunk.toEvent({ type: "start", messageId: runId })],
    opening: encode(prelude),
    event: (event) => {
      const events = encode(translator.event(event))
      if (event.runId !== runId || (event._tag !== "RunPaused" && event._tag !== "RunCompleted" && event._tag !== "RunEnded")) return { events }
      return event._tag === "RunPaused"
        ? { events, end: { status: "paused", ending: ending("tool-calls") } }
        : { events, end: { status: "ended", ending: ending("stop") } }
    },
    failed: ({ interrupted, message }) =>
      interrupted === undefined
        ? { events: encode([...translator.failed(), { type: "error", errorText: message }]), ending: ending("error") }
        : {
          events: encode([...translator.failed(), {
            type: "data-interrupted",
            data: { runId: interrupted.runId, by: interrupted.by, rolledBack: interrupted.rolledBack, message }
          }]),
          ending: ending("other")
        }
  }
}
