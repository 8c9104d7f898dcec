/**
 * A driver's client Layer whose every failure, defects included, is a `StoreError` with the
 * driver's message.
 */
import * as SqlClient from "effect/sql/SqlClient"
import { RunStore } from "@agentfx/core"
import { Cause, Effect, Layer } from "effect"
import { describe } from "./errors.js"

/** `client`, its failures as `StoreError`s naming `what` could not be opened; an interruption stays one. */
export const opened = <E>(what: string, client: Layer.Layer<SqlClient.SqlClient, E>): Layer.Layer<SqlClient.SqlClient, RunStore.StoreError> =>
  Layer.catchCause(client, (cause) =>
    Layer.effect(
      SqlClient.SqlClient,
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Effect.fail(new RunStore.StoreError({ message: `Could not open ${what}: ${describe(Cause.squash(cause))}` }))
    ))
