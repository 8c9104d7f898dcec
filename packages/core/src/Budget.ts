/**
 * What a run may spend: tokens (as the provider reports them), model calls and tool calls.
 * A limit reached stops the run with `BudgetExceeded`: the token limits before each model call
 * and each batch (the batch of the model call that crossed one does not run), the model-call
 * limit before each model call, the tool-call limit before a batch that would pass it. The
 * checkpoint holds a batch that did not run; `Decision.continue({ raise })` runs it first, then
 * goes on (decision 063).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

const Limit = Schema.Int.check(Schema.isGreaterThan(0))

/**
 * A run's limits; each one left out is no limit. `tokens` counts `totalTokens` of every model
 * call of the run (across resumes), `inputTokens` and `outputTokens` theirs; `modelCalls` the
 * model calls, `toolCalls` the calls that ran: whose handler was called, failed ones included (not
 * those rejected or answered in their place, nor those that failed before their handler — a
 * tool the agent does not have, arguments its `parameters` reject, beyond the agent's `limits`).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Budget } from "@agentfx/core"
 *
 * const budget: Budget.Budget = { tokens: 20_000, toolCalls: 10 }
 * Schema.is(Budget.Budget)(budget) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Budget = Schema.Struct({
  tokens: Schema.optional(Limit),
  inputTokens: Schema.optional(Limit),
  outputTokens: Schema.optional(Limit),
  modelCalls: Schema.optional(Limit),
  toolCalls: Schema.optional(Limit)
}).annotate({ identifier: "Budget" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Budget extends Schema.Schema.Type<typeof Budget> {}

/**
 * The name of one limit.
 *
 * @example
 * ```ts
 * import type { Budget } from "@agentfx/core"
 *
 * const limit: Budget.Limit = "toolCalls"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Limit = keyof Budget

/**
 * What a run has spent, in the units of its limits.
 *
 * @since 0.1.0
 * @category models
 */
export type Spent = { readonly [K in Limit]: number }

/**
 * The first limit of `budget` that `spent` reaches, with what it allows — the run stops there.
 *
 * @example
 * ```ts
 * import { Budget } from "@agentfx/core"
 *
 * Budget.reached({ toolCalls: 3 }, { tokens: 10, inputTokens: 7, outputTokens: 3, modelCalls: 2, toolCalls: 3 })
 * // { limit: "toolCalls", allowed: 3, used: 3 }
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const reached = (
  budget: Budget,
  spent: Spent
): { readonly limit: Limit; readonly allowed: number; readonly used: number } | undefined => {
  for (const limit of ["tokens", "inputTokens", "outputTokens", "modelCalls", "toolCalls"] as const) {
    const allowed = budget[limit]
    if (allowed !== undefined && spent[limit] >= allowed) return { limit, allowed, used: spent[limit] }
  }
  return undefined
}
