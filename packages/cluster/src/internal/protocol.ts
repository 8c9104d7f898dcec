/**
 * The messages of an agent's entity: persisted (stored in the cluster's message table and
 * redelivered to whichever runner owns the entity after a crash), their replies stored too.
 * A client's interruption never interrupts the runner's handling (`Uninterruptible: "client"`):
 * a run, once its start is stored, belongs to the cluster; `Cancel` stops it.
 */
import { Rpc } from "effect/rpc"
import { Decision, Part } from "@agentfx/core"
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
    decidedBy: Schema.optional(Schema.String)
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

/** The messages of an agent's entity (annotated persisted and client-uninterruptible by the entity). */
export const messages = [Start, Decide, Cancel] as const

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
