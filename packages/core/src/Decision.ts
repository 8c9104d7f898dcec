/**
 * What a person decides about a paused run, given to `Agent.resume`. A decision is plain data
 * with a `Schema`, so one can arrive from a UI or an HTTP body and be decoded with a typed
 * error.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Schema from "effect/Schema"
import { CallDecisionsFromRecord } from "./internal/callDecisions.js"
import { Budget } from "./Budget.js"
import { JsonValue } from "./Json.js"

/**
 * The decision about one pending call of an approval pause: run it (`Approve`, optionally
 * with edited arguments in their encoded form), do not run it (`Reject`, the model is shown
 * `"rejected: <message>"`), or answer in its place (`Reply`, `value` is its result).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Decision } from "@agentfx/core"
 *
 * Schema.decodeUnknownSync(Decision.CallDecision)({ _tag: "Approve", args: { amount: 10 } })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const CallDecision = Schema.Union([
  Schema.TaggedStruct("Approve", { args: Schema.optional(JsonValue) }),
  Schema.TaggedStruct("Reject", { message: Schema.optional(Schema.String) }),
  Schema.TaggedStruct("Reply", { value: JsonValue })
]).annotate({ identifier: "CallDecision" })

/**
 * @since 0.1.0
 * @category models
 */
export type CallDecision = typeof CallDecision.Type

/**
 * A resume decision:
 * - approval pauses: `ApproveAll`, `RejectAll`, or `ByCall` (one decision per pending call id);
 * - environment pauses: `Retry` (re-run only the failed calls) or `Report` (the model is told the errors);
 * - `MaxIterationsReached`: `Continue` (another `maxIterations` iterations);
 * - `BudgetExceeded`: `Continue`, with `raise` giving the limits' new values.
 *
 * Encoded, it is JSON: `ByCall`'s decisions are an object keyed by call id, decoded into a
 * `ReadonlyMap` (so any id works, `"__proto__"` included).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Decision } from "@agentfx/core"
 *
 * const decision = Schema.decodeUnknownSync(Decision.Decision)({
 *   _tag: "ByCall",
 *   decisions: { call_1: { _tag: "Approve" }, call_2: { _tag: "Reject", message: "not that folder" } }
 * })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Decision = Schema.Union([
  Schema.TaggedStruct("ApproveAll", {}),
  Schema.TaggedStruct("RejectAll", { message: Schema.optional(Schema.String) }),
  Schema.TaggedStruct("ByCall", { decisions: CallDecisionsFromRecord(CallDecision) }),
  Schema.TaggedStruct("Retry", {}),
  Schema.TaggedStruct("Report", {}),
  Schema.TaggedStruct("Continue", { raise: Schema.optional(Budget) })
]).annotate({ identifier: "Decision" })

/**
 * @since 0.1.0
 * @category models
 */
export type Decision = typeof Decision.Type

/**
 * A decision as JSON.
 *
 * @since 0.1.0
 * @category models
 */
export type Encoded = typeof Decision.Encoded

const Decisions = Data.taggedEnum<Decision>()

/**
 * Pattern-matches a decision on its tag.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * const label = Decision.match({
 *   ApproveAll: () => "approve all",
 *   RejectAll: () => "reject all",
 *   ByCall: ({ decisions }) => `${decisions.size} decisions`,
 *   Retry: () => "retry",
 *   Report: () => "report",
 *   Continue: () => "continue"
 * })
 * ```
 *
 * @since 0.1.0
 * @category pattern matching
 */
export const match = Decisions.$match

/**
 * A type guard for one kind of decision.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * declare const decision: Decision.Decision
 * if (Decision.is("ByCall")(decision)) console.log([...decision.decisions.keys()])
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const is = Decisions.$is

/**
 * Approve every pending call as the model asked.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.approveAll()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const approveAll = (): Decision => ({ _tag: "ApproveAll" })

/**
 * Reject every pending call; the model is shown `"rejected: <message>"` (or `"rejected"`).
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.rejectAll({ message: "not today" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const rejectAll = (options?: { readonly message?: string | undefined }): Decision =>
  options?.message === undefined ? { _tag: "RejectAll" } : { _tag: "RejectAll", message: options.message }

/**
 * One decision per pending call id, from a `Map` or an object's own keys. Every pending call
 * must be decided, and only pending calls: otherwise the resume fails with
 * `IncompleteDecisions` / `UnknownDecision` and the run stays resumable.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.byCall({
 *   call_1: Decision.approve({ args: { amount: 10 } }),
 *   call_2: Decision.reject({ message: "too expensive" }),
 *   call_3: Decision.reply({ value: "The user's name is Ada." })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const byCall = (
  decisions: ReadonlyMap<string, CallDecision> | { readonly [callId: string]: CallDecision }
): Decision => ({
  _tag: "ByCall",
  decisions: decisions instanceof Map
    ? new Map(decisions)
    : new Map(Object.keys(decisions).map((id) => [id, (decisions as { readonly [callId: string]: CallDecision })[id]!]))
})

/**
 * Run the call; `args`, when given, replace the model's arguments (encoded form, decoded
 * with the tool's schema before anything is consumed; the assistant message in the
 * history is updated to show them).
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.approve({ args: { path: "/tmp/safe.txt" } })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const approve = (options?: { readonly args?: JsonValue | undefined }): CallDecision =>
  options?.args === undefined ? { _tag: "Approve" } : { _tag: "Approve", args: options.args }

/**
 * Do not run the call; the model is shown `"rejected: <message>"` (or `"rejected"`).
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.reject({ message: "use the staging database" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const reject = (options?: { readonly message?: string | undefined }): CallDecision =>
  options?.message === undefined ? { _tag: "Reject" } : { _tag: "Reject", message: options.message }

/**
 * Do not run the call; `value` is its result.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.reply({ value: "Blue." })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const reply = (options: { readonly value: JsonValue }): CallDecision => ({ _tag: "Reply", value: options.value })

/**
 * Environment pause: run the failed calls again (only them), once the environment is fixed.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.retry()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const retry = (): Decision => ({ _tag: "Retry" })

/**
 * Environment pause: report the failures to the model (as the tools' error results) and go on.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.report()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const report = (): Decision => ({ _tag: "Report" })

/**
 * After `MaxIterationsReached`: continue the run for another `maxIterations` iterations.
 * After `BudgetExceeded`: continue with the limits in `raise` set to their new values (a
 * limit left as it was stops the run again at once). A raise that is not positive integers is
 * refused by `Agent.resume` with `InvalidRunInput`, and the run stays resumable.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.continue()
 * Decision.continue({ raise: { tokens: 50_000 } })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
const continue_ = (options?: { readonly raise?: Budget | undefined }): Decision =>
  options?.raise === undefined ? { _tag: "Continue" } : { _tag: "Continue", raise: options.raise }

export {
  /**
   * @since 0.1.0
   * @category constructors
   */
  continue_ as continue
}
