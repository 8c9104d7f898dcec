import { ChatMemory, Message, Part } from "@agentfx/core"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { join } from "node:path"
import { SqlChatMemory } from "../src/index.js"
import { dialects, storeOn, tempDir } from "./fixtures.js"

const radar = Part.image({ name: "radar.png", data: Buffer.from("89504e470d0a1a0a", "hex") })

const conversation: ReadonlyArray<Message.Message> = [
  { _tag: "System", text: "You are terse." },
  Message.user("Weather in Oslo? \"quoted\", ünïcödé, 🌧"),
  Message.assistant("", [{ id: "c1", name: "weather", args: { city: "Oslo", days: [1, 2], nested: { deep: null } } }], [
    { _tag: "Reasoning", provider: "anthropic:https://api.anthropic.com", text: "Oslo.", data: { type: "thinking", thinking: "Oslo.", signature: "EqQB" } }
  ]),
  { _tag: "ToolResult", callId: "c1", toolName: "weather", content: { temp: -3.5 }, isError: false, files: [radar] },
  { _tag: "Compaction", replaces: 2 },
  Message.assistant("Cold."),
  { _tag: "Compaction", replaces: 4, summary: "Oslo's weather was asked: -3.5 °C." },
  Message.user([Part.text("And this map?"), Part.image({ url: "https://example.com/map.png" }), Part.file({ mediaType: "application/pdf", data: "JVBERg==" })])
]

for (const dialect of dialects) {
  describe(`SqlChatMemory on ${dialect.name}`, () => {
    it.effect("messages of every kind — with files and reasoning — come back as appended, in order, per conversation; another client sees them", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const { memory } = yield* storeOn(database)
        yield* memory.append("c-1", conversation.slice(0, 2))
        yield* memory.append("c-2", [Message.user("other")])
        yield* memory.append("c-1", conversation.slice(2))
        yield* memory.append("c-1", [])
        const other = yield* storeOn(database)
        expect(yield* other.memory.get("c-1")).toEqual(conversation)
        expect(yield* other.memory.get("c-2")).toEqual([Message.user("other")])
        expect(yield* other.memory.get("unknown")).toEqual([])
      }).pipe(Effect.scoped))

    it.effect("replace swaps a conversation's messages (1,200 of them, in chunks), remove forgets it, others are untouched", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const { memory } = yield* storeOn(database)
        yield* memory.append("c-1", conversation)
        yield* memory.append("c-2", [Message.user("kept")])
        const many = Array.from({ length: 1200 }, (_, i) => Message.user(`m${i}`))
        yield* memory.replace("c-1", many)
        expect(yield* memory.get("c-1")).toEqual(many)
        yield* memory.replace("c-1", [Message.user("short")])
        expect(yield* memory.get("c-1")).toEqual([Message.user("short")])
        yield* memory.remove("c-1")
        expect(yield* memory.get("c-1")).toEqual([])
        expect(yield* memory.get("c-2")).toEqual([Message.user("kept")])
      }).pipe(Effect.scoped))

    it.effect("a stored row that is not a message, or a missing table, is a MemoryError naming the conversation", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const { memory, sql } = yield* storeOn(database)
        yield* sql`INSERT INTO agentfx_messages (conversation_id, message) VALUES (${"c-1"}, ${JSON.stringify({ _tag: "Shout" })})`
        const bad = yield* Effect.flip(memory.get("c-1"))
        expect(bad._tag).toBe("MemoryError")
        expect(bad.message).toMatch(/^Conversation "c-1": /)
        expect(bad.message).toContain(`Expected { readonly "_tag": "System", ... } | { readonly "_tag": "User", ... } | { readonly "_tag": "Assistant", ... } | { readonly "_tag": "ToolResult", ... }`)
        expect(bad.message).toContain(`at [0]["message"]`)
        yield* sql`DROP TABLE agentfx_messages`
        const missing = yield* Effect.flip(memory.append("c-9", [Message.user("x")]))
        expect(missing.message).toMatch(dialect.name === "SQLite" ? /^Conversation "c-9": .*no such table: agentfx_messages/ : /^Conversation "c-9": .*relation "agentfx_messages" does not exist/)
      }).pipe(Effect.scoped))

    it.effect("an append of more messages than one INSERT takes is all or nothing: a failing later INSERT leaves the conversation as it was", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const { memory, sql } = yield* storeOn(database)
        yield* memory.append("c-1", [Message.user("before")])
        // the database refuses the 1,100th message: the third INSERT of 500 rows
        if (dialect.name === "SQLite") {
          yield* sql`CREATE TRIGGER poison BEFORE INSERT ON agentfx_messages WHEN NEW.message LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'poisoned'); END`
        } else {
          yield* sql`CREATE FUNCTION poison() RETURNS trigger AS $$ BEGIN IF NEW.message LIKE '%poison%' THEN RAISE EXCEPTION 'poisoned'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`
          yield* sql`CREATE TRIGGER poison BEFORE INSERT ON agentfx_messages FOR EACH ROW EXECUTE FUNCTION poison()`
        }
        const many = Array.from({ length: 1_200 }, (_, i) => Message.user(i === 1_099 ? "poison" : `m${i}`))
        const refused = yield* Effect.flip(memory.append("c-1", many))
        expect(refused.message).toContain("poisoned")
        expect(yield* memory.get("c-1")).toEqual([Message.user("before")])
      }).pipe(Effect.scoped))

    it.effect("SqlChatMemory.layer migrates, then provides the memory", () =>
      Effect.gen(function*() {
        const database = yield* dialect.database
        const history = yield* Effect.flatMap(ChatMemory.ChatMemory, (memory) =>
          Effect.andThen(memory.append("c", [Message.user("hi")]), memory.get("c"))).pipe(
            Effect.provide(SqlChatMemory.layer.pipe(Layer.provide(database.client)))
          )
        expect(history).toEqual([Message.user("hi")])
      }).pipe(Effect.scoped))
  })
}

describe("SqlChatMemory.layer", () => {
  it.effect("provided inside a provide of itself on another database, it is the memory of its own database, not the enclosing one", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const on = (file: string) => SqlChatMemory.layer.pipe(Layer.provide(SqliteClient.layer({ filename: join(dir, file) })))
      const append = (text: string) => Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.append("c", [Message.user(text)]))
      const read = (file: string) => Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("c")).pipe(Effect.provide(on(file)))
      yield* append("outer").pipe(Effect.andThen(append("inner").pipe(Effect.provide(on("inner.db")))), Effect.provide(on("outer.db")))
      expect([yield* read("outer.db"), yield* read("inner.db")]).toEqual([[Message.user("outer")], [Message.user("inner")]])
    }).pipe(Effect.scoped))
})
