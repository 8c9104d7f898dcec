/**
 * A run's events as the chunks of its assistant message. Each model call is a step (a context
 * policy's summary call is none); its text a text part; each tool call that a gate let through a tool part, from its start to its
 * result, and the files it returned as file parts. A pause closes the step with one approval request per pending call. Events of a
 * sub-agent's run (another run id) are not the message's: its call's result is. Events that a
 * driver lost are a `data-events-lost` part, where they would have been.
 */
import type { AgentExit } from "@agentfx/core"
import { Part } from "@agentfx/core"
import type { Driven } from "../ChatDriver.js"
import * as Approval from "./approval.js"
import type { UiChunk } from "../UiChunk.js"

export interface Translator {
  /** The chunks of one event of the run (none for another run's), or of what stands for events lost. */
  readonly event: (event: Driven) => ReadonlyArray<UiChunk>
  /** The chunks that close what is open when the run fails. */
  readonly failed: () => ReadonlyArray<UiChunk>
}

/** A translator for the events of run `runId`. */
export const make = (runId: string): Translator => {
  let step = false
  let text: string | undefined
  /** The calls of this step that started (and so were announced). */
  const announced = new Set<string>()

  const closeText = (): Array<UiChunk> => {
    if (text === undefined) return []
    const id = text
    text = undefined
    return [{ type: "text-end", id }]
  }
  const closeStep = (): Array<UiChunk> => {
    const chunks = closeText()
    if (step) chunks.push({ type: "finish-step" })
    step = false
    return chunks
  }
  const paused = (exit: AgentExit.Paused): Array<UiChunk> => {
    const chunks = closeText()
    for (const { call, why } of exit.pending) {
      if (!announced.has(call.id)) chunks.push({ type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.args })
      chunks.push({
        type: "tool-approval-request",
        toolCallId: call.id,
        approvalId: Approval.format({ runId, revision: exit.checkpoint.revision, callId: call.id }),
        // why the gate asked (an environment pause's calls carry their failure instead)
        ...(exit.kind === "approval" && why !== undefined ? { reason: why } : {})
      })
    }
    return [...chunks, ...closeStep()]
  }

  const event = (event: Driven): ReadonlyArray<UiChunk> => {
    if (event.runId !== runId) return []
    switch (event._tag) {
      case "ModelCalled": {
        // a context policy's summary call is no step of the answer
        if (event.purpose === "compaction") return []
        const chunks = closeStep()
        step = true
        announced.clear() // call ids may repeat across model calls: each step announces its own
        chunks.push({ type: "start-step" })
        return chunks
      }
      case "TextDelta": {
        if (text !== undefined) return [{ type: "text-delta", id: text, delta: event.text }]
        text = `text-${event.iteration}`
        return [{ type: "text-start", id: text }, { type: "text-delta", id: text, delta: event.text }]
      }
      case "ModelResponded": {
        if (event.purpose === "compaction") return []
        const chunks = closeText()
        if (event.reasoning !== undefined) {
          const id = `reasoning-${event.iteration}`
          chunks.push({ type: "reasoning-start", id }, { type: "reasoning-delta", id, delta: event.reasoning }, { type: "reasoning-end", id })
        }
        return chunks
      }
      case "ToolStarted":
        announced.add(event.callId)
        return [{ type: "tool-input-available", toolCallId: event.callId, toolName: event.toolName, input: event.args }]
      case "ToolSucceeded":
        return [
          { type: "tool-output-available", toolCallId: event.callId, output: event.value },
          ...(event.files ?? []).map((file): UiChunk => ({
            type: "file",
            url: Part.url(file),
            mediaType: file.mediaType
          }))
        ]
      case "ToolFailed":
        return [{ type: "tool-output-error", toolCallId: event.callId, errorText: event.error.message }]
      case "ToolTimedOut":
        return [{ type: "tool-output-error", toolCallId: event.callId, errorText: `timed out after ${event.timeoutMillis} ms` }]
      case "RunPaused":
        return paused(event.exit)
      case "EventsLost":
        // the text cut off is ended where it stopped; the lost events are told in the message
        return [...closeText(), { type: "data-events-lost", data: { runId: event.runId, message: event.message } }]
      case "RunCompleted":
      case "RunEnded":
        return closeStep()
      case "RunStarted":
      case "RunResumed":
      case "ContextCompacted":
      case "BatchTruncated":
        return []
    }
  }

  return { event, failed: closeStep }
}
