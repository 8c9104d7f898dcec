/**
 * What both peers' scripted models share, whichever SDK shapes their prompts: what they read
 * from the prompt (the tool results since the model last answered, the run's input: C's run
 * id), and how a run of A or B counts and time-stamps its model calls.
 */
import { nowUs } from "../measure.js"

/** A prompt's message as both SDKs shape it: a role, and a string or parts that each have a type. */
interface Message {
  readonly role: string
  readonly content: string | ReadonlyArray<{ readonly type: string }>
}

/**
 * The tool results after the last assistant message — the trailing `tool` messages, each read by
 * `resultsOf` — or `undefined` when the last message is not a tool's (the model has not called
 * tools yet).
 */
export const trailingResults = <M extends Message>(messages: ReadonlyArray<M>, resultsOf: (message: M) => ReadonlyArray<number>): Array<number> | undefined => {
  let first = messages.length
  while (first > 0 && messages[first - 1]!.role === "tool") first--
  return first === messages.length ? undefined : messages.slice(first).flatMap(resultsOf)
}

/** The text of the first user message's first part: the run's input. */
export const inputOf = (messages: ReadonlyArray<Message>): string => {
  const first = messages[0]
  const part = first?.role === "user" && typeof first.content !== "string" ? first.content[0] : undefined
  return part !== undefined && part.type === "text" && "text" in part ? String(part.text) : ""
}

/** The current run's counts (A, B): model calls (counted in the model), handler calls (in the tools). */
export interface Counts {
  model: number
  tool: number
}

/**
 * A run of A or B begins: its counts reset, and the model's answer to a prompt — each call
 * time-stamped and counted, then answered from the prompt's last tool results.
 */
export const timedAnswers = <P, R>(
  counts: Counts,
  stamps: Array<number>,
  resultsOf: (prompt: P) => Array<number> | undefined,
  answer: (results: Array<number> | undefined) => R
) => {
  counts.model = 0
  counts.tool = 0
  return (prompt: P): R => {
    stamps.push(nowUs())
    counts.model++
    return answer(resultsOf(prompt))
  }
}
