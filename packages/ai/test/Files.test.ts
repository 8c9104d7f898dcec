/**
 * Files in what a person says and in tool results, as each adapter sends them (docs/decisions/096):
 * the request bodies a loopback server receives from a whole `Agent.run`, and what stands in
 * text for a file an API cannot take (with a warning, once).
 */
import { Agent, type ChatModel, Part, Tool } from "@agentfx/core"
import { FetchHttpClient } from "effect/http"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted, Schema } from "effect"
import { AiChatModel } from "../src/index.js"
import { fastRetry } from "./fixtures.js"
import { warningsOf } from "./features.js"
import * as EffectAiAnthropic from "./effectAiAnthropic.js"
import { anthropic, chatCompletions, completion, responses, type WireFormat } from "./formats.js"
import { json, loopback } from "./loopback.js"
import * as Responses from "./recordings/responses.js"

const pngBytes = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex")
const png = Part.image({ data: pngBytes })
const pngData = pngBytes.toString("base64")
const pdf = Part.file({ mediaType: "application/pdf", name: "report.pdf", data: Buffer.from("%PDF-1.4\n") })
const pdfData = Buffer.from("%PDF-1.4\n").toString("base64")
const wav = Part.file({ mediaType: "audio/wav", name: "memo.wav", data: Buffer.from("RIFF0000WAVE") })
const input = [
  Part.text("Compare these."),
  png,
  Part.image({ url: "https://example.com/cat.jpg", mediaType: "image/jpeg" }),
  pdf,
  Part.file({ mediaType: "application/pdf", url: "https://example.com/paper.pdf" }),
  wav
]

const chart = Tool.make("chart", {
  description: "Draws a chart",
  parameters: Schema.Struct({}),
  success: Schema.String,
  handler: () => Effect.succeed(Tool.output("a chart", { files: [png] }))
})

const agent = Agent.make({ tools: [chart] })

/** Calls `chart` (id `c1`), then answers. */
const calls: { readonly [format: string]: (res: Parameters<typeof json>[0]) => void } = {
  Anthropic: (res) =>
    json(res, {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "tool_use", id: "c1", name: "chart", input: {} }],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 }
    }),
  Responses: (res) =>
    json(res, Responses.envelope({ status: "completed", output: [{ type: "function_call", id: "fc_1", call_id: "c1", name: "chart", arguments: "{}", status: "completed" }] })),
  "Chat Completions": (res) =>
    json(res, completion({ tool_calls: [{ id: "c1", type: "function", function: { name: "chart", arguments: "{}" } }] }, "tool_calls"))
}

/** Runs the agent on `input` against `format`'s server: the two request bodies and the warnings. */
const run = (format: WireFormat, model: (url: string) => Layer.Layer<ChatModel.ChatModel>, given: ReadonlyArray<Part.InputPart>) =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res, index) => (index === 0 ? calls[format.name]!(res) : format.answer(res)))
    const { value: exit, warnings } = yield* warningsOf(Agent.run(agent, { input: given }).pipe(Effect.provide(model(server.url))))
    assert(exit._tag === "Completed")
    return { first: server.requests[0]!.body, second: server.requests[1]!.body, warnings }
  })

const dataUrl = (mediaType: string, data: string) => `data:${mediaType};base64,${data}`

describe("files", () => {
  it.live("Anthropic: image and document blocks, inline and by URL, in the user turn and in tool_result content; audio in text, warned once", () =>
    Effect.gen(function*() {
      const { first, second, warnings } = yield* run(anthropic, anthropic.model, input)
      expect(first.messages).toEqual([{
        role: "user",
        content: [
          { type: "text", text: "Compare these." },
          { type: "image", source: { type: "base64", media_type: "image/png", data: pngData } },
          { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdfData }, title: "report.pdf" },
          { type: "document", source: { type: "url", url: "https://example.com/paper.pdf" } },
          { type: "text", text: `[file "memo.wav" (audio/wav, 12 bytes) was not sent: Anthropic reads images, PDF and plain text]` }
        ]
      }])
      expect(second.messages[2]).toEqual({
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "c1",
          content: [{ type: "text", text: "\"a chart\"" }, { type: "image", source: { type: "base64", media_type: "image/png", data: pngData } }],
          is_error: false
        }]
      })
      expect(warnings).toEqual([
        `Anthropic cannot take file "memo.wav" (audio/wav, 12 bytes): Anthropic reads images, PDF and plain text. The model is told in text that the file was there.`
      ])
    }).pipe(Effect.scoped))

  it.live("Anthropic: a plain-text document is sent as text; a plain-text URL and an inline TIFF stand in text", () =>
    Effect.gen(function*() {
      const { first } = yield* run(anthropic, anthropic.model, [
        Part.file({ mediaType: "text/plain", name: "notes.txt", data: Buffer.from("héllo") }),
        Part.file({ mediaType: "text/plain", url: "https://example.com/notes.txt" }),
        Part.file({ mediaType: "image/tiff", data: "SUkqAA==" })
      ])
      expect(first.messages[0].content).toEqual([
        { type: "document", source: { type: "text", media_type: "text/plain", data: "héllo" }, title: "notes.txt" },
        { type: "text", text: "[file (text/plain, https://example.com/notes.txt) was not sent: Anthropic reads plain text documents inline only]" },
        { type: "text", text: "[file (image/tiff, 4 bytes) was not sent: Anthropic reads JPEG, PNG, GIF and WebP images inline]" }
      ])
    }).pipe(Effect.scoped))

  it.live("OpenAI Responses: input_image and input_file, inline and by URL, in the user turn and in function_call_output", () =>
    Effect.gen(function*() {
      const { first, second, warnings } = yield* run(responses, responses.model, input)
      expect(first.input[0]).toEqual({
        role: "user",
        content: [
          { type: "input_text", text: "Compare these." },
          { type: "input_image", image_url: dataUrl("image/png", pngData), detail: "auto" },
          { type: "input_image", image_url: "https://example.com/cat.jpg", detail: "auto" },
          { type: "input_file", filename: "report.pdf", file_data: dataUrl("application/pdf", pdfData) },
          { type: "input_file", file_url: "https://example.com/paper.pdf" },
          {
            type: "input_text",
            text: `[file "memo.wav" (audio/wav, 12 bytes) was not sent: the Responses API reads images and documents (PDF, text), not audio or video]`
          }
        ]
      })
      expect(second.input[2]).toEqual({
        type: "function_call_output",
        call_id: "c1",
        output: [{ type: "input_text", text: "\"a chart\"" }, { type: "input_image", image_url: dataUrl("image/png", pngData), detail: "auto" }]
      })
      expect(warnings.length).toBe(1)
    }).pipe(Effect.scoped))

  it.live("Chat Completions: image_url and file parts; a tool's files follow the results in a user message (a tool message takes text only)", () =>
    Effect.gen(function*() {
      const { first, second, warnings } = yield* run(chatCompletions, chatCompletions.model, input)
      expect(first.messages[0]).toEqual({
        role: "user",
        content: [
          { type: "text", text: "Compare these." },
          { type: "image_url", image_url: { url: dataUrl("image/png", pngData) } },
          { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
          { type: "file", file: { filename: "report.pdf", file_data: dataUrl("application/pdf", pdfData) } },
          { type: "text", text: "[file (application/pdf, https://example.com/paper.pdf) was not sent: Chat Completions takes files other than images inline only]" },
          { type: "file", file: { filename: "memo.wav", file_data: dataUrl("audio/wav", Buffer.from("RIFF0000WAVE").toString("base64")) } }
        ]
      })
      expect(second.messages.slice(2)).toEqual([
        { role: "tool", tool_call_id: "c1", content: "a chart" },
        {
          role: "user",
          content: [
            { type: "text", text: "The tool results above came with these files:" },
            { type: "text", text: "From chart (call c1):" },
            { type: "image_url", image_url: { url: dataUrl("image/png", pngData) } }
          ]
        }
      ])
      expect(warnings.length).toBe(1)
    }).pipe(Effect.scoped))

  it.live("AiChatModel (an effect/ai Anthropic LanguageModel): effect/ai file parts; a tool's files follow the results in a user turn", () =>
    Effect.gen(function*() {
      const viaEffectAi = (url: string) =>
        AiChatModel.layer({ provider: "Anthropic", retry: fastRetry }).pipe(
          Layer.provide(EffectAiAnthropic.layer({ url, apiKey: Redacted.make("sk-ant-test"), model: "claude-sonnet-4-5" })),
          Layer.provide(FetchHttpClient.layer)
        )
      const { first, second } = yield* run(anthropic, viaEffectAi, input.slice(0, 5))
      expect(first.messages[0].content).toEqual([
        { type: "text", text: "Compare these." },
        { type: "image", source: { type: "base64", media_type: "image/png", data: pngData } },
        { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdfData }, title: "report.pdf" },
        { type: "document", source: { type: "url", url: "https://example.com/paper.pdf" } }
      ])
      expect(second.messages[2]).toEqual({
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "c1", content: "\"a chart\"", is_error: false },
          { type: "text", text: "The tool results above came with these files:" },
          { type: "text", text: "From chart (call c1):" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: pngData } }
        ]
      })
    }).pipe(Effect.scoped))
})
