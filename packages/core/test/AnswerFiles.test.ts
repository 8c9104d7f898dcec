/**
 * Files in a model's answer (images it generated): carried, never dropped (decision 164) — in
 * the assistant message of the history and of memory, in `ModelResponded`, in the next request,
 * in the context estimate, and in checkpoints (version 4 only when a checkpoint holds them).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema } from "effect"
import type { Message } from "../src/index.js"
import {
  Agent,
  AgentEvent,
  ChatMemory,
  Checkpoint,
  ContextWindow,
  Decision,
  Part,
  ScriptedChatModel,
  Tool
} from "../src/index.js"

const logo = Part.image({ name: "logo.png", data: Buffer.from("89504e470d0a1a0a0000000d", "hex") })
const linked = Part.image({ url: "https://images.example.com/logo-2.png", mediaType: "image/png" })

const publish = Tool.make("publish", {
  description: "Publishes the logo",
  parameters: Schema.Struct({}),
  success: Schema.String,
  needsApproval: true,
  handler: () => Effect.succeed("published")
})

const listened = (events: Array<AgentEvent.AgentEvent>) => AgentEvent.withSink((event) => void events.push(event))

describe("files in a model's answer", () => {
  it.effect("are kept in the assistant message (history, memory, exit), named in ModelResponded, and sent back with the history", () =>
    Effect.gen(function*() {
      const events: Array<AgentEvent.AgentEvent> = []
      const agent = Agent.make({})
      const first = yield* listened(events)(Agent.run(agent, { input: "Draw a logo", conversationId: "logo" }))
      assert(first._tag === "Completed")
      const answer: Message.AssistantMessage = { _tag: "Assistant", text: "Here it is.", toolCalls: [], files: [logo, linked] }
      expect(first.messages[1]).toEqual(answer)
      expect(first.text).toBe("Here it is.")
      expect(events.find((e) => e._tag === "ModelResponded")).toMatchObject({ text: "Here it is.", files: [logo, linked] })
      expect(yield* Effect.flatMap(ChatMemory.ChatMemory, (memory) => memory.get("logo"))).toEqual([first.messages[0], answer])
      yield* Agent.run(agent, { input: "Make it blue", conversationId: "logo" })
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests[1]!.messages[1]).toEqual(answer)
      // an answer without files has no files field, nor its event
      expect(events.filter((e) => e._tag === "ModelResponded").length).toBe(1)
    }).pipe(Effect.provide(Layer.merge(
      ScriptedChatModel.layer([{ text: "Here it is.", files: [logo, linked] }, ScriptedChatModel.text("Blue now.")]),
      ChatMemory.layerMemory
    ))))

  it.effect("a checkpoint holding them is version 4, resumed with them; one without them stays version 3", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [publish] })
      const exit = yield* Agent.run(agent, { input: "Draw a logo and publish it" })
      assert(exit._tag === "Paused")
      const asked: Message.AssistantMessage = {
        _tag: "Assistant",
        text: "Drawn; publishing.",
        toolCalls: [{ id: "p1", name: "publish", args: {} }],
        files: [logo]
      }
      expect(exit.checkpoint.version).toBe(4)
      expect(exit.checkpoint.messages[1]).toEqual(asked)
      expect(Schema.decodeUnknownSync(Checkpoint.AnyVersion)(exit.checkpoint).messages[1]).toEqual(asked)
      const done = yield* Agent.resume(agent, JSON.parse(JSON.stringify(exit.checkpoint)), Decision.approveAll())
      assert(done._tag === "Completed")
      expect(done.messages[1]).toEqual(asked)
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests[1]!.messages[1]).toEqual(asked)
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      { text: "Drawn; publishing.", files: [logo], toolCalls: [{ id: "p1", name: "publish", args: {} }] },
      ScriptedChatModel.text("Published.")
    ]))))

  it.effect("a signed version-4 checkpoint relabelled version 3 is refused (its signature covers the version)", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [publish], checkpointSecret: Redacted.make("a secret of at least thirty-two bytes") })
      const exit = yield* Agent.run(agent, { input: "Draw a logo and publish it" })
      assert(exit._tag === "Paused")
      expect(exit.checkpoint.version).toBe(4)
      const refused = yield* Effect.flip(Agent.resume(agent, { ...exit.checkpoint, version: 3 }, Decision.approveAll()))
      expect(refused).toMatchObject({ _tag: "InvalidCheckpoint", reason: "signature" })
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      { text: "Drawn.", files: [logo], toolCalls: [{ id: "p1", name: "publish", args: {} }] },
      ScriptedChatModel.text("Published.")
    ]))))

  it("count in a context policy's estimate as any file does: an image 1,600 tokens, apart from its base64", () => {
    const photo = Part.image({ data: Buffer.alloc(1_000_000, 7) })
    const answer: Message.AssistantMessage = { _tag: "Assistant", text: "Here.", toolCalls: [], files: [photo] }
    const { files: _, ...bare } = answer
    expect(ContextWindow.estimateTokens({ messages: [answer] })).toBe(Math.ceil(JSON.stringify({ ...bare, files: [null] }).length / 4) + 1_600)
  })
})
