/**
 * A thread's entries as `useChat`'s messages (`UiMessage`): a user message each, and each turn one
 * assistant message, its parts as the live stream builds them — a `step-start` per step, its text,
 * then each call's tool part followed by the files its tool returned.
 */
import { Message, Part } from "@agentfx/core"
import type * as UiMessage from "../UiMessage.js"
import type * as Thread from "./thread.js"

/** A message of the thread, at its position in the conversation. */
export interface Item {
  readonly at: number
  readonly message: UiMessage.UiMessage
}

const fileOf = (file: Part.FilePart): UiMessage.Part => ({
  type: "file",
  mediaType: file.mediaType,
  url: Part.url(file),
  ...(file.name === undefined ? {} : { filename: file.name })
})

const userParts = (message: Message.UserMessage): Array<UiMessage.Part> =>
  Message.userParts(message).map((part) => part._tag === "Text" ? { type: "text", text: part.text } : fileOf(part))

const toolPart = ({ call, result, waiting }: Thread.Call): Array<UiMessage.Part> => {
  const part = { type: `tool-${call.name}` as const, toolCallId: call.id, input: call.args }
  if (waiting !== undefined) {
    return [{
      ...part,
      state: "approval-requested",
      ...(waiting.error === undefined ? {} : { errorText: waiting.error }),
      approval: { id: waiting.approvalId, ...(waiting.reason === undefined ? {} : { requestReason: waiting.reason }) }
    }]
  }
  if (result === undefined) return [{ ...part, state: "input-available" }]
  if (result.rejected !== undefined) {
    // the pause it answered is over: the approval names the call
    const { reason } = result.rejected
    return [{ ...part, state: "output-denied", approval: { id: call.id, approved: false, ...(reason === undefined ? {} : { reason }) } }]
  }
  const ended: UiMessage.Part = result.isError
    ? { ...part, state: "output-error", errorText: typeof result.content === "string" ? result.content : JSON.stringify(result.content) }
    : { ...part, state: "output-available", output: result.content }
  return [ended, ...(result.files ?? []).map(fileOf)]
}

const stepParts = (step: Thread.Step): Array<UiMessage.Part> => [
  { type: "step-start" },
  ...(step.text.length === 0 ? [] : [{ type: "text", text: step.text, state: "done" } as const]),
  ...(step.files ?? []).map(fileOf),
  ...step.calls.flatMap(toolPart)
]

/** The thread's messages, oldest first. */
export const items = (thread: Thread.Thread): Array<Item> =>
  thread.entries.map((entry): Item =>
    entry._tag === "User"
      ? { at: entry.at, message: { id: `msg-${entry.at}`, role: "user", parts: userParts(entry.message) } }
      : { at: entry.at, message: { id: entry.runId ?? `msg-${entry.at}`, role: "assistant", parts: entry.steps.flatMap(stepParts) } }
  )
