/**
 * Files and reasoning through a run: a person's input of parts, a tool's files, the model's
 * reasoning — in requests, history, memory, events and checkpoints, held to `limits.fileBytes`.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import type { Message } from "../src/index.js"
import { Agent, AgentEvent, ChatMemory, Decision, Part, ScriptedChatModel, Tool } from "../src/index.js"

const png = Part.image({ name: "dot.png", data: Buffer.from("\x89PNG\r\n\x1a\n0000", "latin1") })
const pdf = Part.file({ mediaType: "application/pdf", name: "report.pdf", data: new Uint8Array([37, 80, 68, 70, 45]) })

const screenshot = (files: ReadonlyArray<Part.FilePart>, needsApproval = false) =>
  Tool.make("screenshot", {
    description: "Takes a screenshot",
    parameters: Schema.Struct({ page: Schema.String }),
    success: Schema.String,
    needsApproval,
    handler: ({ page }) => Effect.succeed(Tool.output(`screenshot of ${page}`, { files }))
  })

const thinking: Part.ReasoningPart = {
  _tag: "Reasoning",
  provider: "anthropic",
  text: "I should look at the page.",
  data: { type: "thinking", thinking: "I should look at the page.", signature: "sig-1" }
}

describe("Part", () => {
  it("builds files from bytes, base64 and URLs; a data: URL becomes inline base64; an image's type comes from its bytes", () => {
    expect(png).toEqual({ _tag: "File", mediaType: "image/png", name: "dot.png", source: { _tag: "Base64", data: Buffer.from("\x89PNG\r\n\x1a\n0000", "latin1").toString("base64") } })
    expect(Part.image({ url: "https://example.com/cat" }).mediaType).toBe("image/*")
    expect(Part.file({ mediaType: "text/plain", url: "data:text/plain;base64,aGk=" }).source).toEqual({ _tag: "Base64", data: "aGk=" })
    expect(Part.inlineBytes(pdf)).toBe(5)
    expect(Part.describe(pdf)).toBe(`file "report.pdf" (application/pdf, 5 bytes)`)
    expect(Schema.is(Part.FilePart)(Part.file({ mediaType: "image/png", url: "not a url" }))).toBe(false)
  })

  it.effect("an input of parts reaches the model in order; memory keeps it; RunStarted has its text and files", () =>
    Effect.gen(function*() {
        const events: Array<AgentEvent.AgentEvent> = []
        const agent = Agent.make({})
        const input = [Part.text("What is in these?"), png, Part.text("And this report?"), pdf]
        const exit = yield* listened(events)(Agent.run(agent, { input, conversationId: "look" }))
        assert(exit._tag === "Completed")
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        const user: Message.UserMessage = { _tag: "User", text: "What is in these?\n\nAnd this report?", parts: input }
        expect(requests[0]!.messages).toEqual([user])
        expect(yield* Effect.flatMap(ChatMemory.ChatMemory, (m) => m.get("look"))).toEqual([user, exit.messages[1]])
        expect(events.find((e) => e._tag === "RunStarted")).toMatchObject({ input: "What is in these?\n\nAnd this report?", files: [png, pdf] })
      }).pipe(Effect.provide(Layer.merge(ScriptedChatModel.layer([ScriptedChatModel.text("A dot and a report.")]), ChatMemory.layerMemory))))

  it.effect("an input of text parts only is a text message", () =>
    Effect.gen(function*() {
      yield* Agent.run(Agent.make({}), { input: [Part.text("a"), Part.text("b")] })
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests[0]!.messages).toEqual([{ _tag: "User", text: "a\n\nb" }])
    }).pipe(Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("ok")]))))

  it.effect("a bad input is InvalidRunInput naming each bad part — base64, URL, media type, size beyond limits.fileBytes — and nothing runs", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ limits: { fileBytes: 4 } })
      const refused = yield* Effect.flip(Agent.run(agent, {
        input: [
          Part.text("look"),
          Part.file({ mediaType: "image/png", data: "not base64!" }),
          Part.file({ mediaType: "image/png", url: "data:image/png,raw" }),
          Part.file({ mediaType: "png", url: "https://example.com/x.png" }),
          pdf,
          { _tag: "Text", text: 5 } as never
        ]
      }))
      assert(refused._tag === "InvalidRunInput")
      expect(refused.problems).toEqual([
        "input part 2 is not a file: source.data: expected base64 (A–Z, a–z, 0–9, + and /, then = padding), without a data: prefix",
        "input part 3 is not a file: source.url: a data: URL is inline data: give its base64 as a Base64 source (Part.file takes a data: URL and does so)",
        "input part 4 is not a file: mediaType: expected a media type: type/subtype, e.g. image/png or application/pdf",
        "input part 5 (application/pdf) is 5 bytes inline, more than the 4 allowed (limits.fileBytes)",
        "input part 6 is not a text part: its text must be a string"
      ])
      expect((yield* Effect.flip(Agent.run(agent, { input: [] })))).toMatchObject({
        problems: ["input must be a string, or a non-empty array of parts (Part.text, Part.image, Part.file)"]
      })
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toEqual([])
    }).pipe(Effect.provide(ScriptedChatModel.layer([]))))

  it.effect("limits.fileBytes must be a positive integer", () =>
    Effect.gen(function*() {
      const invalid = yield* Effect.flip(Effect.fromResult(Agent.validate({ limits: { fileBytes: 0 } })))
      expect(invalid.problems).toEqual(["limits.fileBytes 0 is not a positive integer"])
    }))

  it.effect("a tool's files reach the model with its result, the event and the checkpoint of a later pause; resumed, the history keeps them", () =>
    Effect.gen(function*() {
        const events: Array<AgentEvent.AgentEvent> = []
        const approve = Tool.make("publish", {
          description: "Publishes",
          parameters: Schema.Struct({}),
          success: Schema.String,
          needsApproval: true,
          handler: () => Effect.succeed("published")
        })
        const agent = Agent.make({ tools: [screenshot([png]), approve] })
        const exit = yield* listened(events)(Agent.run(agent, { input: "shoot, then publish" }))
        assert(exit._tag === "Paused")
        const result: Message.ToolResultMessage = {
          _tag: "ToolResult",
          callId: "s1",
          toolName: "screenshot",
          isError: false,
          content: "screenshot of home",
          files: [png]
        }
        expect(exit.checkpoint.messages[2]).toEqual(result)
        expect(exit.checkpoint.version).toBe(3)
        expect(events.find((e) => e._tag === "ToolSucceeded")).toMatchObject({ callId: "s1", value: "screenshot of home", files: [png] })
        const done = yield* Agent.resume(agent, JSON.parse(JSON.stringify(exit.checkpoint)), Decision.approveAll())
        assert(done._tag === "Completed")
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        expect(requests[2]!.messages[2]).toEqual(result)
      }).pipe(Effect.provide(ScriptedChatModel.layer([
      ScriptedChatModel.toolCalls({ id: "s1", name: "screenshot", args: { page: "home" } }),
      ScriptedChatModel.toolCalls({ id: "p1", name: "publish", args: {} }),
      ScriptedChatModel.text("done")
    ]))))

  it.effect("a tool's file beyond limits.fileBytes, or one that is not a file, makes the call a semantic failure naming it", () =>
    Effect.gen(function*() {
        const events: Array<AgentEvent.AgentEvent> = []
        const big = Agent.make({ tools: [screenshot([pdf])], limits: { fileBytes: 4 } })
        const exit = yield* listened(events)(Agent.run(big, { input: "shoot" }))
        assert(exit._tag === "Completed")
        expect(exit.messages[2]).toEqual({
          _tag: "ToolResult",
          callId: "s1",
          toolName: "screenshot",
          isError: true,
          content: `semantic error: Tool "screenshot" returned file 1 (application/pdf) is 5 bytes inline, more than the 4 allowed (limits.fileBytes)`
        })
        // what observes the call sees the failure the history keeps
        expect(events.filter((e) => e._tag === "ToolSucceeded")).toEqual([])
        const broken = Agent.make({ tools: [screenshot([{ _tag: "File", mediaType: "image/png", source: { _tag: "Base64", data: "%%%" } }])] })
        const second = yield* Agent.run(broken, { input: "shoot" })
        assert(second._tag === "Completed")
        expect((second.messages[2] as Message.ToolResultMessage).content).toBe(
          `semantic error: Tool "screenshot" returned file 1 is not a file: source.data: expected base64 (A–Z, a–z, 0–9, + and /, then = padding), without a data: prefix`
        )
      }).pipe(Effect.provide(ScriptedChatModel.layer((request) =>
      request.messages.at(-1)!._tag === "User"
        ? ScriptedChatModel.toolCalls({ id: "s1", name: "screenshot", args: { page: "home" } })
        : ScriptedChatModel.text("done")
    ))))

  it.effect("the model's reasoning is kept in its assistant message, sent back with the history, and checkpointed", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [screenshot([], true)] })
      const exit = yield* Agent.run(agent, { input: "shoot" })
      assert(exit._tag === "Paused")
      const asked: Message.AssistantMessage = {
        _tag: "Assistant",
        text: "",
        toolCalls: [{ id: "s1", name: "screenshot", args: { page: "home" } }],
        reasoning: [thinking]
      }
      expect(exit.checkpoint.messages[1]).toEqual(asked)
      const done = yield* Agent.resume(agent, JSON.parse(JSON.stringify(exit.checkpoint)), Decision.approveAll())
      assert(done._tag === "Completed")
      expect(done.messages[3]).toEqual({ _tag: "Assistant", text: "done", toolCalls: [] })
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests[1]!.messages[1]).toEqual(asked)
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      { ...ScriptedChatModel.toolCalls({ id: "s1", name: "screenshot", args: { page: "home" } }), reasoning: [thinking] },
      { text: "done", reasoning: [] }
    ]))))
})

/** Runs `program` with its events pushed to `events`. */
const listened = (events: Array<AgentEvent.AgentEvent>) => AgentEvent.withSink((event) => void events.push(event))
