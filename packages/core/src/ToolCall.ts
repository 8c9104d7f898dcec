/**
 * A model's request to run a tool, and what came of it.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { JsonValue } from "./Json.js"
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
}).annotations({ identifier: "ToolCall" })

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolCall extends Schema.Schema.Type<typeof ToolCall> {}

/**
 * The call ran and its handler succeeded; `value` is the result encoded with the tool's
 * `success` schema (what the model sees).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Succeeded = Schema.TaggedStruct("Succeeded", {
  callId: Schema.String,
  toolName: Schema.String,
  value: JsonValue
}).annotations({ identifier: "ToolCall.Succeeded" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Succeeded extends Schema.Schema.Type<typeof Succeeded> {}

/**
 * The call failed: bad arguments, the handler's `ToolError`, a defect (as a `semantic` error),
 * or a `ToolTimeout` after every permitted retry.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Failed = Schema.TaggedStruct("Failed", {
  callId: Schema.String,
  toolName: Schema.String,
  error: ToolFailure
}).annotations({ identifier: "ToolCall.Failed" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Failed extends Schema.Schema.Type<typeof Failed> {}

/**
 * What came of one call.
 *
 * @example
 * ```ts
 * import { ToolCall } from "@agentfx/core"
 *
 * const describe = (result: ToolCall.Result) =>
 *   result._tag === "Succeeded" ? JSON.stringify(result.value) : result.error.message
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Result = Schema.Union(Succeeded, Failed)

/**
 * @since 0.1.0
 * @category models
 */
export type Result = Succeeded | Failed
