/**
 * Typed run state: named slots with reducers. Tools read a snapshot and return writes
 * (`Tool.output(value, { writes })`); writes fold at the batch barrier in call order.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@agentfx/core/Slot")

/**
 * A slot: its value schema (used to store the state in checkpoints), its initial value,
 * and how a write is folded into the current value.
 *
 * @since 0.1.0
 * @category models
 */
export interface Slot<in out A, in W = A> {
  readonly [TypeId]: typeof TypeId
  readonly kind: "last" | "append" | "sum" | "custom"
  readonly schema: Schema.Codec<A, any>
  readonly initial: A
  readonly reduce: (current: A, write: W) => A
}

/**
 * Any slot.
 *
 * @since 0.1.0
 * @category models
 */
export interface Any extends Slot<any, any> {}

/**
 * The state an agent with these slots carries.
 *
 * @since 0.1.0
 * @category type-level
 */
export type StateOf<Slots extends Record<string, Any>> = { readonly [K in keyof Slots]: Slots[K]["initial"] }

/**
 * A slot with a custom reducer.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Slot } from "@agentfx/core"
 *
 * const maxSeen = Slot.make({ schema: Schema.Number, initial: 0, reduce: (a, b: number) => Math.max(a, b) })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A, I, W>(options: {
  readonly schema: Schema.Codec<A, I>
  readonly initial: A
  readonly reduce: (current: A, write: W) => A
}): Slot<A, W> => ({ [TypeId]: TypeId, kind: "custom", ...options })

/**
 * The last write wins (the default reducer). Two writes to one `last` slot in the same
 * batch are logged as a warning: the later call (in call order) wins.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Slot } from "@agentfx/core"
 *
 * const city = Slot.last(Schema.String, "")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const last = <A, I>(schema: Schema.Codec<A, I>, initial: A): Slot<A> => ({
  [TypeId]: TypeId,
  kind: "last",
  schema,
  initial,
  reduce: (_, write) => write
})

/**
 * Each write is a list of items appended to the current list.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Slot } from "@agentfx/core"
 *
 * const notes = Slot.append(Schema.String) // writes: ["a note"]
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const append = <A, I>(item: Schema.Codec<A, I>): Slot<ReadonlyArray<A>> => ({
  [TypeId]: TypeId,
  kind: "append",
  schema: Schema.Array(item),
  initial: [],
  reduce: (current, write) => [...current, ...write]
})

/**
 * Each write is a number added to the total.
 *
 * @example
 * ```ts
 * import { Slot } from "@agentfx/core"
 *
 * const cost = Slot.sum() // writes: 0.25
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const sum = (initial = 0): Slot<number> => ({
  [TypeId]: TypeId,
  kind: "sum",
  schema: Schema.Number,
  initial,
  reduce: (current, write) => current + write
})
