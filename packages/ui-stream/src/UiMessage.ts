/**
 * A conversation's messages in the AI SDK's own shape (`UIMessage` of `ai` 6 and 7), as the chat
 * endpoint's thread read (`GET /api/chat/:chatId/messages`) returns them, for `useChat`'s
 * `messages` when a page opens a chat again: the user's messages with their text and files, and
 * each turn's answer as one assistant message — a `step-start` per model call, its text, each tool
 * call as a `tool-<name>` part in the state it reached, the files a tool returned after it. A
 * turn that waits for a person ends with its pending calls as `approval-requested` parts, which
 * `addToolApprovalResponse` answers as it answers them live.
 *
 * @since 0.2.0
 */
import { Json } from "@agentfx/core"
import { Schema } from "effect"

/**
 * A tool call's part: `tool-<tool name>`, with the call's id and arguments (`input`), in the state
 * it reached — `input-available` (running), `approval-requested` (waiting for a person: `approval`
 * holds the id its answer names, and `requestReason`, why the gate asked), `output-available`
 * (`output`: its result), `output-error` (`errorText`: its failure, also for an environment pause's
 * call that waits), `output-denied` (rejected: `approval.reason` is the reason, when one was given).
 *
 * @example
 * ```ts
 * import { UiMessage } from "@agentfx/ui-stream"
 *
 * const waiting: UiMessage.ToolPart = {
 *   type: "tool-transfer",
 *   toolCallId: "t1",
 *   state: "approval-requested",
 *   input: { to: "Ada", amount: 250 },
 *   approval: { id: "run-1:1:t1", requestReason: "amounts above 100 need approval" }
 * }
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const ToolPart = Schema.Struct({
  type: Schema.TemplateLiteral(["tool-", Schema.String]),
  toolCallId: Schema.String,
  state: Schema.Literals(["input-available", "approval-requested", "output-available", "output-error", "output-denied"]),
  input: Json.JsonValue,
  output: Schema.optionalKey(Json.JsonValue),
  errorText: Schema.optionalKey(Schema.String),
  approval: Schema.optionalKey(Schema.Struct({
    id: Schema.String,
    approved: Schema.optionalKey(Schema.Boolean),
    reason: Schema.optionalKey(Schema.String),
    requestReason: Schema.optionalKey(Schema.String)
  }))
}).annotate({ identifier: "ToolPart" })

/**
 * @since 0.2.0
 * @category models
 */
export type ToolPart = typeof ToolPart.Type

/**
 * A part of a message: a step's start, text, a file (`url`: a `data:` URL of inline bytes, or the
 * file's URL), or a tool call.
 *
 * @example
 * ```ts
 * import { UiMessage } from "@agentfx/ui-stream"
 *
 * const parts: ReadonlyArray<UiMessage.Part> = [{ type: "step-start" }, { type: "text", text: "Sent.", state: "done" }]
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const Part = Schema.Union([
  Schema.Struct({ type: Schema.Literal("step-start") }),
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String, state: Schema.optionalKey(Schema.Literal("done")) }),
  Schema.Struct({ type: Schema.Literal("file"), mediaType: Schema.String, url: Schema.String, filename: Schema.optionalKey(Schema.String) }),
  ToolPart
]).annotate({ identifier: "Part" })

/**
 * @since 0.2.0
 * @category models
 */
export type Part = typeof Part.Type

/**
 * A message of the thread, as `useChat` holds it. An assistant message's id is its run's when the
 * endpoint knows it — the last turn's, so that the run's live stream (a reattach, the resume its
 * approval starts) continues that message — else its position in the conversation, as a user
 * message's is (`msg-<position>`).
 *
 * @example
 * ```ts
 * import { UiMessage } from "@agentfx/ui-stream"
 *
 * const asked: UiMessage.UiMessage = { id: "msg-0", role: "user", parts: [{ type: "text", text: "Send 250 to Ada" }] }
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const UiMessage = Schema.Struct({
  id: Schema.String,
  role: Schema.Literals(["user", "assistant"]),
  parts: Schema.Array(Part)
}).annotate({ identifier: "UiMessage" })

/**
 * @since 0.2.0
 * @category models
 */
export type UiMessage = typeof UiMessage.Type
