/**
 * Runners starting at once on a fresh PostgreSQL database race creating the engine's tables
 * (`CREATE TABLE IF NOT EXISTS` is not safe against itself: 42710 duplicate_object, 23505 on
 * `pg_type`). A member's cluster Layer is built holding a session advisory lock, so that one
 * member at a time creates them (docs/decisions/083).
 */
import * as SqlClient from "effect/sql/SqlClient"
import { Effect, Layer } from "effect"

/** The lock's key: a pair (its key space is apart from the engine's one-key shard locks). */
const key = [0x61676678, 0x636c7573] as const

/** `layer`, built while this member holds the setup lock of the database. */
export const serialized = <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E | import("effect/sql/SqlError").SqlError, R | SqlClient.SqlClient> =>
  Layer.effectContext(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    return yield* Effect.scoped(Effect.gen(function*() {
      const connection = yield* sql.reserve
      yield* connection.executeUnprepared("SELECT pg_advisory_lock($1, $2)", key, undefined)
      yield* Effect.addFinalizer(() => Effect.ignore(connection.executeUnprepared("SELECT pg_advisory_unlock($1, $2)", key, undefined)))
      return yield* Layer.buildWithScope(layer, scope)
    }))
  }))
