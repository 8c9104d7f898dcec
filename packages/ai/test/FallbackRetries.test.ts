/**
 * `ChatModel.fallback` over the adapters, as docs/providers.md recommends it (decision 164): the
 * plan owns the retries — each attempt is one request (the adapters' own retry, left at its
 * default, is not used under a plan), a step's next attempt waits the longer of its schedule and
 * the server's `Retry-After`, and the backup is asked at once. Real HTTP on loopback servers (OpenAI's
 * Responses API failing, Anthropic's Messages API answering), on the `TestClock`: the requests
 * each server gets and the virtual time between them.
 */
import { ChatModel } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, ExecutionPlan, Fiber, Redacted, Schedule } from "effect"
import { TestClock } from "effect/testing"
import type * as Http from "node:http"
import { AnthropicChatModel, OpenAiChatModel } from "../src/index.js"
import { collect, generate } from "./fixtures.js"
import { anthropic, streamedAnswer } from "./formats.js"
import { eventually, json, loopback, sleepsUntil, sse } from "./loopback.js"

/** The failing primary's answer to every request: a 503, a 429 asking for 2 seconds, or one asking for an hour. */
const failures = {
  "429 for an hour": (res: Http.ServerResponse) =>
    json(res, { error: { message: "You exceeded your current quota.", type: "requests", code: "rate_limit_exceeded" } }, 429, {
      "retry-after": "3600"
    }),
  503: (res: Http.ServerResponse) => json(res, { error: { message: "The server is overloaded.", type: "server_error", code: null } }, 503),
  429: (res: Http.ServerResponse) =>
    json(res, { error: { message: "Rate limit reached. Please try again in 2s.", type: "requests", code: "rate_limit_exceeded" } }, 429, {
      "retry-after": "2"
    })
}

/**
 * The servers and the documented plan: OpenAI 2 attempts `spacing` apart (by default `Schedule.spaced("1 second")`)
 * while the failure may pass, then Anthropic once for any failure but a refused request. Both
 * adapters keep their default retry (`retry` not given).
 */
const setup = (failure: keyof typeof failures, spacing: Schedule.Schedule<unknown> = Schedule.spaced("1 second")) =>
  Effect.gen(function*() {
    const primary = yield* loopback((_req, res) => failures[failure](res))
    const backup = yield* loopback((req, res) => req.body.stream === true ? sse(res, streamedAnswer(anthropic), { named: true }) : anthropic.answer(res))
    const times: { primary: Array<number>; backup: Array<number> } = { primary: [], backup: [] }
    const model = ChatModel.fallback(ExecutionPlan.make(
      {
        provide: OpenAiChatModel.layer({ apiKey: Redacted.make("sk-test"), model: "gpt-4.1-mini", baseUrl: `${primary.url}/v1` }),
        attempts: 2,
        schedule: spacing,
        while: (error: ChatModel.ModelError) => error.isTransient
      },
      {
        provide: AnthropicChatModel.layer({ apiKey: Redacted.make("sk-ant-test"), model: "claude-sonnet-4-5", baseUrl: `${backup.url}/v1` }),
        while: (error: ChatModel.ModelError) => error.reason !== "invalid-request"
      }
    ))
    /** Waits (real time) until `server` has `count` requests, and notes the clock's time of the last. */
    const arrived = (server: "primary" | "backup", count: number) =>
      Effect.gen(function*() {
        yield* eventually(() => (server === "primary" ? primary : backup).requests.length >= count)
        times[server].push(yield* Clock.currentTimeMillis)
      })
    return { primary, backup, model, times, arrived }
  })

/**
 * A call (generate, or stream) on the plan against a primary answering `failure`: the requests
 * of each server and the virtual time each arrived at. `wait` is the time between the primary's
 * two requests: the clock is moved to 1 ms before it (nothing more is sent), then to it.
 */
const call = (failure: keyof typeof failures, wait: number, streamed: boolean, spacing?: Schedule.Schedule<unknown>) =>
  Effect.gen(function*() {
    const { arrived, backup, model, primary, times } = yield* setup(failure, spacing)
    const fiber = yield* Effect.forkChild((streamed ? Effect.asVoid(collect()) : Effect.asVoid(generate())).pipe(Effect.provide(model)))
    yield* arrived("primary", 1)
    // the plan sleeps until its next attempt: no request of the adapter's own in between
    yield* eventually(() => sleepsUntil(wait))
    yield* TestClock.adjust(wait - 1)
    expect(primary.requests.length).toBe(1)
    yield* TestClock.adjust(1)
    yield* arrived("primary", 2)
    yield* arrived("backup", 1)
    yield* Fiber.join(fiber)
    return { requests: [primary.requests.length, backup.requests.length], times: [times.primary, times.backup] }
  }).pipe(Effect.scoped)

describe("ChatModel.fallback over the adapters: the plan owns the retries", () => {
  for (const streamed of [false, true]) {
    const how = streamed ? "streamed" : "generate"

    it.effect(`${how}, a 503: 2 requests to OpenAI 1 s apart (its schedule), then 1 to Anthropic at once — 3 in all, 1 s`, () =>
      Effect.gen(function*() {
        expect(yield* call(503, 1000, streamed)).toEqual({ requests: [2, 1], times: [[0, 1000], [1000]] })
      }))

    it.effect(`${how}, a 429 with Retry-After: 2 — 2 requests to OpenAI 2 s apart (the server's wait, over the schedule's 1 s), then Anthropic at once`, () =>
      Effect.gen(function*() {
        expect(yield* call(429, 2000, streamed)).toEqual({ requests: [2, 1], times: [[0, 2000], [2000]] })
      }))
  }

  it.effect("a 429 asking for an hour (past maxRetryAfter, 60 s): 1 request to OpenAI, then Anthropic at once — no wait", () =>
    Effect.gen(function*() {
      const { arrived, backup, model, primary, times } = yield* setup("429 for an hour")
      const response = yield* generate().pipe(Effect.provide(model))
      yield* arrived("primary", 1)
      yield* arrived("backup", 1)
      expect([response.provider, primary.requests.length, backup.requests.length, times]).toEqual(["anthropic", 1, 1, { primary: [0], backup: [0] }])
    }).pipe(Effect.scoped))

  it.effect("a schedule faster than the server's wait (250 ms after a 429 asking for 2 s) waits the 2 s", () =>
    Effect.gen(function*() {
      expect(yield* call(429, 2000, false, Schedule.exponential("250 millis"))).toEqual({ requests: [2, 1], times: [[0, 2000], [2000]] })
    }))
})
