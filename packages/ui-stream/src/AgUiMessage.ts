/**
 * A thread's messages in AG-UI 1.0's own shape (`Message` of `@ag-ui/core`), as the AG-UI
 * endpoint's thread read (`GET /api/agui/:threadId/messages`) returns them, for `HttpAgent`'s
 * `messages` when a page opens a thread again: the user's messages, an assistant message per model
 * call (its text, the tool calls it asked for), and a tool message per result — what the live
 * events build, with the same ids where the endpoint knows the run. A thread's pending calls are
 * not messages in AG-UI: the page holds them as its `interrupts`.
 *
 * @since 0.2.0
 */
import { Schema } from "effect"
import { ContentPart } from "./AgUiEvent.js"

/**
 * A tool call of an assistant message: its id, and the tool's name and arguments (JSON text).
 *
 * @example
 * ```ts
 * import type { AgUiMessage } from "@agentfx/ui-stream"
 *
 * const call: AgUiMessage.ToolCall = { id: "t1", type: "function", function: { name: "transfer", arguments: '{"to":"Ada","amount":250}' } }
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("function"),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
}).annotate({ identifier: "ToolCall" })

/**
 * @since 0.2.0
 * @category models
 */
export type ToolCall = typeof ToolCall.Type

/**
 * A message of a thread: a user's (its text, or its text and files as content parts), an
 * assistant's (its text, if any, and the calls it asked for, if any), a tool result's (what the
 * model was shown of the call's result: text, or text and the files as content parts).
 *
 * Ids: a message of the thread's last run, when the endpoint knows it (its paused run, or the
 * last this process ran), has the id the live events gave it — `<run id>-<step>` for an
 * assistant message, `<run id>-result-<call id>` for a tool message — so that a reattach to that
 * run lands in the messages the page has; any other message's id is its position in the
 * conversation (`msg-<position>`).
 *
 * @example
 * ```ts
 * import type { AgUiMessage } from "@agentfx/ui-stream"
 *
 * const thread: ReadonlyArray<AgUiMessage.Message> = [
 *   { id: "msg-0", role: "user", content: "What is my balance?" },
 *   { id: "msg-1", role: "assistant", toolCalls: [{ id: "b1", type: "function", function: { name: "balance", arguments: "{}" } }] },
 *   { id: "msg-2", role: "tool", toolCallId: "b1", content: "1000" }
 * ]
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const Message = Schema.Union([
  Schema.Struct({ id: Schema.String, role: Schema.Literal("user"), content: Schema.Union([Schema.String, Schema.Array(ContentPart)]) }),
  Schema.Struct({
    id: Schema.String,
    role: Schema.Literal("assistant"),
    content: Schema.optionalKey(Schema.String),
    toolCalls: Schema.optionalKey(Schema.Array(ToolCall))
  }),
  Schema.Struct({ id: Schema.String, role: Schema.Literal("tool"), toolCallId: Schema.String, content: Schema.Union([Schema.String, Schema.Array(ContentPart)]) })
]).annotate({ identifier: "Message" })

/**
 * @since 0.2.0
 * @category models
 */
export type Message = typeof Message.Type
