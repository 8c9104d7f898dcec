/**
 * Keeping a conversation under a token limit: an agent's context policy (`Agent.make({ context
 * })`, or a run's own) decides, before each model call, whether the conversation still fits
 * and, when it does not, leaves its oldest messages out (`trim`) or has them summarized by a
 * model call (`summarize`). The history keeps every message — in `ChatMemory` and in the run's
 * record — with a `Compaction` entry where a compaction was made, which says which messages
 * its summary (or a note that they were left out) replaces: what the model was sent is
 * {@link view} of the history, wherever and whenever it is read — a resume, a recovery in
 * another process, an audit (docs/context.md; decisions 015–017).
 *
 * @since 0.2.0
 */
import type { Effect } from "effect"
import type { ChatModel, ModelMessage, ToolDefinition } from "./ChatModel.js"
import * as View from "./internal/contextView.js"
import type { Message } from "./Message.js"

/**
 * The conversation as it is, every message sent (the default).
 *
 * @since 0.2.0
 * @category models
 */
export interface Full {
  readonly _tag: "Full"
}

/**
 * When a model call would pass `maxTokens` (estimated: {@link estimateTokens}), its oldest
 * messages are left out, a whole group at a time, until it fits.
 *
 * @since 0.2.0
 * @category models
 */
export interface Trim {
  readonly _tag: "Trim"
  readonly maxTokens: number
}

/**
 * When a model call would pass `maxTokens`, its older messages are replaced by a summary that
 * a model call writes (with `model`, else the run's own model), keeping at least the last
 * `keepLast` messages as they are.
 *
 * @since 0.2.0
 * @category models
 */
export interface Summarize<R = never> {
  readonly _tag: "Summarize"
  readonly maxTokens: number
  readonly keepLast: number
  /** The system prompt of the summary call. */
  readonly instructions: string
  /** The model that writes the summary — a `Context.Service` key of a `ChatModel` service, read from the run's context; absent: the run's `ChatModel`. */
  readonly model?: Effect.Effect<ChatModel.Service, never, R> | undefined
}

/**
 * A context policy. `R`: what its summary model requires (the `Context.Service` key's service), when it names one.
 *
 * @since 0.2.0
 * @category models
 */
export type Policy<R = never> = Full | Trim | Summarize<R>

/**
 * The default: every model call is sent the whole conversation (or the view a compaction
 * entry made earlier leaves: see {@link view}).
 *
 * @example
 * ```ts
 * import { Agent, ContextWindow } from "@agentfx/core"
 *
 * const agent = Agent.make({ context: ContextWindow.full })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const full: Full = { _tag: "Full" }

/**
 * Leaves out the oldest messages of a model call that would pass `maxTokens`: whole groups —
 * a message with the tool results after it (an assistant message's calls never lose their
 * results), never the last group — until the estimate fits; the model is sent a short note
 * that the earlier part was left out, the last user message if it was cut, then the rest. No
 * model call is made. A model call whose
 * last group alone does not fit fails the run with `ContextOverflow`. `maxTokens` bounds the
 * whole input: system prompt, tool definitions and messages; leave the answer room below
 * the model's context window.
 *
 * @example
 * ```ts
 * import { Agent, ContextWindow } from "@agentfx/core"
 *
 * const agent = Agent.make({ context: ContextWindow.trim({ maxTokens: 100_000 }) })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const trim = (options: { readonly maxTokens: number }): Trim => ({ _tag: "Trim", maxTokens: options.maxTokens })

/**
 * The summary call's system prompt unless a policy gives its own `instructions`.
 *
 * @example
 * ```ts
 * import { ContextWindow } from "@agentfx/core"
 *
 * const mine = ContextWindow.summarize({ maxTokens: 50_000, instructions: `${ContextWindow.defaultInstructions} Keep every order number.` })
 * ```
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultInstructions =
  "You summarize a conversation between a user and an assistant that uses tools, so that the assistant can go on " +
  "without it. Keep every fact, name, number, decision and tool result that may still matter, what the user asked " +
  "for, what was done and what is still to do. Write the summary only, as plain text."

/**
 * Replaces the older messages of a model call that would pass `maxTokens` by a summary: the
 * last `keepLast` messages (default 10) stay as they are — with the whole group of the first of
 * them, so that a tool call keeps its results — and one model call (`model`: a `Context.Service` key of
 * a `ChatModel` service, which the agent then requires; else the run's `ChatModel`) summarizes
 * the rest and the previous summary, if any, into one. That call
 * is a model call of the run like any other: its `ModelCalled`/`ModelResponded` events
 * (`purpose: "compaction"`), its span, the agent's `model` middleware, its tokens and one
 * model call counted against the run's budget. When the kept messages alone do not fit, fewer
 * are kept (never fewer than the last group); when the summary and those do not fit, the run
 * fails with `ContextOverflow`; when the summary call fails, with `CompactionFailed`.
 *
 * @example
 * ```ts
 * import { Context } from "effect"
 * import { Agent, ChatModel, ContextWindow } from "@agentfx/core"
 *
 * class SummaryModel extends Context.Service<SummaryModel, ChatModel.ChatModel.Service>()("app/SummaryModel") {}
 *
 * // the agent requires SummaryModel: provide it, e.g. Layer.effect(SummaryModel, OpenAiChatModel.make(…))
 * const agent = Agent.make({ context: ContextWindow.summarize({ maxTokens: 100_000, keepLast: 8, model: SummaryModel }) })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const summarize = <R = never>(options: {
  readonly maxTokens: number
  readonly keepLast?: number | undefined
  readonly instructions?: string | undefined
  readonly model?: Effect.Effect<ChatModel.Service, never, R> | undefined
}): Summarize<R> => ({
  _tag: "Summarize",
  maxTokens: options.maxTokens,
  keepLast: options.keepLast ?? 10,
  instructions: options.instructions ?? defaultInstructions,
  ...(options.model === undefined ? {} : { model: options.model })
})

/**
 * What a model is sent of a history: after its last `Compaction` entry, a user message with the
 * entry's summary (or, trimmed, a note that the earlier part was left out), the conversation's
 * last user message when the cut left it out (the model never loses the question it answers),
 * then the messages from the entry's `replaces` on, compaction entries left out; without one,
 * the history as it is.
 * The loop sends exactly this: an audit of a record or a conversation reads what the model saw
 * with it.
 *
 * @example
 * ```ts
 * import { ContextWindow, Message } from "@agentfx/core"
 *
 * const sent = ContextWindow.view([
 *   Message.user("First question"),
 *   Message.assistant("First answer"),
 *   Message.user("Second question"),
 *   { _tag: "Compaction", replaces: 2, summary: "The user asked a first question, answered." }
 * ]) // [summary message, "Second question"]
 * ```
 *
 * @since 0.2.0
 * @category utils
 */
export const view: (history: ReadonlyArray<Message>) => Array<ModelMessage> = View.view

/**
 * The token estimate every policy uses: each message, and each tool definition and the output
 * format, counted as its JSON's UTF-8 bytes / 4 (rounded up), the system prompt as its bytes / 4.
 * About right for English text and code; under for scripts of more bytes per token (CJK: set
 * `maxTokens` lower). Once a model call of a run has reported its input tokens, the run's
 * estimates are scaled by how far that call's estimate was off (reported / estimated, held
 * between 0.25 and 4).
 *
 * @example
 * ```ts
 * import { ContextWindow, Message } from "@agentfx/core"
 *
 * ContextWindow.estimateTokens({ system: "Be brief.", messages: [Message.user("Weather in Oslo?")] })
 * ```
 *
 * @since 0.2.0
 * @category utils
 */
export const estimateTokens: (request: {
  readonly system?: string | undefined
  readonly messages: ReadonlyArray<Message>
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  readonly output?: object | undefined
}) => number = View.estimateTokens
