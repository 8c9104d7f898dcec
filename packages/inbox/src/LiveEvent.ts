/**
 * What the inbox sends a browser about a run it resumed: the run's lifecycle events as JSON,
 * one Server-Sent Event each. Bulky parts of the core events are left out (a pause's
 * checkpoint, a completed run's messages and state): a page shows progress, the run store
 * keeps the rest.
 *
 * @since 0.1.0
 */
import type { AgentEvent } from "@agentfx/core"
import { Json, Part } from "@agentfx/core"
import { Schema } from "effect"

const meta = {
  runId: Schema.String,
  conversationId: Schema.String,
  /** `Clock` time of the event, epoch milliseconds. */
  timestamp: Schema.Number
}

/** Why a model call was made: the agent's answer, or a context policy's summary (`AgentEvent.Purpose`). */
const Purpose = Schema.Literals(["answer", "compaction"])

const CallRef = Schema.Struct({ callId: Schema.String, toolName: Schema.String, args: Json.JsonValue })

/**
 * A file of an event, as the page shows it: its media type, name, and size (inline) or URL —
 * never its bytes, which an event stream does not carry.
 *
 * @example
 * ```ts
 * import { LiveEvent } from "@agentfx/inbox"
 *
 * const file: LiveEvent.FileSummary = { mediaType: "image/png", name: "chart.png", bytes: 2048 }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const FileSummary = Schema.Struct({
  mediaType: Schema.String,
  name: Schema.optional(Schema.String),
  bytes: Schema.optional(Schema.Number),
  url: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface FileSummary extends Schema.Schema.Type<typeof FileSummary> {}

const files = { files: Schema.optional(Schema.Array(FileSummary)) }

/**
 * One event, tagged like the core event it comes from, plus `RunFailed` (the resumed run
 * failed after it was claimed: a model error, a store error, … with its tag and message; a
 * defect as `Defect`, "The run failed unexpectedly", its cause logged) and `EventsLost` (a
 * driver that follows a run elsewhere lost some of its events — the runner that drove it was
 * killed and another took it over — and says so where they would have been).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { LiveEvent } from "@agentfx/inbox"
 *
 * const event = Schema.decodeUnknownSync(LiveEvent.LiveEvent)({
 *   _tag: "RunCompleted", runId: "r1", conversationId: "c1", timestamp: 0, text: "Sent."
 * })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const LiveEvent = Schema.Union([
  Schema.TaggedStruct("RunStarted", { ...meta, agent: Schema.String, input: Schema.String, ...files }),
  Schema.TaggedStruct("RunResumed", { ...meta, agent: Schema.String, decision: Schema.String, decidedBy: Schema.optional(Schema.String) }),
  Schema.TaggedStruct("ModelCalled", { ...meta, iteration: Schema.Number, purpose: Purpose }),
  Schema.TaggedStruct("TextDelta", { ...meta, iteration: Schema.Number, text: Schema.String }),
  Schema.TaggedStruct("ModelResponded", {
    ...meta,
    iteration: Schema.Number,
    purpose: Purpose,
    text: Schema.String,
    toolCalls: Schema.Number,
    finishReason: Schema.String,
    durationMillis: Schema.Number
  }),
  Schema.TaggedStruct("ContextCompacted", {
    ...meta,
    iteration: Schema.Number,
    summarized: Schema.Boolean,
    tokensBefore: Schema.Number,
    tokensAfter: Schema.Number
  }),
  Schema.TaggedStruct("BatchTruncated", {
    ...meta,
    iteration: Schema.Number,
    batchWidth: Schema.Number,
    calls: Schema.Number,
    notRun: Schema.Array(Schema.Struct({ callId: Schema.String, toolName: Schema.String }))
  }),
  Schema.TaggedStruct("ToolStarted", { ...meta, ...CallRef.fields }),
  Schema.TaggedStruct("ToolSucceeded", {
    ...meta,
    callId: Schema.String,
    toolName: Schema.String,
    value: Json.JsonValue,
    ...files,
    durationMillis: Schema.Number
  }),
  Schema.TaggedStruct("ToolFailed", {
    ...meta,
    callId: Schema.String,
    toolName: Schema.String,
    reason: Schema.String,
    message: Schema.String,
    durationMillis: Schema.Number
  }),
  Schema.TaggedStruct("ToolTimedOut", { ...meta, callId: Schema.String, toolName: Schema.String, timeoutMillis: Schema.Number, durationMillis: Schema.Number }),
  Schema.TaggedStruct("RunPaused", { ...meta, kind: Schema.String, pending: Schema.Array(CallRef) }),
  Schema.TaggedStruct("RunCompleted", { ...meta, text: Schema.String }),
  Schema.TaggedStruct("RunFailed", { ...meta, error: Schema.String, message: Schema.String }),
  Schema.TaggedStruct("EventsLost", { ...meta, message: Schema.String })
]).annotate({ identifier: "LiveEvent" })

/**
 * @since 0.1.0
 * @category models
 */
export type LiveEvent = typeof LiveEvent.Type

/**
 * Whether the event ends the run's stream: it completed, paused again, or failed.
 *
 * @example
 * ```ts
 * import { LiveEvent } from "@agentfx/inbox"
 *
 * LiveEvent.isFinal({ _tag: "RunCompleted", runId: "r1", conversationId: "c1", timestamp: 0, text: "Sent." }) // true
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isFinal = (event: LiveEvent): boolean =>
  event._tag === "RunCompleted" || event._tag === "RunPaused" || event._tag === "RunFailed"

/** An event's files, summed up: what the page shows of them. */
const summaries = (files: ReadonlyArray<Part.FilePart> | undefined): { readonly files?: ReadonlyArray<FileSummary> } =>
  files === undefined ? {} : {
    files: files.map((file) => ({
      mediaType: file.mediaType,
      ...(file.name === undefined ? {} : { name: file.name }),
      ...(file.source._tag === "Url" ? { url: file.source.url } : { bytes: Part.inlineBytes(file) })
    }))
  }

/**
 * The wire form of a core event; `decidedBy` is added to `RunResumed`.
 *
 * @example
 * ```ts
 * import { LiveEvent } from "@agentfx/inbox"
 *
 * LiveEvent.fromAgentEvent({ _tag: "ModelCalled", runId: "r1", conversationId: "c1", timestamp: 0, iteration: 2, messages: 5, purpose: "answer" })
 * // { _tag: "ModelCalled", runId: "r1", conversationId: "c1", timestamp: 0, iteration: 2, purpose: "answer" }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromAgentEvent = (event: AgentEvent.AgentEvent, decidedBy?: string): LiveEvent => {
  const m = { runId: event.runId, conversationId: event.conversationId, timestamp: event.timestamp }
  switch (event._tag) {
    case "RunStarted":
      return { _tag: event._tag, ...m, agent: event.agent, input: event.input, ...summaries(event.files) }
    case "RunResumed":
      return { _tag: event._tag, ...m, agent: event.agent, decision: event.decision, ...(decidedBy === undefined ? {} : { decidedBy }) }
    case "ModelCalled":
      return { _tag: event._tag, ...m, iteration: event.iteration, purpose: event.purpose }
    case "TextDelta":
      return { _tag: event._tag, ...m, iteration: event.iteration, text: event.text }
    case "ModelResponded":
      return {
        _tag: event._tag,
        ...m,
        iteration: event.iteration,
        purpose: event.purpose,
        text: event.text,
        toolCalls: event.toolCalls,
        finishReason: event.finishReason,
        durationMillis: event.durationMillis
      }
    case "ContextCompacted":
      return {
        _tag: event._tag,
        ...m,
        iteration: event.iteration,
        summarized: event.summarized,
        tokensBefore: event.tokensBefore,
        tokensAfter: event.tokensAfter
      }
    case "BatchTruncated":
      return { _tag: event._tag, ...m, iteration: event.iteration, batchWidth: event.batchWidth, calls: event.calls, notRun: event.notRun }
    case "ToolStarted":
      return { _tag: event._tag, ...m, callId: event.callId, toolName: event.toolName, args: event.args }
    case "ToolSucceeded":
      return {
        _tag: event._tag,
        ...m,
        callId: event.callId,
        toolName: event.toolName,
        value: event.value,
        ...summaries(event.files),
        durationMillis: event.durationMillis
      }
    case "ToolFailed":
      return {
        _tag: event._tag,
        ...m,
        callId: event.callId,
        toolName: event.toolName,
        reason: event.error.reason,
        message: event.error.message,
        durationMillis: event.durationMillis
      }
    case "ToolTimedOut":
      return {
        _tag: event._tag,
        ...m,
        callId: event.callId,
        toolName: event.toolName,
        timeoutMillis: event.timeoutMillis,
        durationMillis: event.durationMillis
      }
    case "RunPaused":
      return {
        _tag: event._tag,
        ...m,
        kind: event.exit.kind,
        pending: event.exit.pending.map(({ call }) => ({ callId: call.id, toolName: call.name, args: call.args }))
      }
    case "RunCompleted":
      return { _tag: event._tag, ...m, text: event.exit.text }
  }
}

/**
 * The event that closes a run's stream when it fails after its claim.
 *
 * @example
 * ```ts
 * import { LiveEvent } from "@agentfx/inbox"
 *
 * LiveEvent.failed({ runId: "r1", conversationId: "c1", timestamp: 0 }, { _tag: "ModelError", message: "HTTP 500" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const failed = (
  run: { readonly runId: string; readonly conversationId: string; readonly timestamp: number },
  error: { readonly _tag: string; readonly message: string }
): LiveEvent => ({ _tag: "RunFailed", ...run, error: error._tag, message: error.message })
