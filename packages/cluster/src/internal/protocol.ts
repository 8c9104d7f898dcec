/**
 * The messages of an agent's entity: persisted (stored in the cluster's message table and
 * redelivered to whichever runner owns the entity after a crash), their replies stored too.
 * A client's interruption never interrupts the runner's handling (`Uninterruptible: "client"`):
 * a run, once its start is stored, belongs to the cluster; `Cancel` stops it.
 */
import { Rpc } from "@effect/rpc"
import { Decision, Part } from "@agentfx/core"
import { Schema } from "effect"
import { Refused, RunOutcome } from "../RunOutcome.js"
import * as RunOptions from "./runOptions.js"

/** A run's input: text, or text and files. */
export const Input = Schema.Union(Schema.String, Schema.Array(Part.InputPart))

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
