/**
 * A thread's entries as AG-UI's messages, as the live events build them: a user message each; per
 * step an assistant message (its text, if any, and its tool calls, if any), then a tool message per
 * call that has a result. Ids are the live events' for the turn whose run is known
 * (`<run id>-<step>`, `<run id>-result-<call id>`), else positions (`msg-<position>`). A paused
 * turn's pending calls are the thread's interrupts, as its `RUN_FINISHED` gave them.
 */
import type { Agent } from "@agentfx/core"
import { Message as Messages } from "@agentfx/core"
import type { Interrupt } from "../../AgUiEvent.js"
import type { Message } from "../../AgUiMessage.js"
import type * as Thread from "../thread.js"
import { contentOf, filePart, interruptOf } from "./wire.js"

/** A message of the thread, at its position in the conversation. */
export interface Item {
  readonly at: number
  readonly message: Message
}

const positional = (at: number) => `msg-${at}`

const userOf = (at: number, message: Messages.UserMessage): Message => {
  const parts = Messages.userParts(message)
  return {
    id: positional(at),
    role: "user",
    content: parts.every((part) => part._tag === "Text")
      ? message.text
      : parts.map((part) => part._tag === "Text" ? { type: "text", text: part.text } : filePart(part))
  }
}

const turnOf = (runId: string | undefined, steps: ReadonlyArray<Thread.Step>): Array<Item> =>
  steps.flatMap((step) => {
    const calls = step.calls.map(({ call }) => ({ id: call.id, type: "function" as const, function: { name: call.name, arguments: JSON.stringify(call.args) } }))
    const assistant: Item = {
      at: step.at,
      message: {
        id: runId === undefined ? positional(step.at) : `${runId}-${step.iteration}`,
        role: "assistant",
        ...(step.text.length === 0 ? {} : { content: step.text }),
        ...(calls.length === 0 ? {} : { toolCalls: calls })
      }
    }
    const results = step.calls.flatMap(({ call, result }): Array<Item> =>
      result === undefined ? [] : [{
        at: result.at,
        message: {
          id: runId === undefined ? positional(result.at) : `${runId}-result-${call.id}`,
          role: "tool",
          toolCallId: call.id,
          content: contentOf(result)
        }
      }]
    )
    return [assistant, ...results.sort((a, b) => a.at - b.at)]
  })

/** The thread's messages, oldest first. */
export const items = (thread: Thread.Thread): Array<Item> =>
  thread.entries.flatMap((entry) =>
    entry._tag === "User" ? [{ at: entry.at, message: userOf(entry.at, entry.message) }] : turnOf(entry.runId, entry.steps)
  )

/** The interrupts of the thread's pause, one per pending call, as the pause's `RUN_FINISHED` gave them; none when it does not wait. */
export const interrupts = (agent: Agent.Any, thread: Thread.Thread): Array<Interrupt> => {
  const { pause } = thread
  const kind = pause?.checkpoint.kind
  if (pause === undefined || (kind !== "approval" && kind !== "environment")) return []
  return pause.pending.map((pending) => interruptOf(agent, { runId: pause.runId, revision: pause.revision, kind }, pending))
}
