/**
 * The AG-UI 1.0 events an agentfx run is sent as (`@ag-ui/client`'s `HttpAgent` reads them as
 * they are): Server-Sent Events, one `data: <JSON>` event per AG-UI event, under
 * `content-type: text/event-stream`, with a comment (`: keepalive`) while nothing else is sent.
 * These Schemas are the subset agentfx sends, field for field as AG-UI 1.0 (`@ag-ui/core`)
 * validates them.
 *
 * @since 0.2.0
 */
import { Json } from "@agentfx/core"
import { Schema } from "effect"

/**
 * Something a paused run waits for: one per pending call. `id` names the run, its pause and the
 * call (answer it by this id, in `RunAgentInput.resume`); `reason` is `tool_approval` (a call
 * waits for a person's approval) or `tool_failure` (a call failed for its environment: it can be
 * tried again or reported to the model); `message` says what is asked; `toolCallId` is the call
 * (announced before, with `TOOL_CALL_START`); `responseSchema` is the JSON Schema of the
 * answers the endpoint takes (`AgUiApi.Answer`, with the tool's own parameters for edited
 * arguments).
 *
 * @example
 * ```ts
 * import { AgUiEvent } from "@agentfx/ui-stream"
 *
 * const waiting: AgUiEvent.Interrupt = {
 *   id: "run-1:3:t1",
 *   reason: "tool_approval",
 *   message: "transfer waits for approval",
 *   toolCallId: "t1",
 *   responseSchema: {}
 * }
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const Interrupt = Schema.Struct({
  id: Schema.String,
  reason: Schema.Literals(["tool_approval", "tool_failure"]),
  message: Schema.String,
  toolCallId: Schema.String,
  responseSchema: Schema.Record(Schema.String, Json.JsonValue)
}).annotate({ identifier: "Interrupt" })

/**
 * @since 0.2.0
 * @category models
 */
export type Interrupt = typeof Interrupt.Type

/**
 * Token counts of the model calls of one AG-UI run, per provider and model when known.
 *
 * @example
 * ```ts
 * import type { AgUiEvent } from "@agentfx/ui-stream"
 *
 * const usage: AgUiEvent.TokenUsage = { inputTokens: 120, outputTokens: 30, totalTokens: 150 }
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const TokenUsage = Schema.Struct({
  provider: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(Schema.String),
  inputTokens: Schema.Int,
  outputTokens: Schema.Int,
  totalTokens: Schema.Int
}).annotate({ identifier: "TokenUsage" })

/**
 * @since 0.2.0
 * @category models
 */
export type TokenUsage = typeof TokenUsage.Type

const MediaSource = Schema.Union([
  Schema.Struct({ type: Schema.Literal("data"), value: Schema.String, mimeType: Schema.String }),
  Schema.Struct({ type: Schema.Literal("url"), value: Schema.String, mimeType: Schema.String })
])

/**
 * A part of a tool result that returned files: its text (what the model is shown), then each
 * file as an image, audio, video or document part, inline (`data`, base64) or by URL.
 *
 * @example
 * ```ts
 * import type { AgUiEvent } from "@agentfx/ui-stream"
 *
 * const parts: ReadonlyArray<AgUiEvent.ContentPart> = [
 *   { type: "text", text: "a snapshot" },
 *   { type: "image", source: { type: "data", value: "iVBORw0KGgo=", mimeType: "image/png" } }
 * ]
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const ContentPart = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literals(["image", "audio", "video", "document"]), source: MediaSource })
]).annotate({ identifier: "ContentPart" })

/**
 * @since 0.2.0
 * @category models
 */
export type ContentPart = typeof ContentPart.Type

/**
 * One operation of a JSON Patch (RFC 6902) of the agent's state: what `STATE_DELTA` carries.
 *
 * @example
 * ```ts
 * import type { AgUiEvent } from "@agentfx/ui-stream"
 *
 * const added: AgUiEvent.PatchOperation = { op: "add", path: "/notes/-", value: "call Ada" }
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const PatchOperation = Schema.Union([
  Schema.Struct({ op: Schema.Literals(["add", "replace"]), path: Schema.String, value: Json.JsonValue }),
  Schema.Struct({ op: Schema.Literal("remove"), path: Schema.String })
]).annotate({ identifier: "PatchOperation" })

/**
 * @since 0.2.0
 * @category models
 */
export type PatchOperation = typeof PatchOperation.Type

/**
 * An event of an AG-UI run, as agentfx sends it:
 *
 * | event | from |
 * | --- | --- |
 * | `RUN_STARTED` (`threadId`, `runId`: the request's) | the run was admitted (it holds its thread), or its resume won its claim |
 * | `STATE_SNAPSHOT` | the agent's slots as the run starts (an agent with slots only) |
 * | `STEP_STARTED` / `STEP_FINISHED` (`step-<iteration>`) | each model call, with the tool calls it asked for |
 * | `TEXT_MESSAGE_START` / `_CONTENT` / `_END` | the model's text, as it streams (`messageId`: the run and the iteration) |
 * | `REASONING_START`, `REASONING_MESSAGE_START` / `_CONTENT` / `_END`, `REASONING_END` | the model's readable reasoning, once its answer is complete (`messageId`: the text's, `-reasoning`) |
 * | `TOOL_CALL_START` / `_ARGS` / `_END` | a tool call starts, or waits for a person (the arguments as one JSON text) |
 * | `TOOL_CALL_RESULT` | its result, as the model is shown it: a value, a failure, a person's rejection or reply |
 * | `STATE_DELTA` | the slots' changes, as a JSON Patch, when the run paused or completed |
 * | `RUN_FINISHED` | `outcome` `interrupt` (the run paused: its interrupts) or `success` (it completed); `usage` |
 * | `CUSTOM` `agentfx.eventsLost` (`value`: `runId`, `message`) | events of the run were lost (a cluster runner driving it was killed): the run goes on |
 * | `RUN_ERROR` | the run failed after it started (`code`: the failure's tag) |
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { AgUiEvent } from "@agentfx/ui-stream"
 *
 * const event = Schema.decodeUnknownSync(AgUiEvent.AgUiEvent)({ type: "TEXT_MESSAGE_CONTENT", messageId: "r1-1", delta: "Sun" })
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const AgUiEvent = Schema.Union([
  Schema.Struct({ type: Schema.Literal("RUN_STARTED"), threadId: Schema.String, runId: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("RUN_FINISHED"),
    threadId: Schema.String,
    runId: Schema.String,
    outcome: Schema.Union([
      Schema.Struct({ type: Schema.Literal("success") }),
      Schema.Struct({ type: Schema.Literal("interrupt"), interrupts: Schema.NonEmptyArray(Interrupt) })
    ]),
    usage: Schema.optionalKey(Schema.Array(TokenUsage))
  }),
  Schema.Struct({ type: Schema.Literal("RUN_ERROR"), message: Schema.String, code: Schema.String }),
  Schema.Struct({ type: Schema.Literals(["STEP_STARTED", "STEP_FINISHED"]), stepName: Schema.String }),
  Schema.Struct({ type: Schema.Literal("TEXT_MESSAGE_START"), messageId: Schema.String, role: Schema.Literal("assistant") }),
  Schema.Struct({ type: Schema.Literal("TEXT_MESSAGE_CONTENT"), messageId: Schema.String, delta: Schema.String }),
  Schema.Struct({ type: Schema.Literal("TEXT_MESSAGE_END"), messageId: Schema.String }),
  Schema.Struct({ type: Schema.Literals(["REASONING_START", "REASONING_MESSAGE_END", "REASONING_END"]), messageId: Schema.String }),
  Schema.Struct({ type: Schema.Literal("REASONING_MESSAGE_START"), messageId: Schema.String, role: Schema.Literal("reasoning") }),
  Schema.Struct({ type: Schema.Literal("REASONING_MESSAGE_CONTENT"), messageId: Schema.String, delta: Schema.String }),
  Schema.Struct({ type: Schema.Literal("TOOL_CALL_START"), toolCallId: Schema.String, toolCallName: Schema.String, parentMessageId: Schema.String }),
  Schema.Struct({ type: Schema.Literal("TOOL_CALL_ARGS"), toolCallId: Schema.String, delta: Schema.String }),
  Schema.Struct({ type: Schema.Literal("TOOL_CALL_END"), toolCallId: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("TOOL_CALL_RESULT"),
    messageId: Schema.String,
    toolCallId: Schema.String,
    role: Schema.Literal("tool"),
    content: Schema.Union([Schema.String, Schema.Array(ContentPart)])
  }),
  Schema.Struct({ type: Schema.Literal("STATE_SNAPSHOT"), snapshot: Json.JsonValue }),
  Schema.Struct({ type: Schema.Literal("STATE_DELTA"), delta: Schema.Array(PatchOperation) }),
  Schema.Struct({
    type: Schema.Literal("CUSTOM"),
    name: Schema.Literal("agentfx.eventsLost"),
    value: Schema.Struct({ runId: Schema.String, message: Schema.String })
  })
]).annotate({ identifier: "AgUiEvent" })

/**
 * @since 0.2.0
 * @category models
 */
export type AgUiEvent = typeof AgUiEvent.Type

/**
 * The response headers of an AG-UI event stream: no caching or buffering by proxies on the way.
 *
 * @example
 * ```ts
 * import { AgUiEvent } from "@agentfx/ui-stream"
 *
 * AgUiEvent.headers["cache-control"] // "no-cache"
 * ```
 *
 * @since 0.2.0
 * @category constants
 */
export const headers: { readonly [name: string]: string } = {
  "cache-control": "no-cache",
  "x-accel-buffering": "no"
}

const encodeEvent = Schema.encodeSync(AgUiEvent)
const encoder = new TextEncoder()

/**
 * One event as its Server-Sent Event (`data: <JSON>` and a blank line), encoded with the
 * `AgUiEvent` Schema.
 *
 * @example
 * ```ts
 * import { AgUiEvent } from "@agentfx/ui-stream"
 *
 * new TextDecoder().decode(AgUiEvent.toEvent({ type: "TEXT_MESSAGE_END", messageId: "r1-1" })) // 'data: {"type":"TEXT_MESSAGE_END","messageId":"r1-1"}\n\n'
 * ```
 *
 * @since 0.2.0
 * @category encoding
 */
export const toEvent = (event: AgUiEvent): Uint8Array => encoder.encode(`data: ${JSON.stringify(encodeEvent(event))}\n\n`)

/**
 * The comment sent while a run is quiet (a tool that takes long, a person who takes time to
 * answer on another tab), so that proxies and load balancers do not close the connection; SSE
 * clients ignore it.
 *
 * @example
 * ```ts
 * import { AgUiEvent } from "@agentfx/ui-stream"
 *
 * new TextDecoder().decode(AgUiEvent.keepAlive) // ": keepalive\n\n"
 * ```
 *
 * @since 0.2.0
 * @category encoding
 */
export const keepAlive: Uint8Array = encoder.encode(": keepalive\n\n")
