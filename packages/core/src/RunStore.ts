/**
 * Where runs are recorded: the authority on a paused run. A pause writes the run's record; a
 * resume claims it atomically (`paused@v → running@v+1`), so that exactly one resume proceeds
 * whoever holds a copy of the checkpoint; a durable store also records each batch and each
 * call's result as they happen, so that a crashed run can be recovered without running a
 * completed call again. The default is in memory; `@agentfx/sql` has SQLite and PostgreSQL.
 *
 * @since 0.1.0
 */
import type { Effect, Option, Scope } from "effect"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { ChatMemory } from "./ChatMemory.js"
import * as internal from "./internal/runStore.js"
import type { Message } from "./Message.js"
import { Outcome } from "./ToolCall.js"

/**
 * Where a run is: running (a turn or a resume holds it), paused (waiting for a decision),
 * or finished (`completed`, or `failed` with a typed error or an interruption).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { RunStore } from "@agentfx/core"
 *
 * Schema.is(RunStore.Status)("paused") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Status = Schema.Literals(["running", "paused", "completed", "failed"])

/**
 * @since 0.1.0
 * @category models
 */
export type Status = typeof Status.Type

/**
 * One run's record. `version` grows by one with every change; a change names the version it
 * expects (compare-and-set). `checkpoint` is the run's encoded checkpoint (`Checkpoint.Encoded`):
 * for a paused run, its pause — the batch with every call's gate verdict or outcome, the
 * pending ids, state, usage, iteration, the messages; for a running run of a durable store,
 * the batch it is running. A finished record keeps no checkpoint.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { RunStore } from "@agentfx/core"
 *
 * const paused = Effect.flatMap(RunStore.RunStore, (store) => store.list({ status: "paused" }))
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunRecord = Schema.Struct({
  runId: Schema.String,
  agent: Schema.String,
  conversationId: Schema.String,
  ephemeral: Schema.Boolean,
  status: Status,
  version: Schema.Int,
  createdAt: Schema.Number,
  updatedAt: Schema.Number,
  checkpoint: Schema.optional(Schema.Unknown),
  /** Who made the decision that resumed the run (`Agent.resume`'s `decidedBy`), until it pauses again. */
  decidedBy: Schema.optional(Schema.String),
  /**
   * When the run was last claimed from its pause (the store's clock, `now`, at the
   * `paused → running` transition), until it pauses again: when its decision was made.
   */
  decidedAt: Schema.optional(Schema.Number),
  /**
   * The id of the decision that claimed the run (`Agent.resume`'s `decisionId`), until it pauses
   * again: a decision delivered twice is told apart by it from a second decision by the same person.
   */
  decisionId: Schema.optional(Schema.String)
}).annotate({ identifier: "RunRecord" })

/**
 * @since 0.1.0
 * @category models
 */
export interface RunRecord extends Schema.Schema.Type<typeof RunRecord> {}

/**
 * A change of a record, made only if it is still at `from` (status and version): the new
 * status, and the checkpoint it has afterwards (absent: none).
 *
 * @since 0.1.0
 * @category models
 */
export interface Transition {
  readonly from: { readonly status: Status; readonly version: number }
  readonly to: Status
  readonly checkpoint?: unknown
  /**
   * Recorded as the record's `decidedBy` (a transition to `paused` clears it; any other keeps it).
   * A claim (`paused → running`) also records its time as `decidedAt`, cleared and kept alike.
   */
  readonly decidedBy?: string | undefined
  /** Recorded as the record's `decisionId` by a claim (`paused → running`); cleared and kept as `decidedBy`. */
  readonly decisionId?: string | undefined
  /**
   * Messages appended to the run's conversation in the store's `conversations`, in the same
   * atomic step as the transition: both are written when it applies, neither when it is refused.
   * Given only to a store that has `conversations` (another fails with a defect).
   */
  readonly messages?: ReadonlyArray<Message> | undefined
  /**
   * Keys of leases held for the current scope that the transition lets go of when it applies
   * (the turn that held them has ended): a SQL store deletes them in the same statement. A lease
   * this does not let go of — it is not given, the store does nothing with it, the transition is
   * refused, the lease was taken in another scope — is let go of when its scope closes, as always.
   */
  readonly letGo?: ReadonlyArray<string> | undefined
  /**
   * Calls recorded as started (`recordStarted`) at the record's new version, in order, in the
   * same atomic step as a transition to `running`: a batch's write and its first call's start, one
   * statement on PostgreSQL. Given only to a store whose `transitionStarts` is `true`.
   */
  readonly started?: ReadonlyArray<string> | undefined
}

/**
 * How a finished run ended, as the store remembers it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Finished {
  readonly status: "completed" | "failed"
  readonly decidedBy?: string | undefined
  /** When its last resume claimed it (the record's `decidedAt`). */
  readonly decidedAt?: number | undefined
}

/**
 * What to list: every field given must match.
 *
 * @since 0.1.0
 * @category models
 */
export interface Filter {
  readonly status?: Status
  readonly agent?: string
  readonly conversationId?: string
  /** At most this many records, most recently updated first. */
  readonly limit?: number
}

/**
 * The store failed (I/O, a database error). Nothing was written by the failing call.
 *
 * @example
 * ```ts
 * import { RunStore } from "@agentfx/core"
 *
 * new RunStore.StoreError({ message: "database is locked" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class StoreError extends Schema.TaggedError<StoreError>("@agentfx/core/StoreError")("StoreError", {
  message: Schema.String
}) {}

/**
 * Another turn or resume holds the conversation (the run was started with
 * `onConversationBusy: "fail"`, the default). Nothing was consumed.
 *
 * @example
 * ```ts
 * import { RunStore } from "@agentfx/core"
 *
 * new RunStore.ConversationBusy({ conversationId: "c-1" }).message // Conversation "c-1" is busy: …
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ConversationBusy extends Data.TaggedError("ConversationBusy")<{ readonly conversationId: string }> {
  override get message(): string {
    return `Conversation "${this.conversationId}" is busy: another turn or resume is running on it (start the run with onConversationBusy: "wait" to queue)`
  }
}

/**
 * The input of `Agent.run` with `onConversationBusy: "steer"` joined the turn that held the
 * conversation: run `runId` added it to its history before its next model call, and answers it
 * there. The input started no turn of its own, and was written once: by that run. A typed answer,
 * not a fault — catch it to follow the run that took it (its events, its exit).
 *
 * @example
 * ```ts
 * import { RunStore } from "@agentfx/core"
 *
 * new RunStore.Steered({ conversationId: "c-1", runId: "run-1" }).message // The input joined run "run-1" …
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class Steered extends Data.TaggedError("Steered")<{ readonly conversationId: string; readonly runId: string }> {
  override get message(): string {
    return `The input joined run "${this.runId}", which was running on conversation "${this.conversationId}": it was added before that run's next model call, and that run answers it`
  }
}

/**
 * A steered input (`onConversationBusy: "steer"`) that no turn took: run `runId` paused for a
 * person before its next model call. Nothing was written — the input is not in the
 * conversation, and no turn superseded the pause: resume the run (`Agent.resume`), or send the
 * input again with another policy (a new turn supersedes the pause).
 *
 * @example
 * ```ts
 * import { RunStore } from "@agentfx/core"
 *
 * new RunStore.SteerRefused({ conversationId: "c-1", runId: "run-1" }).message // Run "run-1" paused …
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class SteerRefused extends Data.TaggedError("SteerRefused")<{ readonly conversationId: string; readonly runId: string }> {
  override get message(): string {
    return `Run "${this.runId}" paused on conversation "${this.conversationId}" before it took the input: nothing was written; resume the run, or send the input as a new turn (it supersedes the pause)`
  }
}

/**
 * The turn was cancelled by a newer input on its conversation (the agent's
 * `onConversationBusy: "interrupt"` or `"rollback"`): run `by` took the conversation over. Its
 * tools were interrupted (their finalizers ran); calls cut off are answered "cancelled" in the
 * conversation — or, with `rolledBack`, every message of the cancelled turn was removed from it.
 *
 * @example
 * ```ts
 * import { RunStore } from "@agentfx/core"
 *
 * new RunStore.TurnInterrupted({ runId: "run-1", conversationId: "c-1", by: "run-2", rolledBack: false }).message
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class TurnInterrupted extends Data.TaggedError("TurnInterrupted")<{
  readonly runId: string
  readonly conversationId: string
  readonly by: string
  readonly rolledBack: boolean
}> {
  override get message(): string {
    return `Run "${this.runId}" was cancelled: run "${this.by}" took conversation "${this.conversationId}" over (onConversationBusy: "${
      this.rolledBack ? "rollback" : "interrupt"
    }")${this.rolledBack ? "; its messages were removed from the conversation" : ""}`
  }
}

/**
 * The id of the input that run `runId` left in conversation `conversationId`'s steering inbox
 * (`onConversationBusy: "steer"`): the same for a start delivered again (which so finds its input
 * where the first left it), another for the same run id on another conversation.
 *
 * @example
 * ```ts
 * import { RunStore } from "@agentfx/core"
 *
 * RunStore.steerId("c-1", "run-2") // '["c-1","run-2"]'
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const steerId = (conversationId: string, runId: string): string => JSON.stringify([conversationId, runId])

/**
 * Where a steered input is (`RunStore.Service.steering`): waiting for the turn that holds its
 * conversation (`pending`), taken by run `runId`, or withdrawn by its sender (`withdrawn`; also
 * an id the store does not know).
 *
 * @since 0.2.0
 * @category models
 */
export type SteerStatus =
  | { readonly _tag: "pending" }
  | { readonly _tag: "taken"; readonly runId: string }
  | { readonly _tag: "withdrawn" }

/**
 * A durable inbox of steered inputs per conversation (`onConversationBusy: "steer"`): a sender
 * leaves its input while a turn holds the conversation; that turn takes every pending input
 * before its next model call, in one atomic step; a sender whose input was not taken when the
 * conversation was let go withdraws it — taking and withdrawing are one compare-and-set each, so
 * an input is taken once or withdrawn, never both.
 *
 * @since 0.2.0
 * @category models
 */
export interface Steering {
  /** Leaves an input (an encoded `Message.UserMessage`) for the turn holding `conversationId`, pending; an id withdrawn before is pending again. */
  readonly offer: (entry: { readonly id: string; readonly conversationId: string; readonly message: unknown }) => Effect.Effect<void, StoreError>
  /**
   * Takes every pending input of the conversation for run `runId`, oldest first; each input is
   * taken once. `record` writes what was taken where the run keeps it (its history, its record),
   * in one step with the take: when it fails — or the process dies before it is done — nothing
   * was taken (a shared store runs both in one transaction). Nothing pending: `record` is not run.
   */
  readonly take: <E>(
    conversationId: string,
    runId: string,
    record: (taken: ReadonlyArray<{ readonly id: string; readonly message: unknown }>) => Effect.Effect<void, E>
  ) => Effect.Effect<void, StoreError | E>
  /** Withdraws a pending input: its status afterwards — `withdrawn`, or `taken` when a turn took it first. */
  readonly withdraw: (id: string) => Effect.Effect<SteerStatus, StoreError>
  /** Where an input is. */
  readonly status: (id: string) => Effect.Effect<SteerStatus, StoreError>
  /**
   * Waits for something to look at: the input taken, or the conversation's holder let go of it
   * (or changed). In memory it is woken; a shared store polls, backing off up to half a second.
   */
  readonly changed: (id: string, conversationId: string) => Effect.Effect<void, StoreError>
}

/**
 * The run store. A `Context.Reference`: without a Layer, runs share one process-wide
 * in-memory store ({@link layerMemory}'s defaults). Exactly-once across processes holds when
 * they share a store (`@agentfx/sql`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { RunStore } from "@agentfx/core"
 *
 * const record = Effect.flatMap(RunStore.RunStore, (store) => store.get("run-1"))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export const RunStore: Context.Reference<RunStore.Service> = Context.Reference<RunStore.Service>("@agentfx/core/RunStore", {
  defaultValue: () => internal.makeInMemory({})
})

/**
 * @since 0.1.0
 * @category services
 */
export declare namespace RunStore {
  /**
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /**
     * Whether runs write their progress here as it happens — a record from the start of a
     * run, each batch before it runs, each call's result as it ends — so that a crashed run
     * can be recovered. An in-memory store is not durable: only pauses are recorded.
     */
    readonly durable: boolean
    /**
     * How long a finished run is remembered (its id and status; a SQL store keeps the whole
     * record). A checkpoint paused this long ago or longer cannot be imported: a replay of it
     * could no longer be told apart from a first use.
     */
    readonly retentionMillis: number
    /**
     * The store's clock, in milliseconds since the epoch: what it stamps records, claims and
     * leases with and measures its retention and leases by, and what a checkpoint's `pausedAt`
     * is read from. A shared store's is the database's, so that processes whose clocks
     * disagree agree on when a finished run is forgotten (decision 056); the in-memory
     * store's is `Clock`.
     */
    readonly now: Effect.Effect<number, StoreError>
    /** The record of a run, if the store has it. */
    readonly get: (runId: string) => Effect.Effect<Option.Option<RunRecord>, StoreError>
    /**
     * The records that match, most recently updated first. Finished records are listed for the
     * store's retention where it keeps them (a SQL store); the in-memory store keeps only their
     * id and status (see `finished`).
     */
    readonly list: (filter?: Filter) => Effect.Effect<ReadonlyArray<RunRecord>, StoreError>
    /** Writes a new record; `false` (and nothing written) when the store has, or had, a run with this id. */
    readonly insert: (record: RunRecord) => Effect.Effect<boolean, StoreError>
    /**
     * Changes a record atomically if it is still at `transition.from`: the record afterwards
     * (version + 1), or `undefined` when the record is not there or is not at `from` (nothing
     * written). Exactly one of several concurrent transitions from one version succeeds.
     */
    readonly transition: (runId: string, transition: Transition) => Effect.Effect<RunRecord | undefined, StoreError>
    /**
     * Takes over a running run whose writer is gone (its process crashed, or its leases lapsed
     * while it was alive): moves the record from `running` at `version` to `running` at
     * `version + 1`, keeping its checkpoint and what was recorded of its batch (its calls'
     * starts and results, now at the new version). Atomic with every write of that batch: once
     * it has returned, a writer still holding `version` records nothing more, so what
     * `started` and `outcomes` read afterwards is all that writer began and finished. The
     * record afterwards, or `undefined` (nothing written) when it is not running at `version`.
     */
    readonly takeOver: (runId: string, version: number) => Effect.Effect<RunRecord | undefined, StoreError>
    /**
     * Records that a call of the batch a running run is executing is about to start (its
     * handler runs next), if the record is still running at `version` — the version its writer
     * holds. `false`, and nothing written, when it is not (another process took the run over):
     * the writer must not run the call. Forgotten at the run's next transition (kept by a `takeOver`).
     */
    readonly recordStarted: (runId: string, version: number, callId: string) => Effect.Effect<boolean, StoreError>
    /**
     * Whether a transition records the starts it carries (`Transition.started`). Then a run's
     * batch is written with its first call's start, right before that call's handler. Absent:
     * each start is its own `recordStarted`. A wrapper that replaces `transition` passes
     * `started` on, or leaves this out.
     */
    readonly transitionStarts?: boolean | undefined
    /** The calls recorded as started since the run's last transition, in the order they were recorded. */
    readonly started: (runId: string) => Effect.Effect<ReadonlyArray<string>, StoreError>
    /**
     * Records one call's result of the batch a running run is executing, if the record is still
     * running at `version`; `false`, and nothing written, when it is not (the writer lost the
     * run). Forgotten at the run's next transition (kept by a `takeOver`).
     */
    readonly recordOutcome: (runId: string, version: number, outcome: Outcome) => Effect.Effect<boolean, StoreError>
    /** The results recorded since the run's last transition, in the order they were recorded. */
    readonly outcomes: (runId: string) => Effect.Effect<ReadonlyArray<Outcome>, StoreError>
    /**
     * How a finished run ended, and who decided its last resume and when, while the store remembers it
     * (for the retention) — whether or not it keeps the whole record.
     */
    readonly finished: (runId: string) => Effect.Effect<Option.Option<Finished>, StoreError>
    /**
     * The conversations this store writes with a run's record (`Transition.messages`): the
     * `ChatMemory` on its own database, when a SQL store and its memory are made together
     * (`SqlStore.layer`). A durable run whose `ChatMemory` is this one writes its messages with
     * its next record write — a batch, a stop, its end — atomically with it (one statement on
     * PostgreSQL, one transaction on SQLite). None: the run writes them to its memory as they come.
     */
    readonly conversations?: ChatMemory.Service | undefined
    /**
     * `get`, and when the record is paused and its conversation is not ephemeral, that
     * conversation held for the scope by the run — `lease("conversation:<its conversationId>",
     * { owner: runId, wait: false })` — in the same step (one statement on PostgreSQL): how a
     * resume by run id begins. `held`: whether the conversation is held now (`false`: not
     * paused, ephemeral, or held by another owner — the caller takes it with `lease` as ever).
     * Optional: without it a resume calls `get`, then `lease`. A wrapper of a store that replaces
     * `get` or `lease` replaces this too, or leaves it out (a spread would keep the inner one).
     */
    readonly getHolding?: (
      runId: string
    ) => Effect.Effect<{ readonly record: Option.Option<RunRecord>; readonly held: boolean }, StoreError, Scope.Scope>
    /**
     * `transition`, and when it applies, `lease(hold.key, { owner: hold.owner, wait: false })`
     * in the same step (one statement on PostgreSQL): a claim that holds its run alive.
     * `held: false` when the transition was refused or another owner holds the key. Optional:
     * without it a claim calls `transition`, then `lease`. A wrapper of a store that replaces
     * `transition` or `lease` replaces this too, or leaves it out (a spread would keep the inner one).
     */
    readonly transitionHolding?: (
      runId: string,
      transition: Transition,
      hold: { readonly key: string; readonly owner: string }
    ) => Effect.Effect<{ readonly record: RunRecord | undefined; readonly held: boolean }, StoreError, Scope.Scope>
    /**
     * Holds `key` for the scope (`conversation:<id>`: one turn at a time per conversation;
     * `run:<id>`: the run is alive). `true` once held; with `wait: false`, `false` at once when
     * another owner holds it; with `wait: true`, waits for it to be let go. In memory a keyed
     * lock; a shared store's is a lease renewed while the scope is open, which expires when
     * its holder crashed (so that another process can take over).
     */
    readonly lease: (
      key: string,
      options: { readonly owner: string; readonly wait: boolean }
    ) => Effect.Effect<boolean, StoreError, Scope.Scope>
    /** Who holds `key` now, if anyone (to tell a refusal's cause). */
    readonly holder: (key: string) => Effect.Effect<Option.Option<string>, StoreError>
    /**
     * The inbox of steered inputs (`onConversationBusy: "steer"`). The in-memory store and the
     * SQL stores have one; without it, a steer is refused as `ConversationBusy`.
     */
    readonly steering?: Steering | undefined
  }
}

/**
 * Options of the in-memory store.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions {
  /**
   * How long the id and status of a finished run are remembered, so that a copy of its
   * checkpoint is refused (`RunAlreadyResumed`) rather than run again; a checkpoint older
   * than this cannot be imported. Default 24 hours. The record itself is not kept.
   */
  readonly retention?: import("effect").Duration.Input
}

/**
 * A fresh in-memory store (what the default uses).
 *
 * @example
 * ```ts
 * import { RunStore } from "@agentfx/core"
 *
 * const store = RunStore.makeInMemory({ retention: "1 hour" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeInMemory: (options?: MemoryOptions) => RunStore.Service = internal.makeInMemory

/**
 * A Layer with its own in-memory store, isolated from other Layers and from the default.
 *
 * @example
 * ```ts
 * import { RunStore } from "@agentfx/core"
 *
 * const StoreLive = RunStore.layerMemory({ retention: "1 hour" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (options?: MemoryOptions): Layer.Layer<never> => Layer.sync(RunStore, () => internal.makeInMemory(options))
