/**
 * What a person decides about a paused run, given to `Agent.resume`.
 *
 * @since 0.1.0
 */
import type { JsonValue } from "./Json.js"

/**
 * The decision about one pending call of an approval pause.
 *
 * @since 0.1.0
 * @category models
 */
export type CallDecision =
  | { readonly _tag: "Approve"; readonly args?: JsonValue }
  | { readonly _tag: "Reject"; readonly message?: string }
  | { readonly _tag: "Reply"; readonly message: string }

/**
 * A resume decision:
 * - approval pauses: `approveAll`, `rejectAll`, or `byCall` (one decision per pending call);
 * - environment pauses: `retry` (re-run only the failed calls) or `proceed` (the model gets the errors);
 * - `MaxIterationsReached`: `continue` (another `maxIterations` iterations).
 *
 * @since 0.1.0
 * @category models
 */
export type Decision =
  | { readonly _tag: "ApproveAll" }
  | { readonly _tag: "RejectAll"; readonly reason?: string }
  | { readonly _tag: "ByCall"; readonly decisions: { readonly [callId: string]: CallDecision } }
  | { readonly _tag: "Retry" }
  | { readonly _tag: "Proceed" }
  | { readonly _tag: "Continue" }

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
 * Reject every pending call; the model is shown `"rejected: <reason>"`.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.rejectAll("not today")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const rejectAll = (reason?: string): Decision =>
  reason === undefined ? { _tag: "RejectAll" } : { _tag: "RejectAll", reason }

/**
 * One decision per pending call id. Every pending call must be decided, and only pending
 * calls: otherwise the resume fails with `IncompleteDecisions` / `UnknownDecision` and the
 * checkpoint stays resumable.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.byCall({
 *   call_1: Decision.approve({ args: { amount: 10 } }),
 *   call_2: Decision.reject({ message: "too expensive" }),
 *   call_3: Decision.reply({ message: "The user's name is Ada." })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const byCall = (decisions: { readonly [callId: string]: CallDecision }): Decision => ({
  _tag: "ByCall",
  decisions
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
export const approve = (options?: { readonly args?: JsonValue }): CallDecision =>
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
export const reject = (options?: { readonly message?: string }): CallDecision =>
  options?.message === undefined ? { _tag: "Reject" } : { _tag: "Reject", message: options.message }

/**
 * Do not run the call; `message` is its result.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.reply({ message: "Blue." })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const reply = (options: { readonly message: string }): CallDecision => ({ _tag: "Reply", message: options.message })

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
 * Environment pause: give the failures to the model and go on.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.proceed()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const proceed = (): Decision => ({ _tag: "Proceed" })

/**
 * After `MaxIterationsReached`: continue the run for another `maxIterations` iterations.
 *
 * @example
 * ```ts
 * import { Decision } from "@agentfx/core"
 *
 * Decision.continue()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
const continue_ = (): Decision => ({ _tag: "Continue" })

export {
  /**
   * @since 0.1.0
   * @category constructors
   */
  continue_ as continue
}
