/**
 * A driver's client Layer whose every failure, defects included (a file that cannot be
 * opened), is a `StoreError` with the driver's message.
 */
import type * as SqlClient from "effect/sql/SqlClient"
import { RunStore } from "@agentfx/core"
import { Cause, Layer } from "effect"
import { describe } from "./errors.js"

/** `client`, its failures as `StoreError`s naming `what` could not be opened; an interruption stays one. */
export const opened = <E>(what: string, client: Layer.Layer<SqlClient.SqlClient, E>): Layer.Layer<SqlClient.SqlClient, RunStore.StoreError> =>
  Layer.catchCause(client, (cause) =>
    Cause.isInterruptedOnly(cause)
      ? Layer.failCause(cause as Cause.Cause<never>)
      : Layer.fail(new RunStore.StoreError({ message: `Could not open ${what}: ${describe(Cause.squash(cause))}` })))
