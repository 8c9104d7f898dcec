/**
 * The parts of the AI SDK's UI message stream protocol (v1, as `ai` 6 and `ai` 7 both read it)
 * that an agentfx run is sent as: Server-Sent Events, one `data: <JSON>` event per chunk, ended by
 * `data: [DONE]`, under the `x-vercel-ai-ui-message-stream: v1` header. `useChat` with its
 * `DefaultChatTransport` reads them as they are, on either major.
 *
 * @since 0.1.0
 */
import { Json } from "@agentfx/core"
import { Schema } from "effect"

const ToolCallId = { toolCallId: Schema.String }

/**
 * Why an assistant message ended: `stop` (the run completed), `tool-calls` (it paused: the
 * calls wait for a person), `error` (it failed), `other` (a newer message cancelled its run:
 * the agent's `onConversationBusy` is `"interrupt"` or `"rollback"`; its `data-interrupted` part says so).
 *
 * @example
 * ```ts
 * import { UiChunk } from "@agentfx/ui-stream"
 *
 * const paused: UiChunk.FinishReason = "tool-calls"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const FinishReason = Schema.Literals(["stop", "tool-calls", "error", "other"])

/**
 * @since 0.1.0
 * @category models
 */
export type FinishReason = typeof FinishReason.Type

/**
 * A chunk of an assistant message, as agentfx sends it:
 *
 * | chunk | from |
 * | --- | --- |
 * | `start` (`messageId`: the run's id) | the run started, or its resume claimed it |
 * | `start-step` / `finish-step` | each model call, with the tool calls it asked for |
 * | `text-start` / `text-delta` / `text-end` | the model's text, as it streams (`id` per model call) |
 * | `reasoning-start` / `reasoning-delta` / `reasoning-end` | the model's readable reasoning, once its answer is complete (`id` per model call) |
 * | `tool-input-available` | a tool call starts, or waits for a person |
 * | `tool-output-available` / `tool-output-error` | its result or failure (a timeout too) |
 * | `file` | a file the tool returned beside its result (`url`: a `data:` URL of inline bytes, or the file's URL) |
 * | `tool-approval-request` | the run paused: the call waits for approval (`approvalId` names the run, its pause and the call; `reason`, why the gate asked — `ai` 7 shows it as the part's `approval.requestReason`, `ai` 6 ignores it) |
 * | `tool-output-denied` | a person denied the call |
 * | `data-events-lost` | events of the run were lost (a cluster runner driving it was killed; `data`: `runId`, `message`): a part of the message, the run goes on |
 * | `error` | the run failed after it started (`errorText`: what failed) |
 * | `data-interrupted` | a newer message cancelled the run (`onConversationBusy: "interrupt"` or `"rollback"`): `data` is `{ runId, by, rolledBack, message }` — `by` the run of the newer message, `rolledBack` whether this run's messages were removed from the conversation; a data part of the message, as `useChat` keeps it |
 * | `finish` | the message ended: completed, paused, failed or interrupted |
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { UiChunk } from "@agentfx/ui-stream"
 *
 * const chunk = Schema.decodeUnknownSync(UiChunk.UiChunk)({ type: "text-delta", id: "text-1", delta: "Sun" })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const UiChunk = Schema.Union([
  Schema.Struct({ type: Schema.Literal("start"), messageId: Schema.String }),
  Schema.Struct({ type: Schema.Literal("start-step") }),
  Schema.Struct({ type: Schema.Literal("text-start"), id: Schema.String }),
  Schema.Struct({ type: Schema.Literal("text-delta"), id: Schema.String, delta: Schema.String }),
  Schema.Struct({ type: Schema.Literal("text-end"), id: Schema.String }),
  Schema.Struct({ type: Schema.Literals(["reasoning-start", "reasoning-end"]), id: Schema.String }),
  Schema.Struct({ type: Schema.Literal("reasoning-delta"), id: Schema.String, delta: Schema.String }),
  Schema.Struct({ type: Schema.Literal("tool-input-available"), ...ToolCallId, toolName: Schema.String, input: Json.JsonValue }),
  Schema.Struct({ type: Schema.Literal("tool-approval-request"), ...ToolCallId, approvalId: Schema.String, reason: Schema.optionalKey(Schema.String) }),
  Schema.Struct({ type: Schema.Literal("tool-output-available"), ...ToolCallId, output: Json.JsonValue }),
  Schema.Struct({ type: Schema.Literal("tool-output-error"), ...ToolCallId, errorText: Schema.String }),
  Schema.Struct({ type: Schema.Literal("file"), url: Schema.String, mediaType: Schema.String }),
  Schema.Struct({ type: Schema.Literal("tool-output-denied"), ...ToolCallId }),
  Schema.Struct({ type: Schema.Literal("finish-step") }),
  Schema.Struct({ type: Schema.Literal("data-events-lost"), data: Schema.Struct({ runId: Schema.String, message: Schema.String }) }),
  Schema.Struct({ type: Schema.Literal("error"), errorText: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("data-interrupted"),
    data: Schema.Struct({ runId: Schema.String, by: Schema.String, rolledBack: Schema.Boolean, message: Schema.String })
  }),
  Schema.Struct({ type: Schema.Literal("finish"), finishReason: FinishReason })
]).annotate({ identifier: "UiChunk" })

/**
 * @since 0.1.0
 * @category models
 */
export type UiChunk = typeof UiChunk.Type

/**
 * The response headers of a UI message stream: the protocol's header, and no caching or
 * buffering by proxies on the way.
 *
 * @example
 * ```ts
 * import { UiChunk } from "@agentfx/ui-stream"
 *
 * UiChunk.headers["x-vercel-ai-ui-message-stream"] // "v1"
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const headers: { readonly [name: string]: string } = {
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
  "x-vercel-ai-ui-message-stream": "v1"
}

const encodeChunk = Schema.encodeSync(UiChunk)
const encoder = new TextEncoder()

/**
 * One chunk as its Server-Sent Event (`data: <JSON>` and a blank line), encoded with the
 * `UiChunk` Schema.
 *
 * @example
 * ```ts
 * import { UiChunk } from "@agentfx/ui-stream"
 *
 * new TextDecoder().decode(UiChunk.toEvent({ type: "start-step" })) // 'data: {"type":"start-step"}\n\n'
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const toEvent = (chunk: UiChunk): Uint8Array => encoder.encode(`data: ${JSON.stringify(encodeChunk(chunk))}\n\n`)

/**
 * The event that ends every UI message stream.
 *
 * @example
 * ```ts
 * import { UiChunk } from "@agentfx/ui-stream"
 *
 * new TextDecoder().decode(UiChunk.done) // "data: [DONE]\n\n"
 * ```
 *
 * @since 0.1.0
 * @category encoding
 */
export const done: Uint8Array = encoder.encode("data: [DONE]\n\n")
