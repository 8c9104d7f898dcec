/**
 * The neutral conversation messages the loop, the memory and every model adapter share.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { JsonValue } from "./Json.js"
import { FilePart, InputPart, ReasoningPart, textOf } from "./Part.js"
import { ToolCall } from "./ToolCall.js"

/**
 * Instructions for the model. The agent's `system` prompt is sent with every request; it
 * is not stored in memory.
 *
 * @example
 * ```ts
 * import { Message } from "@agentfx/core"
 *
 * const system: Message.SystemMessage = { _tag: "System", text: "Be brief." }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const SystemMessage = Schema.TaggedStruct("System", { text: Schema.String })

/**
 * @since 0.1.0
 * @category models
 */
export interface SystemMessage extends Schema.Schema.Type<typeof SystemMessage> {}

/**
 * What the person said. `parts`, when present, is all of it in order — text and files
 * (images, documents) — and `text` is the text of its text parts (what events, logs and
 * summaries show); a message of text alone has no `parts`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Message } from "@agentfx/core"
 *
 * Schema.decodeUnknownSync(Message.UserMessage)({ _tag: "User", text: "hi" })
 * Schema.decodeUnknownSync(Message.UserMessage)({
 *   _tag: "User",
 *   text: "What is this?",
 *   parts: [
 *     { _tag: "Text", text: "What is this?" },
 *     { _tag: "File", mediaType: "image/png", source: { _tag: "Url", url: "https://example.com/x.png" } }
 *   ]
 * })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const UserMessage = Schema.TaggedStruct("User", {
  text: Schema.String,
  parts: Schema.optionalKey(Schema.Array(InputPart))
})

/**
 * @since 0.1.0
 * @category models
 */
export interface UserMessage extends Schema.Schema.Type<typeof UserMessage> {}

/**
 * What the model answered: text, tool calls, or both. `reasoning`, when present, is the
 * model's reasoning as its provider returned it, sent back to that provider only (and first,
 * as Anthropic requires of a turn that called tools). `files`, when present, are the files the
 * model answered with (images it generated), after its text: each adapter sends them back in
 * its API's shape, or describes them in text where its API takes no files in the model's turn
 * (decision 164).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Message } from "@agentfx/core"
 *
 * Schema.decodeUnknownSync(Message.AssistantMessage)({ _tag: "Assistant", text: "", toolCalls: [{ id: "c1", name: "t", args: {} }] })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssistantMessage = Schema.TaggedStruct("Assistant", {
  text: Schema.String,
  toolCalls: Schema.Array(ToolCall),
  reasoning: Schema.optionalKey(Schema.Array(ReasoningPart)),
  files: Schema.optionalKey(Schema.Array(FilePart))
})

/**
 * @since 0.1.0
 * @category models
 */
export interface AssistantMessage extends Schema.Schema.Type<typeof AssistantMessage> {}

/**
 * The result of one tool call, keyed by the call's id. `content` is what the model is shown:
 * the encoded success value, or the failure's message when `isError`; `files`, the files the
 * tool returned beside it (`Tool.output(value, { files })`, an MCP tool's images).
 *
 * @example
 * ```ts
 * import { Message } from "@agentfx/core"
 *
 * const result: Message.ToolResultMessage = { _tag: "ToolResult", callId: "c1", toolName: "t", isError: false, content: { ok: true } }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolResultMessage = Schema.TaggedStruct("ToolResult", {
  callId: Schema.String,
  toolName: Schema.String,
  isError: Schema.Boolean,
  content: JsonValue,
  files: Schema.optionalKey(Schema.Array(FilePart))
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolResultMessage extends Schema.Schema.Type<typeof ToolResultMessage> {}

/**
 * A compaction entry: the history keeps every message, and this entry says that from here on
 * the model is sent, instead of the conversation's first `replaces` entries, the `summary` of
 * them — or, without a summary (trimmed), a note that they were left out. Written by the loop
 * when an agent's context policy compacts the conversation (`ContextWindow`); never sent to a
 * model itself (`ContextWindow.view` derives what is sent). `replaces` always ends before a
 * message that is not a tool result: a tool call and its results stay together.
 *
 * @example
 * ```ts
 * import { Message } from "@agentfx/core"
 *
 * const entry: Message.CompactionMessage = { _tag: "Compaction", replaces: 12, summary: "Ada asked for the Q3 report; it was sent." }
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const CompactionMessage = Schema.TaggedStruct("Compaction", {
  replaces: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  summary: Schema.optional(Schema.String)
})

/**
 * @since 0.2.0
 * @category models
 */
export interface CompactionMessage extends Schema.Schema.Type<typeof CompactionMessage> {}

/**
 * Any message of a conversation.
 *
 * @example
 * ```ts
 * import { Message } from "@agentfx/core"
 *
 * const history: ReadonlyArray<Message.Message> = [
 *   Message.user("Weather in Oslo?"),
 *   Message.assistant("", [{ id: "call_1", name: "get_weather", args: { city: "Oslo" } }]),
 *   { _tag: "ToolResult", callId: "call_1", toolName: "get_weather", isError: false, content: "Sunny" },
 *   Message.assistant("It is sunny in Oslo.")
 * ]
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Message = Schema.Union([SystemMessage, UserMessage, AssistantMessage, ToolResultMessage, CompactionMessage])

/**
 * @since 0.1.0
 * @category models
 */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage | CompactionMessage

/**
 * A user message, of text or of parts. Parts that are all text make a message of text alone
 * (joined by blank lines).
 *
 * @example
 * ```ts
 * import { Message, Part } from "@agentfx/core"
 *
 * Message.user("hello") // { _tag: "User", text: "hello" }
 * Message.user([Part.text("What is this?"), Part.image({ url: "https://example.com/x.png" })])
 * // { _tag: "User", text: "What is this?", parts: [...] }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const user = (input: string | ReadonlyArray<InputPart>): UserMessage =>
  typeof input === "string"
    ? { _tag: "User", text: input }
    : input.every((part) => part._tag === "Text")
    ? { _tag: "User", text: textOf(input) }
    : { _tag: "User", text: textOf(input), parts: input }

/**
 * What a user message says, as parts: its `parts`, or its text as one text part (none when
 * it is empty).
 *
 * @example
 * ```ts
 * import { Message } from "@agentfx/core"
 *
 * Message.userParts(Message.user("hi")) // [{ _tag: "Text", text: "hi" }]
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const userParts = (message: UserMessage): ReadonlyArray<InputPart> =>
  message.parts ?? (message.text.length === 0 ? [] : [{ _tag: "Text", text: message.text }])

/**
 * An assistant message; `reasoning`, the model's, and `files`, the files it answered with (each
 * kept only when there is some).
 *
 * @example
 * ```ts
 * import { Message, Part } from "@agentfx/core"
 *
 * Message.assistant("done") // { _tag: "Assistant", text: "done", toolCalls: [] }
 * Message.assistant("Here is the logo.", [], undefined, [Part.image({ data: "iVBORw0KGgo=" })])
 * // { _tag: "Assistant", text: "Here is the logo.", toolCalls: [], files: [{ _tag: "File", mediaType: "image/png", … }] }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const assistant = (
  text: string,
  toolCalls: ReadonlyArray<ToolCall> = [],
  reasoning?: ReadonlyArray<ReasoningPart>,
  files?: ReadonlyArray<FilePart>
): AssistantMessage => {
  const message: AssistantMessage = reasoning === undefined || reasoning.length === 0
    ? { _tag: "Assistant", text, toolCalls }
    : { _tag: "Assistant", text, toolCalls, reasoning }
  return files === undefined || files.length === 0 ? message : { ...message, files }
}

/**
 * The tool calls in `messages` that have no result yet (e.g. after a crash or an interrupted run).
 *
 * @example
 * ```ts
 * import { Message } from "@agentfx/core"
 *
 * Message.danglingToolCalls([Message.assistant("", [{ id: "c1", name: "t", args: {} }])]) // [{ id: "c1", … }]
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const danglingToolCalls = (messages: ReadonlyArray<Message>): Array<ToolCall> => {
  const answered = new Set<string>()
  for (const message of messages) {
    if (message._tag === "ToolResult") answered.add(message.callId)
  }
  const dangling: Array<ToolCall> = []
  for (const message of messages) {
    if (message._tag === "Assistant") {
      for (const call of message.toolCalls) if (!answered.has(call.id)) dangling.push(call)
    }
  }
  return dangling
}
