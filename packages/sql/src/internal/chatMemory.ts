/**
 * Conversations on SQL: one row per message (its JSON encoding), in the order appended.
 */
import * as SqlClient from "effect/sql/SqlClient"
import { ChatMemory, Message } from "@agentfx/core"
import { Array as Arr, Effect, Schema } from "effect"
import { describe } from "./errors.js"

/** Messages as the rows of `agentfx_messages` hold them: JSON text each. */
export const encodeMessages = Schema.encodeEffect(Schema.Array(Schema.fromJsonString(Message.Message)))
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ message: Schema.fromJsonString(Message.Message) })))

/** Rows per INSERT: well under SQLite's and PostgreSQL's limits on bound parameters. */
export const rowsPerInsert = 500

const memoryError = (conversationId: string) => (error: unknown) =>
  new ChatMemory.MemoryError({ message: `Conversation "${conversationId}": ${describe(error)}` })

/** See `SqlChatMemory.make`. */
export const make = Effect.map(SqlClient.SqlClient, (sql): ChatMemory.ChatMemory.Service => {
  const insert = (conversationId: string, messages: ReadonlyArray<Message.Message>) =>
    Effect.flatMap(encodeMessages(messages), (encoded) =>
      Effect.forEach(Arr.chunksOf(encoded, rowsPerInsert), (chunk) =>
        sql`INSERT INTO agentfx_messages ${sql.insert(Arr.map(chunk, (message) => ({ conversation_id: conversationId, message })))}`, { discard: true }))
  const remove = (conversationId: string) => sql`DELETE FROM agentfx_messages WHERE conversation_id = ${conversationId}`
  return {
    get: (conversationId) =>
      sql`SELECT message FROM agentfx_messages WHERE conversation_id = ${conversationId} ORDER BY seq`.pipe(
        Effect.flatMap(decodeRows),
        Effect.map((rows) => rows.map((row) => row.message)),
        Effect.mapError(memoryError(conversationId))
      ),
    // one statement is all or nothing; more (over `rowsPerInsert` messages) are made so by one transaction
    append: (conversationId, messages) =>
      (messages.length > rowsPerInsert ? sql.withTransaction(insert(conversationId, messages)) : insert(conversationId, messages)).pipe(
        Effect.asVoid,
        Effect.mapError(memoryError(conversationId))
      ),
    replace: (conversationId, messages) =>
      sql.withTransaction(Effect.andThen(remove(conversationId), insert(conversationId, messages))).pipe(
        Effect.asVoid,
        Effect.mapError(memoryError(conversationId))
      ),
    remove: (conversationId) => Effect.asVoid(remove(conversationId)).pipe(Effect.mapError(memoryError(conversationId)))
  }
})
