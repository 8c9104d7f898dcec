/**
 * One call of a batch, as the loop carries it from the gate to its outcome: done (decided
 * without running, or run already), allowed to run, waiting for a person, or a suspended call
 * being resumed. In a checkpoint it is `{ call, outcome }` or `{ call, verdict }`.
 */
import * as Data from "effect/Data"
import type * as Checkpoint from "../Checkpoint.js"
import type { Outcome, ToolCall } from "../ToolCall.js"
import type { Resumption } from "./suspension.js"

/** One call of a batch. */
export type BatchItem = Data.TaggedEnum<{
  /** Decided without running — a gate's or a person's reject or reply, a call beyond the agent's limits — or run already: its outcome. */
  Done: { readonly call: ToolCall; readonly outcome: Outcome }
  /**
   * May run: a gate or a person let it (verdict `proceed`). `decoded`: its arguments were decoded
   * with its tool's `parameters` before the gate, and `args` holds them; else they are decoded when
   * it runs (or their failure tells the model what was wrong).
   */
  Runnable: { readonly call: ToolCall; readonly decoded?: true | undefined; readonly args?: unknown }
  /**
   * Waits for a person (verdict `pause`, or none): it runs only once a decision approves it.
   * `why`: as the gate said (`Gate.pause({ why })`).
   */
  Waiting: { readonly call: ToolCall; readonly why?: string | undefined }
  /** A suspended call (a delegate whose child paused) being resumed: what its handler continues from. */
  Resuming: { readonly call: ToolCall; readonly resumption: Resumption }
}>

export const { $match: match } = Data.taggedEnum<BatchItem>()

/** A call that has its outcome. */
export type Done = Data.TaggedEnum.Value<BatchItem, "Done">

type Fields<Tag extends BatchItem["_tag"]> = Omit<Data.TaggedEnum.Value<BatchItem, Tag>, "_tag">

// Plain objects, not `Data` values: nothing compares items structurally, and a batch makes two
// per call (its gate's, its end's) — `Data`'s prototype and `Object.assign` cost ~0.1 µs each
// (docs/performance.md, round 7).

/** A call that has its outcome. */
export const Done = ({ call, outcome }: Fields<"Done">): Done => ({ _tag: "Done", call, outcome })

/** A call that may run; `decoded`: `args` holds its decoded arguments. */
export const Runnable = ({ args, call, decoded }: Fields<"Runnable">): Data.TaggedEnum.Value<BatchItem, "Runnable"> =>
  decoded === true ? { _tag: "Runnable", call, decoded, args } : { _tag: "Runnable", call }

/** A call that waits for a person, and why when the gate said. */
export const Waiting = ({ call, why }: Fields<"Waiting">): Data.TaggedEnum.Value<BatchItem, "Waiting"> =>
  why === undefined ? { _tag: "Waiting", call } : { _tag: "Waiting", call, why }

/** A suspended call being resumed. */
export const Resuming = ({ call, resumption }: Fields<"Resuming">): Data.TaggedEnum.Value<BatchItem, "Resuming"> => ({
  _tag: "Resuming",
  call,
  resumption
})

/** A call that runs when its batch runs (allowed, or resumed). */
export type ToRun = Data.TaggedEnum.Value<BatchItem, "Runnable" | "Resuming">

/** Whether the call runs when its batch runs. */
export const runs = (item: BatchItem): item is ToRun => item._tag === "Runnable" || item._tag === "Resuming"

/**
 * The item as a checkpoint holds it. A resumed call is recorded as allowed to run: should the
 * run crash meanwhile, its recovery runs the call afresh (its child's resume data is not kept).
 */
export const toCheckpoint = (item: BatchItem): Checkpoint.BatchItem =>
  item._tag === "Done"
    ? { call: item.call, outcome: item.outcome }
    : item._tag === "Waiting"
    ? { call: item.call, verdict: "pause", ...(item.why === undefined ? {} : { why: item.why }) }
    : { call: item.call, verdict: "proceed" }

/** A checkpoint's item: nothing runs that no verdict allowed (no verdict: it waits for a person). */
export const fromCheckpoint = (item: Checkpoint.BatchItem): BatchItem =>
  item.outcome !== undefined
    ? Done({ call: item.call, outcome: item.outcome })
    : item.verdict === "proceed"
    ? Runnable({ call: item.call })
    : Waiting({ call: item.call, why: item.why })
