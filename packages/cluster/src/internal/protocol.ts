/**
 * The messages of an agent's entity: persisted (stored in the cluster's message table and
 * redelivered to whichever runner owns the entity after a crash), their replies stored too.
 * A client's interruption never interrupts the runner's handling (`Uninterruptible: "client"`):
 * a run, once its start is stored, belongs to the cluster; `Cancel` stops it.
 */
import { Rpc } from "effect/rpc"
import { Decision, Json, Part } from "@agentfx/core"
import { ClusterSchema } from "effect/cluster"
import { Effect, Schema } from "effect"
import { Refused, RunOutcome } from "../RunOutcome.js"
import * as RunOptions from "./runOptions.js"

/** A run's input: text, or text and files. */
export const Input = Schema.Union([Schema.String, Schema.Array(Part.InputPart)])

/** Starts a run under its id, with its run options: a start sent twice (same run id) is one message, answered once. */
export const Start = Rpc.make("Start", {
  payload: {
    runId: Schema.String,
    input: Input,
    conversationId: Schema.optional(Schema.String),
    ...RunOptions.fields
  },
  primaryKey: ({ runId }) => runId,
  success: RunOutcome,
  error: Refused
})

/** A person's decision on a paused run: each one sent is delivered; the run store's claim lets one through. */
export const Decide = Rpc.make("Decide", {
  payload: {
    runId: Schema.String,
    decision: Decision.Decision,
    revision: Schema.optional(Schema.Int),
    decidedBy: Schema.optional(Schema.String),
    /** The decision's id, recorded by its claim (`RunRecord.decisionId`); default the message's request id. */
    decisionId: Schema.optional(Schema.String)
  },
  success: RunOutcome,
  error: Refused
})

/** Cancels a run (`Agent.cancel`), and interrupts it on the runner that is driving it. */
export const Cancel = Rpc.make("Cancel", {
  payload: {
    runId: Schema.String,
    cancelledBy: Schema.optional(Schema.String)
  },
  error: Refused
})

/**
 * One element of a watched run (decision 171): one of its events, numbered by `cursor`
 * (`<driver>:<index>`: the runner's driving of the run's segment, and the event's place in it);
 * a gap — events that were lost with a runner, or that this runner does not keep; or how the run
 * stopped when no event says it (a failure, or a segment read from the run's record); or a
 * heartbeat.
 */
export const Watched = Schema.Union([
  Schema.TaggedStruct("Event", { cursor: Schema.String, event: Json.JsonValue }),
  Schema.TaggedStruct("Gap", { cursor: Schema.String, message: Schema.String }),
  Schema.TaggedStruct("Outcome", { cursor: Schema.String, outcome: RunOutcome }),
  /** Sent every {@link heartbeat} while a watch waits: a watcher that hears nothing for longer asks again (its runner may be gone). */
  Schema.TaggedStruct("Alive", {})
])

/** How often a watch that has nothing to send says it is alive. */
export const heartbeat = "2 seconds"

/** How long a watcher waits for any element (the heartbeat included) before it sends the watch again. */
export const silence = "6 seconds"

/**
 * Follows a segment of a run — the one its start drives (`from` absent) or the one a decision on
 * its pause at revision `from` drives — from after `after`, to its stop. Not persisted: it is
 * served by the runner that owns the run's entity, from what that runner keeps.
 */
export const Watch = Rpc.make("Watch", {
  payload: {
    runId: Schema.String,
    from: Schema.optional(Schema.Int),
    after: Schema.optional(Schema.String)
  },
  success: Watched,
  error: Refused,
  stream: true
})

/** The messages of an agent's entity: those that are persisted and client-uninterruptible, and the watch. */
export const messages = [
  Start.annotate(ClusterSchema.Persisted, true).annotate(ClusterSchema.Uninterruptible, "client"),
  Decide.annotate(ClusterSchema.Persisted, true).annotate(ClusterSchema.Uninterruptible, "client"),
  Cancel.annotate(ClusterSchema.Persisted, true).annotate(ClusterSchema.Uninterruptible, "client"),
  Watch
] as const

/**
 * `payload` as `message`'s payload fields accept it; else refused as `reason`, naming the
 * problem, before anything is stored (the message's constructor would die on it).
 */
export const checked = <Fields extends Schema.Struct.Fields>(
  message: { readonly payloadSchema: { readonly fields: Fields } },
  payload: unknown,
  runId: string,
  reason: "InvalidRunInput" | "DecisionMismatch"
): Effect.Effect<Schema.Struct.Type<Fields>, Refused> =>
  Effect.mapError(
    Schema.decodeUnknownEffect(Schema.toType(Schema.Struct(message.payloadSchema.fields)))(payload) as Effect.Effect<
      Schema.Struct.Type<Fields>,
      Schema.SchemaError
    >,
    (error) =>
      new Refused({
        runId,
        reason,
        message: `${reason === "InvalidRunInput" ? "Invalid run input" : "Not a decision this cluster can send"}: ${error.message}`
      })
  )
