/**
 * `ChatMemory` on any `effect/sql` client (SQLite or PostgreSQL): a conversation's messages
 * as rows of JSON, in the order they were appended. A `replace` is one transaction.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "effect/sql/SqlClient"
import { ChatMemory } from "@agentfx/core"
import { Effect, Layer } from "effect"
import * as internal from "./internal/chatMemory.js"
import { migrate } from "./internal/migrations.js"

/**
 * The memory on the `SqlClient` in context. The schema must exist: use {@link layer}, or run
 * `SqlStore.migrate` first.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SqlChatMemory, SqlStore } from "@agentfx/sql"
 *
 * const history = Effect.gen(function*() {
 *   yield* SqlStore.migrate
 *   const memory = yield* SqlChatMemory.make
 *   return yield* memory.get("conversation-1")
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<ChatMemory.ChatMemory.Service, never, SqlClient.SqlClient> = internal.make

/**
 * The memory as a Layer on the `SqlClient` it is given: migrates the schema (a failure is a
 * `MemoryError` with the database's message), then provides the `ChatMemory`. Built anew
 * wherever it is provided (`Layer.fresh`): one value for every database, it is never shared
 * with an enclosing `Effect.provide` of it on another client.
 *
 * @example
 * ```ts
 * import { PgClient } from "@effect/sql-pg"
 * import { Layer, Redacted } from "effect"
 * import { SqlChatMemory } from "@agentfx/sql"
 *
 * const MemoryLive = SqlChatMemory.layer.pipe(
 *   Layer.provide(PgClient.layer({ url: Redacted.make("postgres://localhost/app") }))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<never, ChatMemory.MemoryError, SqlClient.SqlClient> = Layer.fresh(Layer.effect(
  ChatMemory.ChatMemory,
  Effect.andThen(Effect.mapError(migrate, (error) => new ChatMemory.MemoryError({ message: error.message })), internal.make)
))
