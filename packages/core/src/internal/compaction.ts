/**
 * The context step of an iteration: the messages its model call is sent, under the run's
 * context policy — the conversation compacted first when it would not fit (`ContextWindow`;
 * decisions 015–017). A compaction is a `Compaction` entry appended to the history (and to
 * memory, like any message), so that the view the model was sent is read back from the history
 * wherever the run goes on.
 */
import * as Effect from "effect/Effect"
import type * as Agent from "../Agent.js"
import { CompactionFailed, ContextOverflow } from "../AgentError.js"
import type { ChatModel, ChatRequest, ModelMessage, Usage } from "../ChatModel.js"
import type { MemoryError } from "../ChatMemory.js"
import type * as ContextWindow from "../ContextWindow.js"
import type { CompactionMessage, Message } from "../Message.js"
import { user } from "../Message.js"
import { describe, type FilePart } from "../Part.js"
import * as View from "./contextView.js"
import { emit } from "./events.js"
import type { RunState } from "./runState.js"
import { appendMessages, spend } from "./runState.js"
import { annotate, withModelAttributes, withSpan } from "./tracing.js"

type Window = ReadonlyArray<ModelMessage>

type Compacting = ContextWindow.Trim | ContextWindow.Summarize<any>

const fixedByAgent = new WeakMap<Agent.Any, number>()

/** Tokens of what every model call of the agent sends besides its messages: its system prompt, tools and output format. */
export const fixedOf = (agent: Agent.Any): number => {
  let tokens = fixedByAgent.get(agent)
  if (tokens === undefined) {
    tokens = View.fixedTokens({ system: agent.system, tools: agent.toolDefinitions, output: agent.output?.format })
    fixedByAgent.set(agent, tokens)
  }
  return tokens
}

/** An estimate, in the run's scale (see {@link calibrate}). */
const scaled = (run: RunState, tokens: number) => Math.ceil(tokens * run.tokenScale)

/**
 * The messages the iteration's model call is sent: the view of the history (`ContextWindow.view`)
 * and, under a policy whose `maxTokens` it would pass, the view once compacted. A value when
 * nothing is to be done; the compaction's effect otherwise.
 */
export const windowOf = (
  agent: Agent.Any,
  run: RunState
): Window | Effect.Effect<Window, ContextOverflow | CompactionFailed | MemoryError, any> => {
  if (run.compacted === undefined) run.compacted = View.lastCompaction(run.history)
  const messages = View.viewAt(run.history, run.compacted)
  const policy = run.runContext ?? agent.context
  if (policy._tag === "Full") return messages
  run.estimated = fixedOf(agent) + View.rangeTokens(messages, 0)
  const tokens = scaled(run, run.estimated)
  return tokens <= policy.maxTokens ? messages : compact(agent, run, policy, tokens)
}

/**
 * Scales the run's estimates by how far the estimate of the model call that answered with
 * `usage` was off, when it reported its input tokens: held between 1 and 4. Never below 1: a
 * model that reports fewer tokens than estimated (a thriftier tokenizer, or a server that
 * under-reports) does not widen the view past `maxTokens` by agentfx's own estimate.
 */
export const calibrate = (run: RunState, usage: Usage): void => {
  if (run.estimated > 0 && Number.isFinite(usage.inputTokens) && usage.inputTokens > 0) {
    run.tokenScale = Math.min(4, Math.max(1, usage.inputTokens / run.estimated))
  }
}

/**
 * Compacts the conversation: a cut between groups (a message and the tool results after it)
 * chosen by the policy, its entry appended, its view returned. The cut starts from the current
 * view's first kept message: an earlier summary is summarized again, or left out by a trim.
 */
const compact = (agent: Agent.Any, run: RunState, policy: Compacting, before: number) =>
  withSpan(run.traced, "agentfx.context", () => ({
    "agentfx.context.policy": policy._tag === "Trim" ? "trim" : "summarize",
    "agentfx.context.max_tokens": policy.maxTokens,
    "agentfx.context.tokens_before": before
  }))(Effect.gen(function*() {
    const history = run.history
    const at = run.compacted!
    const start = at < 0 ? 0 : View.keptFrom(history, at)
    const starts = View.groupStarts(history, start)
    const question = View.lastUser(history)
    // the last user message is sent again when the cut at the k-th group leaves it out
    const pinned = (k: number) => question >= 0 && question < (starts[k] ?? history.length)
    // what every view sends besides its kept messages and its lead: the fixed part, and the pinned question
    const besides = (k: number) => fixedOf(agent) + (pinned(k) ? View.messageTokens(history[question]!) : 0)
    // kept[k]: the tokens of the messages from the k-th group on
    const kept = new Array<number>(starts.length + 1).fill(0)
    for (let k = starts.length - 1; k >= 0; k--) kept[k] = kept[k + 1]! + View.rangeTokens(history, starts[k]!, starts[k + 1])
    const fits = (k: number, lead: number) => scaled(run, besides(k) + lead + kept[k]!) <= policy.maxTokens
    const overflow = (tokens: number, detail: string) =>
      Effect.fail(new ContextOverflow({ maxTokens: policy.maxTokens, tokens: scaled(run, tokens), detail }))
    const last = starts.length - 1
    /** What a view cut at the k-th group sends besides its lead, in words. */
    const sent = (k: number) =>
      `${plural(messagesFrom(history, starts[k] ?? start), "message")} with the system prompt and tool definitions${
        pinned(k) ? ", and the last user message" : ""
      }`
    let entry: CompactionMessage
    if (policy._tag === "Trim") {
      const note = View.messageTokens(user(View.trimmedNote))
      // a cut at the first group keeps every message: it leaves out an earlier summary only
      let k = 0
      while (k <= last && !fits(k, note)) k++
      if (k > last) return yield* overflow(besides(last) + note + kept[Math.max(last, 0)]!, `the last ${sent(last)}`)
      entry = { _tag: "Compaction", replaces: starts[k]! }
    } else {
      if (last < 1) return yield* overflow(run.estimated, `the last ${sent(last)}: nothing older to summarize`)
      let k = keptGroup(history, start, starts, policy.keepLast)
      // fewer kept when those alone do not fit, never fewer than the last group
      while (k < last && !fits(k, 0)) k++
      const previous = at < 0 ? undefined : (history[at] as CompactionMessage).summary
      const summary = yield* summaryOf(run, policy, previous, history.slice(start, starts[k]))
      entry = { _tag: "Compaction", replaces: starts[k]!, summary }
      const lead = View.messageTokens(View.leadOf(entry))
      if (!fits(k, lead)) return yield* overflow(besides(k) + lead + kept[k]!, `the summary and the last ${sent(k)}`)
    }
    run.compacted = history.length
    yield* appendMessages(run, [entry])
    const messages = View.viewAt(run.history, run.compacted)
    run.estimated = fixedOf(agent) + View.rangeTokens(messages, 0)
    const after = scaled(run, run.estimated)
    yield* annotate(run.traced, () => ({ "agentfx.context.tokens_after": after, "agentfx.context.replaces": entry.replaces }))
    yield* emit(run, () => ({
      _tag: "ContextCompacted",
      iteration: run.iteration,
      replaces: entry.replaces,
      summarized: entry.summary !== undefined,
      tokensBefore: before,
      tokensAfter: after
    }))
    return messages
  }))

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** How many messages the history has from `from` on (compaction entries are none). */
const messagesFrom = (history: ReadonlyArray<Message>, from: number) => {
  let n = 0
  for (let i = from; i < history.length; i++) if (history[i]!._tag !== "Compaction") n++
  return n
}

/**
 * The group a summary keeps from: the one that holds the `keepLast`-th message from the end
 * (so that at least `keepLast` are kept, a tool call with its results), and never the first —
 * something older must be summarized.
 */
const keptGroup = (history: ReadonlyArray<Message>, start: number, starts: ReadonlyArray<number>, keepLast: number) => {
  let first = history.length
  for (let count = 0; first > start && count < keepLast;) if (history[--first]!._tag !== "Compaction") count++
  let k = 0
  while (k + 1 < starts.length && starts[k + 1]! <= first) k++
  return Math.max(k, 1)
}

/**
 * The summary call: the previous summary and the replaced messages as one transcript, sent to
 * the policy's model (else the run's) as a model call of the run — observed like one (`purpose:
 * "compaction"`), counted and spent against its budget. A failure or an empty answer is
 * `CompactionFailed`.
 */
const summaryOf = Effect.fnUntraced(function*(
  run: RunState,
  policy: ContextWindow.Summarize<any>,
  previous: string | undefined,
  replaced: ReadonlyArray<Message>
) {
  const model: ChatModel.Service = policy.model === undefined ? run.model : yield* policy.model
  const request: ChatRequest = {
    system: policy.instructions,
    messages: [user(transcript(previous, replaced))],
    tools: [],
    toolChoice: "none",
    runId: run.runId
  }
  run.modelCalls += 1
  const response = yield* run.observe.model(
    { runId: run.runId, conversationId: run.conversationId, iteration: run.iteration, request, purpose: "compaction" },
    (input) => withModelAttributes(run.traced, model, model.generate(input.request))
  ).pipe(Effect.mapError((error) => new CompactionFailed({ reason: "model", error })))
  spend(run, response.usage)
  const summary = response.text.trim()
  if (summary.length === 0) return yield* new CompactionFailed({ reason: "empty" })
  return summary
})

/** The messages a summary replaces, as the text the summary call is sent. */
const transcript = (previous: string | undefined, messages: ReadonlyArray<Message>): string => {
  const lines = previous === undefined ? [] : ["<previous-summary>", previous, "</previous-summary>"]
  lines.push("<conversation>")
  for (const message of messages) if (message._tag !== "Compaction") lines.push(lineOf(message))
  lines.push("</conversation>")
  return lines.join("\n")
}

/** The files of a message, named after its text: the summary is written from text, and the files are not sent to it. */
const filesLine = (files: ReadonlyArray<FilePart> | undefined): string =>
  files === undefined || files.length === 0 ? "" : ` [with ${files.map(describe).join(", ")}]`

const lineOf = (message: Message): string => {
  switch (message._tag) {
    case "User":
      return `[user] ${message.text}${filesLine(message.parts?.filter((part) => part._tag === "File"))}`
    case "System":
      return `[system] ${message.text}`
    case "Assistant":
      return [
        ...(message.text.length > 0 || message.files !== undefined ? [`[assistant]${message.text.length > 0 ? ` ${message.text}` : ""}${filesLine(message.files)}`] : []),
        ...message.toolCalls.map((call) => `[assistant calls ${call.name} (${call.id})] ${JSON.stringify(call.args)}`)
      ].join("\n")
    case "ToolResult":
      return `[${message.isError ? "error of" : "result of"} ${message.toolName} (${message.callId})] ${
        typeof message.content === "string" ? message.content : JSON.stringify(message.content)
      }${filesLine(message.files)}`
    default:
      return `[${message._tag}] ${JSON.stringify(message)}`
  }
}
