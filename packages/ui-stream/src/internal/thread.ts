/**
 * A conversation read back for a page that opens it again: its messages in the server's
 * `ChatMemory`, in the order they were written, grouped as a person saw them — each user message,
 * then the turn that answered it (a step per model call: its text, its tool calls each with its
 * result) — and, when the conversation's last turn paused, its pending calls from the run's
 * record (the authority), each with its approval id. Each protocol encodes these entries in its
 * own message shape (`threadUi.ts`, `agUi/thread.ts`); `at` is an entry's position in the
 * conversation, which the pages' cursors name (`page.ts`).
 */
import type { Agent, Message, Part, ToolCall as ToolCalls } from "@agentfx/core"
import { ChatMemory, ToolCall } from "@agentfx/core"
import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import type { InvalidRequest } from "../ChatApi.js"
import { Unavailable } from "../ChatApi.js"
import type { Authorize, Forbidden, Unauthorized } from "../ChatAuthorization.js"
import * as Approval from "./approval.js"
import * as Page from "./page.js"
import * as Pause from "./pause.js"
import { authorized } from "./refusals.js"
import type * as Replay from "./replay.js"

/** What a call came to, as the model was shown it. */
export interface Result {
  /** Its position in the conversation; past its end for a result the paused run's record holds (an environment pause's failures). */
  readonly at: number
  readonly isError: boolean
  readonly content: Message.ToolResultMessage["content"]
  readonly files: ReadonlyArray<Part.FilePart> | undefined
  /** Set when the call was rejected (by a person, or a gate): what the model was told, `rejected: <reason>`. */
  readonly rejected: { readonly reason: string | undefined } | undefined
}

/** A call that waits for a person: its approval id (the id its answer names), and why. */
export interface Waiting {
  readonly approvalId: string
  /** Why the gate asked, for an approval pause. */
  readonly reason: string | undefined
  /** The call's failure, for an environment pause. */
  readonly error: string | undefined
}

export interface Call {
  readonly call: ToolCalls.ToolCall
  readonly result: Result | undefined
  readonly waiting: Waiting | undefined
}

/** A model call of a turn: its text and the calls it asked for, as far as they went. */
export interface Step {
  readonly at: number
  /** The step's number in its run (the run's iteration), from 1. */
  readonly iteration: number
  readonly text: string
  readonly files: ReadonlyArray<Part.FilePart> | undefined
  readonly calls: ReadonlyArray<Call>
}

export type Entry =
  | { readonly _tag: "User"; readonly at: number; readonly message: Message.UserMessage }
  | {
    readonly _tag: "Turn"
    readonly at: number
    /** The run that answered, when known: the conversation's paused run, or the last one this process ran. */
    readonly runId: string | undefined
    readonly steps: ReadonlyArray<Step>
  }

export interface Thread {
  readonly entries: ReadonlyArray<Entry>
  /** The paused run of the last turn, if it waits: its pending calls are its last step's waiting calls. */
  readonly pause: Pause.Pause | undefined
  /** One past the last position an entry can have: the largest cursor a page can be asked from. */
  readonly end: number
}

const rejectedReason = (result: Message.ToolResultMessage): Result["rejected"] => {
  // core's words for a rejected call (`ToolCall.modelContent`); a failure's start with its class ("semantic error: …")
  if (!result.isError || typeof result.content !== "string") return undefined
  if (result.content === "rejected") return { reason: undefined }
  return result.content.startsWith("rejected: ") ? { reason: result.content.slice("rejected: ".length) } : undefined
}

const resultOf = (at: number, message: Message.ToolResultMessage): Result => ({
  at,
  isError: message.isError,
  content: message.content,
  files: message.files,
  rejected: rejectedReason(message)
})

/**
 * The last step of a paused turn, as the pause shows it: its calls in order — those its batch
 * finished with their results (the record's, else the conversation's), those that wait with
 * their approval ids — and a paused sub-agent's waiting calls after them. A call that is to run
 * on resume, and so has neither, is left out, as the live stream leaves it out until it starts.
 */
const pausedStep = (step: Step, pause: Pause.Pause, end: number): Step => {
  const { checkpoint } = pause
  const waiting = new Map(pause.pending.map((pending) => [pending.call.id, pending]))
  const batch = new Map(checkpoint.batch.map((item) => [item.call.id, item]))
  const placed = new Set<string>()
  let past = end
  const waitingOf = (pending: Pause.Pending): Waiting => ({
    approvalId: Approval.format({ runId: pause.runId, revision: pause.revision, callId: pending.call.id }),
    reason: checkpoint.kind === "approval" ? pending.why : undefined,
    error: pending.error?.message
  })
  const calls: Array<Call> = []
  for (const { call, result } of step.calls) {
    const outcome = batch.get(call.id)?.outcome
    const pending = waiting.get(call.id)
    // what the batch finished is in the record (an environment pause's failures are not in the conversation yet)
    const finished = outcome === undefined || outcome._tag === "Suspended" ? undefined : outcome
    const recorded = result ??
      (finished === undefined ? undefined : resultOf(past++, { _tag: "ToolResult", ...ToolCall.modelContent(finished), callId: call.id, toolName: call.name }))
    if (pending === undefined && recorded === undefined) continue
    placed.add(call.id)
    calls.push({ call, result: recorded, waiting: pending === undefined ? undefined : waitingOf(pending) })
  }
  for (const pending of pause.pending) {
    if (!placed.has(pending.call.id)) calls.push({ call: pending.call, result: undefined, waiting: waitingOf(pending) })
  }
  return { ...step, calls }
}

/**
 * The entries of a conversation's messages: a user message each; the messages after it, up to
 * the next, one turn (its assistant messages its steps, each call with the result the
 * conversation has for it). System and compaction messages are the model's, not the thread's.
 */
export const entriesOf = (messages: ReadonlyArray<Message.Message>): Array<Entry> => {
  const entries: Array<Entry> = []
  const results = new Map<string, Array<{ readonly at: number; readonly message: Message.ToolResultMessage }>>()
  messages.forEach((message, at) => {
    if (message._tag !== "ToolResult") return
    const found = results.get(message.callId)
    if (found === undefined) results.set(message.callId, [{ at, message }])
    else found.push({ at, message })
  })
  let turn: { at: number; steps: Array<Step> } | undefined
  const close = () => {
    if (turn !== undefined) entries.push({ _tag: "Turn", at: turn.at, runId: undefined, steps: turn.steps })
    turn = undefined
  }
  messages.forEach((message, at) => {
    switch (message._tag) {
      case "User":
        close()
        entries.push({ _tag: "User", at, message })
        return
      case "Assistant": {
        turn ??= { at, steps: [] }
        const calls = message.toolCalls.map((call): Call => {
          // a call id may repeat in a conversation: its result is the first one written after its call
          const result = results.get(call.id)?.find((found) => found.at > at)
          return { call, result: result === undefined ? undefined : resultOf(result.at, result.message), waiting: undefined }
        })
        turn.steps.push({ at, iteration: turn.steps.length + 1, text: message.text, files: message.files, calls })
        return
      }
      case "ToolResult":
      case "System":
      case "Compaction":
        return
    }
  })
  close()
  return entries
}

/**
 * The thread of conversation `chatId`: its messages from `ChatMemory`, its pause from the run
 * store when its last turn waits, and the id of its last turn's run when known — the paused
 * run's, or that of the last message this process ran for it (`last`), as a reattach names it.
 */
export const read = (agent: Agent.Any, chatId: string, replay: Pick<Replay.Replay, "last">): Effect.Effect<Thread, Unavailable> =>
  Effect.gen(function*() {
    const memory = yield* ChatMemory.ChatMemory
    const messages = yield* memory.get(chatId).pipe(Effect.mapError((error) => new Unavailable({ message: error.message })))
    const found = yield* Pause.current(agent, chatId)
    // a pause is the last turn's while nothing was written after it (a new turn supersedes it once its input is written);
    // a run stopped by its limits (max-iterations, budget) waits for no person's answer
    const waits = found !== undefined && (found.checkpoint.kind === "approval" || found.checkpoint.kind === "environment")
    const pause = waits && found.checkpoint.messages.length === messages.length ? found : undefined
    const entries = entriesOf(messages)
    const last = entries.at(-1)
    let end = messages.length
    if (last?._tag === "Turn") {
      const runId = pause?.runId ?? replay.last(chatId)
      const steps = pause === undefined || last.steps.length === 0
        ? last.steps
        : [...last.steps.slice(0, -1), pausedStep(last.steps.at(-1)!, pause, messages.length)]
      for (const step of steps) for (const { result } of step.calls) if (result !== undefined && result.at >= end) end = result.at + 1
      entries[entries.length - 1] = { ...last, runId, steps }
    }
    return { entries, pause, end }
  })

/** What a page read is given: the endpoint's agent, hook and replay buffer, the request and its query, and how the protocol shows a thread. */
export interface Read<A> {
  readonly agent: Agent.Any
  readonly authorize: Authorize
  readonly replay: Pick<Replay.Replay, "last">
  readonly request: HttpServerRequest.HttpServerRequest
  readonly chatId: string
  readonly query: { readonly before?: string | undefined; readonly limit?: string | undefined }
  readonly bounds: Page.Bounds
  /** What the endpoint calls a conversation: `chat`, `thread`. */
  readonly noun: string
  /** The thread's messages in the protocol's shape, oldest first. */
  readonly items: (thread: Thread) => ReadonlyArray<A>
}

/**
 * A page of a thread, read as every request is: its query checked (400 whoever asks), then the
 * hook asked (`read`), then the thread read and paged — the thread, and the page of its items.
 */
export const readPage = <A extends { readonly at: number }>(
  options: Read<A>
): Effect.Effect<{ readonly thread: Thread; readonly page: Page.Page<A> }, InvalidRequest | Unauthorized | Forbidden | Unavailable> =>
  Effect.gen(function*() {
    const { agent, bounds, chatId, noun } = options
    const query = yield* Effect.fromResult(Page.query(chatId, options.query, bounds, noun))
    yield* authorized(options.authorize, options.request, { action: "read", chatId })
    const thread = yield* read(agent, chatId, options.replay)
    const page = yield* Effect.fromResult(Page.page(chatId, options.items(thread), thread.end, query, noun))
    return { thread, page }
  })
