/**
 * Where conversations live between turns, keyed by conversation id.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { Message } from "./Message.js"

/**
 * A memory backend failed (I/O, a database error).
 *
 * @example
 * ```ts
 * import { ChatMemory } from "@agentfx/core"
 *
 * new ChatMemory.MemoryError({ message: "database is locked" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class MemoryError extends Schema.TaggedError<MemoryError>("@agentfx/core/MemoryError")("MemoryError", {
  message: Schema.String
}) {}

/**
 * The conversation store. A `Context.Reference`: without a Layer, runs share one
 * process-wide in-memory store. Provide {@link layerMemory} for an isolated one, or a SQL
 * store from `@agentfx/sql`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatMemory } from "@agentfx/core"
 *
 * const history = Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("conversation-1"))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export const ChatMemory: Context.Reference<ChatMemory.Service> = Context.Reference<ChatMemory.Service>("@agentfx/core/ChatMemory", {
  defaultValue: () => makeInMemory()
})

/**
 * @since 0.1.0
 * @category services
 */
export declare namespace ChatMemory {
  /**
   * @since 0.1.0
   * @category services
   */
  export interface Service {
    /** The conversation's messages, oldest first; empty when unknown. */
    readonly get: (conversationId: string) => Effect.Effect<ReadonlyArray<Message>, MemoryError>
    /** Appends messages to the conversation, creating it when unknown. */
    readonly append: (conversationId: string, messages: ReadonlyArray<Message>) => Effect.Effect<void, MemoryError>
    /** Replaces the conversation's messages. */
    readonly replace: (conversationId: string, messages: ReadonlyArray<Message>) => Effect.Effect<void, MemoryError>
    /** Forgets the conversation. */
    readonly remove: (conversationId: string) => Effect.Effect<void, MemoryError>
  }
}

/**
 * A fresh in-memory store (what the default uses).
 *
 * @example
 * ```ts
 * import { ChatMemory } from "@agentfx/core"
 *
 * const memory = ChatMemory.makeInMemory()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeInMemory = (): ChatMemory.Service => {
  const conversations = new Map<string, Array<Message>>()
  return {
    get: (id) => Effect.sync(() => conversations.get(id)?.slice() ?? []),
    append: (id, messages) =>
      Effect.sync(() => {
        const existing = conversations.get(id)
        if (existing === undefined) conversations.set(id, messages.slice())
        else for (const message of messages) existing.push(message)
      }),
    replace: (id, messages) => Effect.sync(() => void conversations.set(id, messages.slice())),
    remove: (id) => Effect.sync(() => void conversations.delete(id))
  }
}

/**
 * A Layer with its own in-memory store, isolated from other Layers and from the default.
 *
 * @example
 * ```ts
 * import { ChatMemory } from "@agentfx/core"
 *
 * const MemoryLive = ChatMemory.layerMemory
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<never> = Layer.sync(ChatMemory, makeInMemory)
