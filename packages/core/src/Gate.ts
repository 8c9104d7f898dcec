/**
 * Gates decide, per tool call and before anything of the batch runs, whether the call
 * proceeds, is rejected, is answered in its place, or needs a person.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { JsonValue } from "./Json.js"
import type { ToolCall } from "./ToolCall.js"
import type * as Toolkit from "./Toolkit.js"

/**
 * A gate's verdict on one call.
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict =
  | { readonly _tag: "Proceed" }
  | { readonly _tag: "Reject"; readonly reason?: string }
  | { readonly _tag: "Reply"; readonly value: JsonValue }
  | { readonly _tag: "Pause" }

/**
 * What a gate sees of a call. `tool` is `undefined` when the model named an unknown tool
 * (such a call, when it proceeds, gets a `semantic` error result).
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  readonly call: ToolCall
  readonly tool: Toolkit.Entry | undefined
  readonly state: { readonly [slot: string]: unknown }
}

/**
 * A gate. Gates run serially, in call order, before any call of the batch executes; they
 * are outside every tool timeout.
 *
 * @since 0.1.0
 * @category models
 */
export type Gate<R = never> = (input: Input) => Effect.Effect<Verdict, never, R>

/**
 * Run the call.
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * const allowAll: Gate.Gate = () => Gate.proceed
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const proceed: Effect.Effect<Verdict> = Effect.succeed({ _tag: "Proceed" })

/**
 * Do not run the call; the model is shown `"rejected: <reason>"`.
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * const noDeletes: Gate.Gate = ({ call }) => call.name === "delete_file" ? Gate.reject("deleting is not allowed") : Gate.proceed
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const reject = (reason?: string): Effect.Effect<Verdict> =>
  Effect.succeed(reason === undefined ? { _tag: "Reject" } : { _tag: "Reject", reason })

/**
 * Do not run the call; `value` is its result (ask-the-user tools, cached answers).
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * const cached: Gate.Gate = ({ call }) => call.name === "get_time" ? Gate.reply("12:00") : Gate.proceed
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const reply = (value: JsonValue): Effect.Effect<Verdict> => Effect.succeed({ _tag: "Reply", value })

/**
 * A person must decide: the run exits with `Paused { reason: "approval" }` before any call
 * of the batch runs.
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * const askForEverything: Gate.Gate = () => Gate.pause
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const pause: Effect.Effect<Verdict> = Effect.succeed({ _tag: "Pause" })

/**
 * The default gate: pauses calls of `sensitive` tools, lets every other call proceed.
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * const gate: Gate.Gate = (input) => input.call.name === "pay" ? Gate.pause : Gate.pauseSensitive(input)
 * ```
 *
 * @since 0.1.0
 * @category gates
 */
export const pauseSensitive: Gate = ({ tool }) => tool?.sensitive === true ? pause : proceed
