/**
 * A model's request to run a tool, and what came of it.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { JsonValue } from "./Json.js"
import { FilePart } from "./Part.js"
import { ToolFailure } from "./ToolError.js"

/**
 * A call the model asked for. `args` is the model's JSON, not yet decoded: it is decoded with
 * the tool's `parameters` schema when the call executes, so a checkpoint can hold it as is.
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentfx/core"
 *
 * const call: ToolCall.ToolCall = { id: "call_1", name: "get_weather", args: { city: "Oslo" } }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  args: JsonValue
}).annotate({ identifier: "ToolCall" })

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolCall extends Schema.Schema.Type<typeof ToolCall> {}

/**
 * The call ran and its handler succeeded; `value` is the result encoded with the tool's
 * `success` schema (what the model sees), `files` the files it returned beside it
 * (`Tool.output(value, { files })`), when it returned some.
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentfx/core"
 *
 * const ok: ToolCall.Succeeded = { _tag: "Succeeded", callId: "c1", toolName: "get_weather", value: "Sunny" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Succeeded = Schema.TaggedStruct("Succeeded", {
  callId: Schema.String,
  toolName: Schema.String,
  value: JsonValue,
  files: Schema.optionalKey(Schema.Array(FilePart))
}).annotate({ identifier: "ToolCall.Succeeded" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Succeeded extends Schema.Schema.Type<typeof Succeeded> {}

/**
 * The call failed: bad arguments, the handler's `ToolError`, a defect (as a `semantic` error),
 * or a `ToolTimeout` after every permitted retry.
 *
 * @example
 * ```ts
 * import { ToolCall, ToolError } from "@agentfx/core"
 *
 * const failed: ToolCall.Failed = { _tag: "Failed", callId: "c1", toolName: "get_weather", error: ToolError.semantic("no such city") }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Failed = Schema.TaggedStruct("Failed", {
  callId: Schema.String,
  toolName: Schema.String,
  error: ToolFailure
}).annotate({ identifier: "ToolCall.Failed" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Failed extends Schema.Schema.Type<typeof Failed> {}

/**
 * A call that is waiting for a person: a delegate tool whose child agent paused. Its
 * `pending` calls (the child's) and `checkpoint` (the child's) travel in the parent's
 * pause; the parent's resume resumes the child. `kind` is the child's pause's
 * (`Paused.kind`), and each pending call's `why` the child's gate's; both are stored as
 * `reason`, as checkpoints always stored them (decision 166).
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentfx/core"
 *
 * const waiting = (outcome: ToolCall.Outcome) => outcome._tag === "Suspended" ? outcome.pending.map((p) => p.call.id) : []
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Suspended = Schema.TaggedStruct("Suspended", {
  callId: Schema.String,
  toolName: Schema.String,
  kind: Schema.Literals(["approval", "environment"]),
  pending: Schema.Array(
    Schema.Struct({ call: ToolCall, error: Schema.optional(ToolFailure), why: Schema.optional(Schema.String) }).pipe(Schema.encodeKeys({ why: "reason" }))
  ),
  checkpoint: JsonValue
}).pipe(Schema.encodeKeys({ kind: "reason" })).annotate({ identifier: "ToolCall.Suspended" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Suspended extends Schema.Schema.Type<typeof Suspended> {}

/**
 * What came of one call.
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentfx/core"
 *
 * const describe = (result: ToolCall.Result) =>
 *   result._tag === "Failed" ? result.error.message : result._tag === "Succeeded" ? JSON.stringify(result.value) : "waiting"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Result = Schema.Union([Succeeded, Failed, Suspended])

/**
 * @since 0.1.0
 * @category models
 */
export type Result = Succeeded | Failed | Suspended

/**
 * The call was not executed: a gate or a person rejected it. The model is shown
 * `"rejected"` or `"rejected: <message>"`.
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentfx/core"
 *
 * const rejected: ToolCall.Rejected = { _tag: "Rejected", callId: "c1", toolName: "rm", message: "too risky" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Rejected = Schema.TaggedStruct("Rejected", {
  callId: Schema.String,
  toolName: Schema.String,
  message: Schema.optional(Schema.String)
}).annotate({ identifier: "ToolCall.Rejected" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Rejected extends Schema.Schema.Type<typeof Rejected> {}

/**
 * The call was not executed: a gate or a person answered in its place (ask-the-user
 * tools). `value` is what the model is shown as the call's result.
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentfx/core"
 *
 * const replied: ToolCall.Replied = { _tag: "Replied", callId: "c1", toolName: "ask_user", value: "Blue." }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Replied = Schema.TaggedStruct("Replied", {
  callId: Schema.String,
  toolName: Schema.String,
  value: JsonValue
}).annotate({ identifier: "ToolCall.Replied" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Replied extends Schema.Schema.Type<typeof Replied> {}

/**
 * The call was left without a result (an interrupted run, a crash) and was closed with a
 * neutral "cancelled" result before the next turn.
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentfx/core"
 *
 * const cancelled: ToolCall.Cancelled = { _tag: "Cancelled", callId: "c1", toolName: "hang" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Cancelled = Schema.TaggedStruct("Cancelled", {
  callId: Schema.String,
  toolName: Schema.String
}).annotate({ identifier: "ToolCall.Cancelled" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Cancelled extends Schema.Schema.Type<typeof Cancelled> {}

/**
 * Everything that can become of a call in a run: executed (`Succeeded`, `Failed`, or
 * `Suspended` until a person decides), decided without running (`Rejected`, `Replied`), or
 * healed (`Cancelled`).
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentfx/core"
 *
 * const ran = (outcome: ToolCall.Outcome) => outcome._tag === "Succeeded" || outcome._tag === "Failed"
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Outcome = Schema.Union([Succeeded, Failed, Suspended, Rejected, Replied, Cancelled])

/**
 * @since 0.1.0
 * @category models
 */
export type Outcome = Result | Rejected | Replied | Cancelled

/**
 * What the model is shown for an outcome, whether it is an error, and the files a successful
 * call returned.
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentfx/core"
 *
 * ToolCall.modelContent({ _tag: "Rejected", callId: "c1", toolName: "rm", message: "too risky" })
 * // { isError: true, content: "rejected: too risky" }
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const modelContent = (
  outcome: Outcome
): { readonly isError: boolean; readonly content: JsonValue; readonly files?: ReadonlyArray<FilePart> } => {
  switch (outcome._tag) {
    case "Succeeded":
      return outcome.files === undefined ? { isError: false, content: outcome.value } : { isError: false, content: outcome.value, files: outcome.files }
    case "Replied":
      return { isError: false, content: outcome.value }
    case "Failed":
      return { isError: true, content: `${outcome.error.reason} error: ${outcome.error.message}` }
    case "Rejected":
      return { isError: true, content: outcome.message === undefined ? "rejected" : `rejected: ${outcome.message}` }
    case "Suspended":
      return { isError: true, content: `suspended: waiting for a person (${outcome.kind})` }
    case "Cancelled":
      return { isError: true, content: "cancelled: the call was interrupted before it returned a result" }
  }
}
