/**
 * What a model is sent of a history (its view) and what that is estimated to cost in tokens:
 * pure functions of the history, shared by `ContextWindow` (its face) and the loop's
 * compaction step (`compaction.ts`). Decisions 015 and 016.
 */
import type { ModelMessage, ToolDefinition } from "../ChatModel.js"
import type { CompactionMessage, Message } from "../Message.js"
import { user } from "../Message.js"
import { type FilePart, inlineBytes } from "../Part.js"

/** The note that stands first in a view whose older messages were left out (a trim). */
export const trimmedNote = "(The earlier part of this conversation was left out to fit the context window.)"

/** What stands before a summary in a view. */
export const summaryHeading = "Summary of the earlier part of this conversation, which it replaces:"

/** The user message a compaction entry puts first in the view: its summary, or the note that messages were left out. */
export const leadOf = (entry: CompactionMessage): ModelMessage =>
  user(entry.summary === undefined ? trimmedNote : `${summaryHeading}\n\n${entry.summary}`)

/** The index of the last compaction entry of `history`, or -1. */
export const lastCompaction = (history: ReadonlyArray<Message>): number => {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]!._tag === "Compaction") return i
  return -1
}

/**
 * Where the messages a compaction entry (at `at`) keeps begin: its `replaces`, no later than the
 * entry itself, past any tool result there — a result whose call was cut off is never sent. (The
 * loop cuts before a message that is not a tool result; a history written outside a turn may not.)
 */
export const keptFrom = (history: ReadonlyArray<Message>, at: number): number => {
  let from = Math.min((history[at] as CompactionMessage).replaces, at)
  while (from < history.length && (history[from]!._tag === "ToolResult" || history[from]!._tag === "Compaction")) from++
  return from
}

/** The index of the last user message of `history`, or -1. */
export const lastUser = (history: ReadonlyArray<Message>): number => {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]!._tag === "User") return i
  return -1
}

/**
 * The view of `history` whose last compaction entry is at `at` (-1: none, the history as it
 * is). The conversation's last user message is always sent: when the cut left it out, it
 * follows the lead (the model is never left without the question it is answering).
 */
export const viewAt = (history: ReadonlyArray<Message>, at: number): Array<ModelMessage> => {
  if (at < 0) return history.slice() as Array<ModelMessage>
  const from = keptFrom(history, at)
  const question = lastUser(history)
  const messages: Array<ModelMessage> = [leadOf(history[at] as CompactionMessage)]
  if (question >= 0 && question < from) messages.push(history[question] as ModelMessage)
  for (let i = from; i < history.length; i++) {
    const message = history[i]!
    if (message._tag !== "Compaction") messages.push(message)
  }
  return messages
}

/** See `ContextWindow.view`. */
export const view = (history: ReadonlyArray<Message>): Array<ModelMessage> => viewAt(history, lastCompaction(history))

/**
 * Where the groups of messages a cut may not split begin, from `from` on: each message that is
 * not a tool result starts one, and the tool results after it belong to it — an assistant
 * message's calls travel with their results.
 */
export const groupStarts = (history: ReadonlyArray<Message>, from: number): Array<number> => {
  const starts: Array<number> = []
  for (let i = from; i < history.length; i++) {
    const tag = history[i]!._tag
    if (tag !== "ToolResult" && tag !== "Compaction") starts.push(i)
  }
  return starts
}

/** Tokens of a text, estimated: its UTF-8 bytes / 4, rounded up. */
export const textTokens = (text: string): number => Math.ceil(Buffer.byteLength(text, "utf8") / 4)

const messageCache = new WeakMap<Message, number>()

/**
 * Tokens of a file, estimated: an image as 1,600 (what Anthropic counts for one of about a
 * megapixel, more than OpenAI's high detail), whatever its bytes; another file inline as its
 * bytes / 4 (a document is read as text: an upper bound), one by URL as an image (its size is
 * unknown). Its base64 is not the measure: a 1 MB photo is not 330,000 tokens.
 */
export const fileTokens = (file: FilePart): number =>
  file.mediaType.startsWith("image/") || file.source._tag === "Url" ? imageTokens : Math.ceil(inlineBytes(file) / 4)

const imageTokens = 1_600

/** A message's JSON with its files left out (they are counted apart), and what they count. */
const withoutFiles = (message: Message): { readonly json: string; readonly files: number } => {
  let files = 0
  const json = JSON.stringify(message, (_key, value) => {
    if (typeof value === "object" && value !== null && value._tag === "File") {
      files += fileTokens(value)
      return null
    }
    return value
  })
  return { json, files }
}

/** Tokens of a message, estimated as its JSON's, each file as {@link fileTokens} (messages are immutable: each is measured once). */
export const messageTokens = (message: Message): number => {
  let tokens = messageCache.get(message)
  if (tokens === undefined) {
    const hasFiles = (message._tag === "User" && message.parts !== undefined) ||
      ((message._tag === "ToolResult" || message._tag === "Assistant") && message.files !== undefined)
    if (hasFiles) {
      const { files, json } = withoutFiles(message)
      tokens = textTokens(json) + files
    } else {
      tokens = textTokens(JSON.stringify(message))
    }
    messageCache.set(message, tokens)
  }
  return tokens
}

/** Tokens of the messages of `history` from `from` to `to`, compaction entries left out (they are never sent). */
export const rangeTokens = (history: ReadonlyArray<Message>, from: number, to = history.length): number => {
  let tokens = 0
  for (let i = from; i < to; i++) {
    const message = history[i]!
    if (message._tag !== "Compaction") tokens += messageTokens(message)
  }
  return tokens
}

/** What a request sends besides its messages. */
export interface Fixed {
  readonly system?: string | undefined
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  readonly output?: object | undefined
}

/** Tokens of what a request sends besides its messages: the system prompt, each tool definition and the output format, as JSON. */
export const fixedTokens = ({ output, system, tools }: Fixed): number => {
  let tokens = system === undefined ? 0 : textTokens(system)
  for (const tool of tools ?? []) tokens += textTokens(JSON.stringify(tool))
  return output === undefined ? tokens : tokens + textTokens(JSON.stringify(output))
}

/** See `ContextWindow.estimateTokens`. */
export const estimateTokens = (request: Fixed & { readonly messages: ReadonlyArray<Message> }): number =>
  fixedTokens(request) + rangeTokens(request.messages, 0)
