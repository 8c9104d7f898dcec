/**
 * Scenarios every wire format must pass, each a full run through the agent loop against a
 * loopback server: a 429 then success, a 400, an interrupted call.
 */
import { Agent, type ChatModel } from "@agentfx/core"
import { expect } from "@effect/vitest"
import { Effect, Exit, Fiber, type Layer } from "effect"
import type * as Http from "node:http"
import { collect, generate, request, weatherAgent } from "./fixtures.js"
import { eventually, hang, loopback, type Recorded } from "./loopback.js"

export interface WireFormat {
  /** The adapter on a loopback server (`url` is `http://127.0.0.1:<port>`). */
  readonly model: (url: string) => Layer.Layer<ChatModel.ChatModel>
  /** Answers with a call of get_weather for Oslo. */
  readonly callWeather: (res: Http.ServerResponse) => void
  /** Answers "It is sunny in Oslo." */
  readonly answer: (res: Http.ServerResponse) => void
}

/** The server refuses the first request with `tooMany` (a 429 asking for 150 ms); the run waits that long, retries, completes. */
export const rateLimitedThenCompletes = (
  format: WireFormat,
  tooMany: (res: Http.ServerResponse) => void
): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res, index) =>
      index === 0 ? tooMany(res) : index === 1 ? format.callWeather(res) : format.answer(res)
    )
    const exit = yield* Agent.run(yield* weatherAgent, { input: "Weather in Oslo?" }).pipe(Effect.provide(format.model(server.url)))
    expect(exit._tag === "Completed" && exit.text).toBe("It is sunny in Oslo.")
    expect(server.requests).toHaveLength(3)
    expect(server.requests[1]!.body).toEqual(server.requests[0]!.body)
    expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(145)
  }).pipe(Effect.scoped)

/** The server answers `refuse` (a 400); the run fails with that `ModelError`, after one request. */
export const refused = (
  format: WireFormat,
  refuse: (res: Http.ServerResponse) => void,
  message: (url: string) => string
): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => refuse(res))
    const error = yield* Agent.run(yield* weatherAgent, { input: "Weather?" }).pipe(
      Effect.provide(format.model(server.url)),
      Effect.flip
    )
    expect(error._tag === "ModelError" && [error.reason, error.status, error.isTransient, error.message]).toEqual([
      "InvalidRequest",
      400,
      false,
      message(server.url)
    ])
    expect(server.requests).toHaveLength(1)
  }).pipe(Effect.scoped)

/** The server never answers; interrupting the run closes the connection the server sees. */
export const abortedWhenInterrupted = (format: WireFormat): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => hang(res))
    const fiber = yield* Agent.run(yield* weatherAgent, { input: "Weather?" }).pipe(
      Effect.provide(format.model(server.url)),
      Effect.fork
    )
    yield* eventually(() => server.requests.length === 1)
    expect(Exit.isInterrupted(yield* Fiber.interrupt(fiber))).toBe(true)
    yield* eventually(() => server.aborted.length === 1)
    expect(server.aborted).toEqual([0])
  }).pipe(Effect.scoped)

/**
 * The server streams "It is sunny " + "in Oslo." (30 input, 7 output tokens) with `streamText`;
 * the adapter emits the two text deltas, then exactly one `Done`. Returns what the server received.
 */
export const streamsTextThenDone = (
  format: WireFormat,
  streamText: (res: Http.ServerResponse) => void
): Effect.Effect<ReadonlyArray<Recorded>, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => streamText(res))
    const parts = yield* collect().pipe(Effect.provide(format.model(server.url)))
    expect(parts).toEqual([
      { _tag: "TextDelta", text: "It is sunny " },
      { _tag: "TextDelta", text: "in Oslo." },
      {
        _tag: "Done",
        response: {
          text: "It is sunny in Oslo.",
          toolCalls: [],
          finishReason: "stop",
          usage: { inputTokens: 30, outputTokens: 7, totalTokens: 37 }
        }
      }
    ])
    return server.requests
  }).pipe(Effect.scoped)

/**
 * The model calls get_weather(Oslo) (20 + 5 tokens), then answers (30 + 7 tokens): the run
 * completes with the answer and the summed usage. Returns what the server received.
 */
export const weatherRunCompletes = (format: WireFormat): Effect.Effect<ReadonlyArray<Recorded>, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res, index) => (index === 0 ? format.callWeather(res) : format.answer(res)))
    const exit = yield* Agent.run(yield* weatherAgent, { input: "Weather in Oslo?" }).pipe(Effect.provide(format.model(server.url)))
    expect(exit._tag === "Completed" && [exit.text, exit.usage]).toEqual([
      "It is sunny in Oslo.",
      { inputTokens: 50, outputTokens: 12, totalTokens: 62 }
    ])
    expect(server.requests).toHaveLength(2)
    return server.requests
  }).pipe(Effect.scoped)

/** Three calls with the weather tool and tool choice `none`, `required`, `{ tool: "get_weather" }`: what the server received for each. */
export const toolChoicesSent = (format: WireFormat): Effect.Effect<ReadonlyArray<unknown>, unknown> =>
  Effect.gen(function*() {
    const server = yield* loopback((_req, res) => format.answer(res))
    const tools = (yield* weatherAgent).toolDefinitions
    const choices: ReadonlyArray<ChatModel.ToolChoice> = ["none", "required", { tool: "get_weather" }]
    yield* Effect.forEach(choices, (toolChoice) => generate(request({ tools, toolChoice }))).pipe(
      Effect.provide(format.model(server.url))
    )
    return server.requests.map((r) => r.body.tool_choice)
  }).pipe(Effect.scoped)
