/**
 * Files in a model's answer (images it generated), read from each wire format, streamed and not,
 * kept in the history and sent back on the next call — described in text where the API takes
 * no files in the model's own turn, as `effect/ai` file parts through `AiChatModel`
 * (docs/decisions/164). Never dropped unseen: a file that cannot be kept is an `invalid-response`.
 */
import { Agent, AgentEvent, ChatMemory, type ChatModel, Part } from "@agentfx/core"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import { LanguageModel, type Prompt, type Response } from "effect/ai"
import type * as Http from "node:http"
import { AiChatModel } from "../src/index.js"
import { warningsOf } from "./features.js"
import { anthropic, anthropicMessage, chatCompletions, chunk, completion, responses, responsesMessage, usageChunk, type WireFormat } from "./formats.js"
import { json, loopback, sse } from "./loopback.js"
import * as Responses from "./recordings/responses.js"

const pngBytes = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex")
const pngData = pngBytes.toString("base64")
const logo = Part.image({ data: pngData })
const text = "Here is your logo."

/** How each wire format answers with `text` and the logo, whole and streamed; and the assistant turn it is then sent back as. */
interface Case {
  readonly format: WireFormat
  readonly answer: (res: Http.ServerResponse) => void
  readonly streamed: ReadonlyArray<unknown>
  /** The assistant turn of the next request. */
  readonly sentBack: (body: any) => unknown
  readonly expected: unknown
  readonly warning: string
}

const leftOut = (why: string) => `[file (image/png, 16 bytes) was not sent: ${why}]`

const imageCall = { type: "image_generation_call", id: "ig_1", status: "completed", output_format: "png", revised_prompt: "a logo", result: pngData }

const cases: ReadonlyArray<Case> = [
  {
    format: responses,
    answer: (res) =>
      json(res, Responses.envelope({ status: "completed", output: [imageCall, responsesMessage(text)], usage: Responses.usage(30, 7) })),
    streamed: [
      { type: "response.created", sequence_number: 0, response: Responses.envelope({ status: "in_progress" }) },
      { type: "response.output_item.added", sequence_number: 1, output_index: 0, item: { type: "image_generation_call", id: "ig_1", status: "in_progress" } },
      { type: "response.image_generation_call.generating", sequence_number: 2, output_index: 0, item_id: "ig_1" },
      // a partial image is not the answer
      { type: "response.image_generation_call.partial_image", sequence_number: 3, output_index: 0, item_id: "ig_1", partial_image_index: 0, partial_image_b64: "AAAA" },
      { type: "response.output_item.done", sequence_number: 4, output_index: 0, item: imageCall },
      { type: "response.output_item.added", sequence_number: 5, output_index: 1, item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] } },
      { type: "response.output_text.delta", sequence_number: 6, output_index: 1, content_index: 0, item_id: "msg_1", delta: "Here is " },
      { type: "response.output_text.delta", sequence_number: 7, output_index: 1, content_index: 0, item_id: "msg_1", delta: "your logo." },
      { type: "response.output_item.done", sequence_number: 8, output_index: 1, item: responsesMessage(text) },
      {
        type: "response.completed",
        sequence_number: 9,
        response: Responses.envelope({ status: "completed", output: [imageCall, responsesMessage(text)], usage: Responses.usage(30, 7) })
      }
    ],
    sentBack: (body) => body.input[1],
    expected: {
      role: "assistant",
      content: [
        { type: "output_text", text },
        { type: "output_text", text: leftOut("the Responses API takes text only in the model's own turn") }
      ]
    },
    warning: "OpenAI cannot take file (image/png, 16 bytes): the Responses API takes text only in the model's own turn. The model is told in text that the file was there."
  },
  {
    format: anthropic,
    answer: (res) =>
      json(res, anthropicMessage([{ type: "text", text }, { type: "image", source: { type: "base64", media_type: "image/png", data: pngData } }], "end_turn", 30, 7)),
    streamed: [
      { type: "message_start", message: anthropicMessage([], null, 30, 1) },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Here is " } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "your logo." } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "image", source: { type: "base64", media_type: "image/png", data: pngData } } },
      { type: "content_block_stop", index: 1 },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 7 } },
      { type: "message_stop" }
    ],
    sentBack: (body) => body.messages[1],
    expected: {
      role: "assistant",
      content: [{ type: "text", text }, { type: "text", text: leftOut("Anthropic takes no files in an assistant turn") }]
    },
    warning: "Anthropic cannot take file (image/png, 16 bytes): Anthropic takes no files in an assistant turn. The model is told in text that the file was there."
  },
  {
    format: chatCompletions,
    // OpenRouter's shape for image models: `images` beside the content
    answer: (res) =>
      json(
        res,
        completion(
          { content: text, images: [{ type: "image_url", image_url: { url: `data:image/png;base64,${pngData}` }, index: 0 }] },
          "stop",
          { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37 }
        )
      ),
    streamed: [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Here is " }),
      chunk({ content: "your logo." }),
      chunk({ images: [{ type: "image_url", image_url: { url: `data:image/png;base64,${pngData}` }, index: 0 }] }),
      chunk({ content: null }, "stop"),
      usageChunk(30, 7),
      "[DONE]"
    ],
    sentBack: (body) => body.messages[1],
    expected: { role: "assistant", content: `${text}\n\n${leftOut("Chat Completions takes text only in an assistant message")}` },
    warning:
      "the Chat Completions server at URL/v1/chat/completions cannot take file (image/png, 16 bytes): Chat Completions takes text only in an assistant message. The model is told in text that the file was there."
  }
]

/**
 * Two turns of one conversation on `format`'s server: the first answered with the logo (streamed
 * when `streamed`: a listener makes the loop stream), the second with text. The first turn's
 * exit and events, and the second request's body.
 */
const twoTurns = (test: Case, streamed: boolean) =>
  Effect.gen(function*() {
    const server = yield* loopback((req, res, index) =>
      index === 0 ? (req.body.stream === true ? sse(res, test.streamed, { named: test.format.named }) : test.answer(res)) : test.format.answer(res)
    )
    const events: Array<AgentEvent.AgentEvent> = []
    const listen = streamed ? AgentEvent.withSink((event) => void events.push(event)) : <A, E, R>(effect: Effect.Effect<A, E, R>) => effect
    const agent = Agent.make({})
    const { value: exit, warnings } = yield* warningsOf(Effect.gen(function*() {
      const first = yield* listen(Agent.run(agent, { input: "Draw a logo", conversationId: "logo" }))
      yield* Agent.run(agent, { input: "Thanks", conversationId: "logo" })
      return first
    }).pipe(Effect.provide(Layer.merge(test.format.model(server.url), ChatMemory.layerMemory))))
    assert(exit._tag === "Completed")
    expect(server.requests[0]!.body.stream === true).toBe(streamed)
    return { exit, events, warnings, second: server.requests[1]!.body, url: server.url }
  }).pipe(Effect.scoped)

describe("files in a model's answer", () => {
  for (const test of cases) {
    for (const streamed of [false, true]) {
      it.live(`${test.format.name}${streamed ? ", streamed" : ""}: kept in the assistant message, described in text when sent back, warned once`, () =>
        Effect.gen(function*() {
          const { events, exit, second, url, warnings } = yield* twoTurns(test, streamed)
          expect(exit.text).toBe(text)
          expect(exit.messages[1]).toEqual({ _tag: "Assistant", text, toolCalls: [], files: [logo] })
          if (streamed) {
            expect(events.filter((e) => e._tag === "TextDelta").map((e) => e.text)).toEqual(["Here is ", "your logo."])
            expect(events.find((e) => e._tag === "ModelResponded")).toMatchObject({ text, files: [logo] })
          }
          expect(test.sentBack(second)).toEqual(test.expected)
          expect(warnings).toEqual([test.warning.replace("URL", url)])
        }))
    }
  }

  it.live("Chat Completions: image_url chunks of an array content (Mistral's shape), by URL and as a data: URL of another type", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) =>
        json(res, completion({
          content: [
            { type: "text", text: "Two drafts." },
            { type: "image_url", image_url: "https://images.example.com/draft-1.png" },
            { type: "image_url", image_url: { url: "data:image/svg+xml,%3Csvg%2F%3E" } }
          ]
        }, "stop"))
      )
      const exit = yield* Agent.run(Agent.make({}), { input: "Draw" }).pipe(Effect.provide(chatCompletions.model(server.url)))
      assert(exit._tag === "Completed")
      expect(exit.messages[1]).toEqual({
        _tag: "Assistant",
        text: "Two drafts.",
        toolCalls: [],
        files: [
          { _tag: "File", mediaType: "image/*", source: { _tag: "Url", url: "https://images.example.com/draft-1.png" } },
          { _tag: "File", mediaType: "image/svg+xml", source: { _tag: "Base64", data: Buffer.from("<svg/>").toString("base64") } }
        ]
      })
    }).pipe(Effect.scoped))

  it.live("an image that cannot be kept (not base64, no URL) fails the call with invalid-response naming it, never dropped unseen", () =>
    Effect.gen(function*() {
      const bodies: ReadonlyArray<readonly [WireFormat, (res: Http.ServerResponse) => void, string]> = [
        [responses, (res) => json(res, Responses.envelope({ status: "completed", output: [{ ...imageCall, result: "not base64!" }] })), "OpenAI answered with a file that cannot be kept"],
        [anthropic, (res) => json(res, anthropicMessage([{ type: "image", source: { type: "file", file_id: "file_011" } }], "end_turn", 1, 1)), "Anthropic answered with a image block whose source cannot be kept as a file"],
        [chatCompletions, (res) => json(res, completion({ content: "x", images: [{ type: "image_url" }] }, "stop")), "answered with an image that has no URL"]
      ]
      for (const [format, answer, message] of bodies) {
        const server = yield* loopback((_req, res) => answer(res))
        const error = yield* Effect.flip(Agent.run(Agent.make({}), { input: "Draw" }).pipe(Effect.provide(format.model(server.url))))
        expect([error._tag, (error as ChatModel.ModelError).reason, (error as ChatModel.ModelError).message]).toEqual([
          "ModelError",
          "invalid-response",
          expect.stringContaining(message)
        ])
      }
    }).pipe(Effect.scoped))

  describe("AiChatModel", () => {
    /** A LanguageModel answering with text and the logo as an `effect/ai` file part; records each prompt. */
    const drawing = () => {
      const prompts: Array<Prompt.Prompt> = []
      const parts: Array<Response.PartEncoded> = [
        { type: "text", text },
        { type: "file", mediaType: "image/png", data: pngData },
        { type: "finish", reason: "stop", usage: { inputTokens: { total: 3 }, outputTokens: { total: 1 } } }
      ]
      const streamParts: Array<Response.StreamPartEncoded> = [
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Here is " },
        { type: "text-delta", id: "t", delta: "your logo." },
        { type: "text-end", id: "t" },
        { type: "file", mediaType: "image/png", data: pngData },
        { type: "finish", reason: "stop", usage: { inputTokens: { total: 3 }, outputTokens: { total: 1 } } }
      ]
      const layer = Layer.effect(
        LanguageModel.LanguageModel,
        LanguageModel.make({
          generateText: (options) => Effect.sync(() => (prompts.push(options.prompt), parts)),
          streamText: (options) => Stream.suspend(() => (prompts.push(options.prompt), Stream.fromIterable(streamParts)))
        })
      )
      return { prompts, layer: AiChatModel.layer({ provider: "Drawing" }).pipe(Layer.provide(layer)) }
    }

    for (const streamed of [false, true]) {
      it.effect(`effect/ai file parts${streamed ? ", streamed" : ""}: kept, and sent back as effect/ai file parts in the assistant turn`, () => {
        const model = drawing()
        return Effect.gen(function*() {
          const events: Array<AgentEvent.AgentEvent> = []
          const listen = streamed ? AgentEvent.withSink((event) => void events.push(event)) : <A, E, R>(effect: Effect.Effect<A, E, R>) => effect
          const agent = Agent.make({})
          const first = yield* listen(Agent.run(agent, { input: "Draw a logo", conversationId: "logo" }))
          assert(first._tag === "Completed")
          expect(first.messages[1]).toEqual({ _tag: "Assistant", text, toolCalls: [], files: [logo] })
          if (streamed) expect(events.filter((e) => e._tag === "TextDelta").map((e) => e.text)).toEqual(["Here is ", "your logo."])
          yield* Agent.run(agent, { input: "Thanks", conversationId: "logo" })
          const assistant = model.prompts[1]!.content.find((message) => message.role === "assistant")!
          expect(assistant.content.map((part) => part.type === "file" ? [part.type, part.mediaType, part.data] : [part.type])).toEqual([
            ["text"],
            ["file", "image/png", pngData]
          ])
        }).pipe(Effect.provide(Layer.merge(model.layer, ChatMemory.layerMemory)))
      })
    }
  })
})
