/**
 * Reasoning kept across turns (docs/decisions/097): each adapter keeps the reasoning its
 * provider requires back — Anthropic's thinking blocks with their signatures and redacted
 * thinking, OpenAI's encrypted reasoning items, DeepSeek's `reasoning_content` — in the
 * assistant message, and sends it back as that API requires, to that server only. Over
 * loopback servers speaking each wire format, streamed and not.
 */
import { Agent, ChatModel, Decision, Message, type Part, Tool } from "@agentfx/core"
import { FetchHttpClient } from "effect/http"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, ExecutionPlan, Layer, Redacted, Schema } from "effect"
import { AiChatModel, AnthropicChatModel, ChatCompletionsModel, OpenAiChatModel } from "../src/index.js"
import { fastRetry, generate, request, streaming, weatherTool } from "./fixtures.js"
import * as EffectAiAnthropic from "./effectAiAnthropic.js"
import { anthropic, chatCompletions, responses, stream, streamedAnswer, type WireFormat } from "./formats.js"
import { json, loopback, sse } from "./loopback.js"
import * as Recorded from "./recordings/reasoning.js"

const key = Redacted.make("sk-test-key")

interface Case {
  readonly name: string
  readonly model: (url: string) => Layer.Layer<ChatModel.ChatModel>
  /** The first answer (reasoning and a call of get_weather), whole and streamed. */
  readonly whole: unknown
  readonly streamed: ReadonlyArray<unknown>
  readonly named: boolean
  /** The wire format of the answer after the tool ran. */
  readonly format: WireFormat
  /** How the reasoning is marked: who made it. */
  readonly owner: (url: string) => string
  /** What the answer's reasoning is kept as. */
  readonly kept: (owner: string) => ReadonlyArray<Part.ReasoningPart>
  /** What the second request sends of the first answer's turn, where the API wants it. */
  readonly sentBack: (body: any) => unknown
  readonly expected: unknown
}

const thinkingText = Recorded.anthropicThinking.thinking

const cases: ReadonlyArray<Case> = [
  {
    name: "Anthropic: the thinking block (with its signature) and the redacted block, first in the assistant turn that called the tool",
    model: (url) => AnthropicChatModel.layer({ apiKey: key, model: "claude-sonnet-4-5", baseUrl: `${url}/v1`, retry: fastRetry, thinking: { budgetTokens: 2048 } }),
    whole: Recorded.anthropicMessage,
    streamed: Recorded.anthropicStream,
    named: true,
    format: anthropic,
    owner: (url) => `anthropic:${url}`,
    kept: (owner) => [
      { _tag: "Reasoning", provider: owner, text: thinkingText, data: Recorded.anthropicThinking },
      { _tag: "Reasoning", provider: owner, text: "", data: Recorded.anthropicRedacted }
    ],
    sentBack: (body) => body.messages[1],
    expected: {
      role: "assistant",
      content: [
        Recorded.anthropicThinking,
        Recorded.anthropicRedacted,
        { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { city: "Oslo" } }
      ]
    }
  },
  {
    name: "OpenAI Responses: the encrypted reasoning item, without its id, before the function call",
    model: (url) => OpenAiChatModel.layer({ apiKey: key, model: "o4-mini", baseUrl: `${url}/v1`, retry: fastRetry }),
    whole: Recorded.openAiResponse,
    streamed: Recorded.openAiStream,
    named: true,
    format: responses,
    owner: (url) => `openai:${url}`,
    kept: (owner) => {
      const { id: _, ...item } = Recorded.openAiReasoningItem
      return [{ _tag: "Reasoning", provider: owner, text: "**Checking the weather**\n\nThe user asks about Oslo.", data: item }]
    },
    sentBack: (body) => body.input.slice(2, 4),
    expected: [
      {
        type: "reasoning",
        summary: Recorded.openAiReasoningItem.summary,
        encrypted_content: Recorded.openAiReasoningItem.encrypted_content
      },
      { type: "function_call", call_id: "call_4ynxfVx3dZyHZ5tDmjBnmXSQ", name: "get_weather", arguments: "{\"city\":\"Oslo\"}" }
    ]
  },
  {
    name: "DeepSeek's Chat Completions: reasoning_content on the assistant message with the tool calls",
    model: (url) => ChatCompletionsModel.layer({ baseUrl: `${url}/v1`, model: "deepseek-reasoner", providerName: "deepseek", retry: fastRetry }),
    whole: Recorded.deepSeekCompletion,
    streamed: Recorded.deepSeekStream,
    named: false,
    format: chatCompletions,
    owner: (url) => `deepseek:${url}`,
    kept: (owner) => [{
      _tag: "Reasoning",
      provider: owner,
      text: "The user asks for Oslo's weather; get_weather gives it.",
      data: { field: "reasoning_content", text: "The user asks for Oslo's weather; get_weather gives it." }
    }],
    sentBack: (body) => body.messages[2],
    expected: {
      role: "assistant",
      content: null,
      reasoning_content: "The user asks for Oslo's weather; get_weather gives it.",
      tool_calls: [{ id: "call_0_8b3c6f0e", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } }]
    }
  },
  {
    name: "AiChatModel (an effect/ai Anthropic LanguageModel): the thinking and redacted blocks, through effect/ai's reasoning parts",
    model: (url) =>
      AiChatModel.layer({ provider: "Anthropic", retry: fastRetry }).pipe(
        Layer.provide(EffectAiAnthropic.layer({ url, apiKey: key, model: "claude-sonnet-4-5" })),
        Layer.provide(FetchHttpClient.layer)
      ),
    whole: Recorded.anthropicMessage,
    streamed: Recorded.anthropicStream,
    named: true,
    format: anthropic,
    owner: () => "effect-ai:anthropic",
    kept: (owner) => [
      { _tag: "Reasoning", provider: owner, text: thinkingText, data: { info: { type: "thinking", signature: Recorded.anthropicThinking.signature } } },
      { _tag: "Reasoning", provider: owner, text: "", data: { info: { type: "redacted_thinking", redactedData: Recorded.anthropicRedacted.data } } }
    ],
    sentBack: (body) => body.messages[1].content.slice(0, 2),
    expected: [Recorded.anthropicThinking, Recorded.anthropicRedacted]
  }
]

const agent = Agent.make({ tools: [weatherTool], system: "You are a weather bot." })

describe("reasoning across turns", () => {
  for (const c of cases) {
    for (const streamed of [false, true]) {
      it.live(`${c.name}${streamed ? " (streamed)" : ""}`, () =>
        Effect.gen(function*() {
          const server = yield* loopback((req, res, index) =>
            index === 0
              ? (streamed ? sse(res, c.streamed, { named: c.named }) : json(res, c.whole))
              : streamed
              ? stream(c.format, streamedAnswer(c.format))(req, res, index)
              : c.format.answer(res)
          )
          const model = c.model(server.url)
          const exit = yield* Agent.run(agent, { input: "Weather in Oslo?" }).pipe(Effect.provide(streamed ? streaming(model) : model))
          assert(exit._tag === "Completed")
          expect(exit.text).toBe("It is sunny in Oslo.")
          expect((exit.messages[1] as Message.AssistantMessage).reasoning).toEqual(c.kept(c.owner(server.url)))
          expect(c.sentBack(server.requests[1]!.body)).toEqual(c.expected)
        }).pipe(Effect.scoped))
    }
  }

  it.live("a run paused for approval after Anthropic thought and called a tool sends the thinking back when it resumes from its checkpoint", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res, index) => (index === 0 ? json(res, Recorded.anthropicMessage) : anthropic.answer(res)))
      const model = cases[0]!.model(server.url)
      const guarded = Agent.make({ tools: [Tool.make("get_weather", { ...weatherToolOptions, needsApproval: true })], system: "You are a weather bot." })
      const paused = yield* Agent.run(guarded, { input: "Weather in Oslo?" }).pipe(Effect.provide(model))
      assert(paused._tag === "Paused")
      const copy = JSON.parse(JSON.stringify(paused.checkpoint))
      const done = yield* Agent.resume(guarded, copy, Decision.approveAll()).pipe(Effect.provide(cases[0]!.model(server.url)))
      assert(done._tag === "Completed")
      expect(cases[0]!.sentBack(server.requests[1]!.body)).toEqual(cases[0]!.expected)
    }).pipe(Effect.scoped))

  it.live("a run that falls back from Anthropic to OpenAI (ChatModel.fallback) sends no Anthropic thinking to OpenAI, nor to Anthropic at another address", () =>
    Effect.gen(function*() {
      // Anthropic thinks and calls the tool, then is overloaded: the plan moves on to OpenAI
      const first = yield* loopback((_req, res, index) =>
        index === 0 ? json(res, Recorded.anthropicMessage) : json(res, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, 529)
      )
      const second = yield* loopback((_req, res) => responses.answer(res))
      const plan = ExecutionPlan.make({ provide: cases[0]!.model(first.url) }, { provide: cases[1]!.model(second.url) })
      const exit = yield* Agent.run(agent, { input: "Weather in Oslo?" }).pipe(Effect.provide(ChatModel.fallback(plan)))
      assert(exit._tag === "Completed")
      const input = second.requests[0]!.body.input as ReadonlyArray<any>
      expect(input.map((item) => item.type ?? item.role)).toEqual(["developer", "user", "function_call", "function_call_output"])
      expect(JSON.stringify(input)).not.toContain(Recorded.anthropicThinking.signature)

      const elsewhere = yield* loopback((_req, res) => anthropic.answer(res))
      const history = exit.messages.slice(0, 3) as ReadonlyArray<ChatModel.ModelMessage>
      yield* generate(request({ messages: history })).pipe(Effect.provide(cases[0]!.model(elsewhere.url)))
      expect(elsewhere.requests[0]!.body.messages[1].content).toEqual([
        { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { city: "Oslo" } }
      ])
    }).pipe(Effect.scoped))

  it.live("OpenAI: include is sent for reasoning models only (by name, or the reasoning option)", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => responses.answer(res))
      const includes = (model: string, reasoning?: boolean) =>
        Effect.map(
          generate().pipe(Effect.provide(OpenAiChatModel.layer({ apiKey: key, model, baseUrl: `${server.url}/v1`, reasoning }))),
          () => server.requests.at(-1)!.body.include
        )
      expect(yield* includes("o4-mini")).toEqual(["reasoning.encrypted_content"])
      expect(yield* includes("gpt-5")).toEqual(["reasoning.encrypted_content"])
      expect(yield* includes("gpt-5-chat-latest")).toBeUndefined()
      expect(yield* includes("gpt-4.1-mini")).toBeUndefined()
      expect(yield* includes("my-deployment", true)).toEqual(["reasoning.encrypted_content"])
      expect(yield* includes("o3", false)).toBeUndefined()
    }).pipe(Effect.scoped))
})

describe("Anthropic extended thinking", () => {
  it.live("sends thinking with its budget; refuses, before any request, what Anthropic refuses with it", () =>
    Effect.gen(function*() {
      const server = yield* loopback((_req, res) => anthropic.answer(res))
      const thinking = (budgetTokens: number, maxTokens?: number) =>
        AnthropicChatModel.layer({ apiKey: key, model: "claude-sonnet-4-5", baseUrl: `${server.url}/v1`, thinking: { budgetTokens }, maxTokens })
      yield* generate().pipe(Effect.provide(thinking(2048)))
      expect(server.requests[0]!.body).toMatchObject({ max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 2048 } })
      const refused = (layer: Layer.Layer<ChatModel.ChatModel>, req = request()) =>
        Effect.map(Effect.flip(generate(req).pipe(Effect.provide(layer))), (e) => `${e.reason}: ${e.message}`)
      const tools = agent.toolDefinitions
      expect(yield* refused(thinking(2048), request({ settings: { temperature: 0.5 } }))).toBe(
        "invalid-request: Anthropic takes no temperature but 1 with extended thinking; settings.temperature is 0.5."
      )
      expect(yield* refused(thinking(2048), request({ tools, toolChoice: "required" }))).toBe(
        `invalid-request: Anthropic cannot force a tool call with extended thinking; the tool choice is "required" (an agent with an output schema and no other tools forces its answer tool).`
      )
      expect(yield* refused(thinking(2048), request({ settings: { maxOutputTokens: 2048 } }))).toBe(
        "invalid-request: Anthropic needs max_tokens above the thinking budget: max_tokens is 2048, thinking.budgetTokens 2048."
      )
      expect(yield* refused(thinking(512))).toBe("invalid-request: Anthropic: thinking.budgetTokens must be an integer of at least 1024, got 512.")
      expect(server.requests.length).toBe(1)
    }).pipe(Effect.scoped))
})

const weatherToolOptions = {
  description: "Current weather for a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.String,
  handler: ({ city }: { readonly city: string }) => Effect.succeed(`Sunny in ${city}`)
}
