/**
 * What a cluster run answers to the message that drove it (a start, a decision): the run
 * completed, paused for a person, or failed — schema-encoded, so that it is stored as the
 * message's reply and read by whichever process sent it, even after a runner crashed.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * A call the person is asked about: its id, its tool and arguments (encoded JSON), why the
 * gate asked (`why`), and for an environment pause the failure. Encoded with `why` as `reason`,
 * the key replies stored before decision 166 have.
 *
 * @example
 * ```ts
 * import { RunOutcome } from "@agentfx/cluster"
 *
 * const call: RunOutcome.PendingCall = { callId: "call_1", toolName: "transfer", args: { amount: 10 } }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PendingCall = Schema.Struct({
  callId: Schema.String,
  toolName: Schema.String,
  args: Schema.Unknown,
  why: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String)
}).pipe(Schema.encodeKeys({ why: "reason" }))

/**
 * @since 0.1.0
 * @category models
 */
export interface PendingCall extends Schema.Schema.Type<typeof PendingCall> {}

/**
 * The run answered. `output` is the answer encoded with the agent's `output` schema, for an
 * agent that has one.
 *
 * @example
 * ```ts
 * import { RunOutcome } from "@agentfx/cluster"
 *
 * RunOutcome.Completed.make({ runId: "r-1", conversationId: "c-1", text: "Done." })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export class Completed extends Schema.TaggedClass<Completed>()("Completed", {
  runId: Schema.String,
  conversationId: Schema.String,
  text: Schema.String,
  output: Schema.optional(Schema.Unknown)
}) {}

/**
 * The run waits for a person: decide it with `AgentCluster.decide`, naming `revision` so that
 * the decision never applies to a later pause. `kind`: the kind of pause (`AgentExit.Paused`'s);
 * in a reply (`RunOutcome`) it is encoded as `reason`, the key replies stored before decision
 * 166 have.
 *
 * @example
 * ```ts
 * import { RunOutcome } from "@agentfx/cluster"
 *
 * RunOutcome.Paused.make({ runId: "r-1", conversationId: "c-1", kind: "approval", revision: 3, pending: [] })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export class Paused extends Schema.TaggedClass<Paused>()("Paused", {
  runId: Schema.String,
  conversationId: Schema.String,
  kind: Schema.Literals(["approval", "environment"]),
  revision: Schema.Int,
  pending: Schema.Array(PendingCall)
}) {}

/**
 * The run failed after it started (a model error, a budget, `MaxIterationsReached`, a defect…):
 * `error` is the failure's tag, `message` what it said.
 *
 * @example
 * ```ts
 * import { RunOutcome } from "@agentfx/cluster"
 *
 * RunOutcome.Failed.make({ runId: "r-1", error: "ModelError", message: "HTTP 500" })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export class Failed extends Schema.TaggedClass<Failed>()("Failed", {
  runId: Schema.String,
  error: Schema.String,
  message: Schema.String
}) {}

/**
 * The run had already ended when a redelivered message reached it (a runner crashed after the
 * run ended and before its reply was stored): how it ended, as the run store remembers it.
 *
 * @example
 * ```ts
 * import { RunOutcome } from "@agentfx/cluster"
 *
 * RunOutcome.Ended.make({ runId: "r-1", status: "completed" })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export class Ended extends Schema.TaggedClass<Ended>()("Ended", {
  runId: Schema.String,
  status: Schema.Literals(["completed", "failed"]),
  decidedBy: Schema.optional(Schema.String)
}) {}

/**
 * The start's input joined the turn running on its conversation (the agent's
 * `onConversationBusy: "steer"`): run `takenBy` added it to its history before its next model
 * call, and answers it there — follow that run (`AgentCluster.watch`). The start has no run of its
 * own: `runId` names no record. A start redelivered after a crash is answered this again, its
 * input taken once.
 *
 * @example
 * ```ts
 * import { RunOutcome } from "@agentfx/cluster"
 *
 * RunOutcome.Steered.make({ runId: "r-2", conversationId: "c-1", takenBy: "r-1" })
 * ```
 *
 * @since 0.3.0
 * @category schemas
 */
export class Steered extends Schema.TaggedClass<Steered>()("Steered", {
  runId: Schema.String,
  conversationId: Schema.String,
  takenBy: Schema.String
}) {}

/**
 * The reply of a start or a decision.
 *
 * @example
 * ```ts
 * import { RunOutcome } from "@agentfx/cluster"
 *
 * const show = (outcome: RunOutcome.RunOutcome) => outcome._tag === "Completed" ? outcome.text : outcome._tag
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunOutcome = Schema.Union([Completed, Paused.pipe(Schema.encodeKeys({ kind: "reason" })), Failed, Ended, Steered])

/**
 * @since 0.1.0
 * @category models
 */
export type RunOutcome = typeof RunOutcome.Type

/**
 * A message refused before it changed anything (its run stays as it was): `reason` is the
 * refusal's tag in `@agentfx/core` (`UnknownDecision`, `IncompleteDecisions`,
 * `InvalidRunInput`, `ConversationBusy`, …), `message` its message. `AgentCluster.decide`
 * and `cancel` turn `RunAlreadyResumed` and `RunNotFound` back into those errors; `run` and
 * `stream` turn `SteerRefused` (a steered input whose running turn paused first: nothing
 * written) into `RunStore.SteerRefused` — for it `runId` is the paused run. A message
 * its schema refuses is refused by the client, before it is stored: a start as
 * `InvalidRunInput`, a decision as `DecisionMismatch`, the message naming the field.
 *
 * @example
 * ```ts
 * import { RunOutcome } from "@agentfx/cluster"
 *
 * new RunOutcome.Refused({ runId: "r-1", reason: "UnknownDecision", message: "call_9 is not pending" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Refused extends Schema.TaggedError<Refused>("@agentfx/cluster/Refused")("Refused", {
  runId: Schema.String,
  reason: Schema.String,
  message: Schema.String,
  status: Schema.optional(Schema.Literals(["running", "paused", "completed", "failed", "finished"])),
  decidedBy: Schema.optional(Schema.String)
}) {}
