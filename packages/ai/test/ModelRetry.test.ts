import { ChatModel } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Result, Schedule, Stream } from "effect"
import { TestClock } from "effect/testing"
import { unwritable } from "../src/internal/wireJson.js"
import { errorFromPayload, errorFromStatus, isErrorPayload, retryAfterMillis } from "../src/internal/httpError.js"
import { ModelRetry } from "../src/index.js"

const rateLimited = (retryAfter?: number) =>
  new ChatModel.ModelError({
    reason: "rate-limited",
    message: "HTTP 429",
    status: 429,
    ...(retryAfter === undefined ? {} : { retryAfterMillis: retryAfter })
  })

/** A call that fails with the given errors in turn, then succeeds; records when each attempt started. */
const flaky = (errors: ReadonlyArray<ChatModel.ModelError>) => {
  const attempts: Array<number> = []
  const call = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    attempts.push(now)
    const error = errors[attempts.length - 1]
    return error === undefined ? Effect.succeed("ok") : Effect.fail(error)
  })
  return { attempts, call }
}

const spaced = { schedule: Schedule.spaced("10 millis").pipe(Schedule.upTo({ times: 5 })) }

describe("ModelRetry", () => {
  describe("retryAfterMillis", () => {
    it("reads delay-seconds, fractions, HTTP dates (from now, never negative) and OpenAI's retry-after-ms", () => {
      expect(retryAfterMillis({ "retry-after": "2" }, 0)).toBe(2000)
      expect(retryAfterMillis({ "Retry-After": " 1.5 " }, 0)).toBe(1500)
      expect(retryAfterMillis({ "retry-after": "Thu, 01 Jan 1970 00:00:05 GMT" }, 1000)).toBe(4000)
      expect(retryAfterMillis({ "retry-after": "Thu, 01 Jan 1970 00:00:05 GMT" }, 9000)).toBe(0)
      expect(retryAfterMillis({ "retry-after-ms": "250", "retry-after": "1" }, 0)).toBe(250)
      expect(retryAfterMillis({ "retry-after": "soon" }, 0)).toBeUndefined()
      expect(retryAfterMillis({ "retry-after": "-3" }, 0)).toBeUndefined()
      expect(retryAfterMillis({}, 0)).toBeUndefined()
    })
  })

  describe("errorFromStatus", () => {
    it("classifies statuses: 429, 5xx, 408 and 409 transient, 401/403 unauthorized, other 4xx invalid-request", () => {
      const of = (status: number, headers = {}) =>
        errorFromStatus({ provider: "P", status, headers, body: undefined, nowMillis: 0 })
      expect([429, 500, 503, 408, 409, 401, 403, 400, 404, 422, 302].map((status) => [of(status).reason, of(status).isTransient])).toEqual([
        ["rate-limited", true],
        ["unavailable", true],
        ["unavailable", true],
        ["unavailable", true],
        ["unavailable", true],
        ["unauthorized", false],
        ["unauthorized", false],
        ["invalid-request", false],
        ["invalid-request", false],
        ["invalid-request", false],
        ["invalid-response", false]
      ])
      expect(of(503, { "retry-after": "3" }).retryAfterMillis).toBe(3000)
      expect(of(400, { "retry-after": "3" }).retryAfterMillis).toBeUndefined()
    })

    it("quotes the server's own message (OpenAI/Anthropic, Ollama, Google's array, plain text)", () => {
      const message = (body: string) => errorFromStatus({ provider: "P", status: 400, headers: {}, body, nowMillis: 0 }).message
      const suffix = " The request was refused; retrying will not help."
      expect(message(`{"error":{"message":"bad tool"}}`)).toBe(`P answered HTTP 400: bad tool.${suffix}`)
      expect(message(`{"error":"model not found"}`)).toBe(`P answered HTTP 400: model not found.${suffix}`)
      expect(message(`[{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}]`)).toBe(
        `P answered HTTP 400: API key not valid.${suffix}`
      )
      expect(message("Bad Gateway")).toBe(`P answered HTTP 400: Bad Gateway.${suffix}`)
      expect(message("")).toBe(`P answered HTTP 400.${suffix}`)
    })
  })

  describe("errorFromPayload", () => {
    const of = (payload: unknown) => errorFromPayload({ provider: "P", payload, where: "mid-stream" })

    it("classifies by a numeric status first, then by the first known code, type or status name", () => {
      const cases: ReadonlyArray<readonly [unknown, string, number | undefined]> = [
        [{ error: { message: "m", type: "server_error", code: null } }, "unavailable", undefined],
        [{ error: { message: "m", type: "tokens", code: "rate_limit_exceeded" } }, "rate-limited", undefined],
        [{ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, "unavailable", undefined],
        [{ type: "error", code: "invalid_prompt", message: "m" }, "invalid-request", undefined],
        [{ error: { message: "m", type: "BadRequestError", code: 400 } }, "invalid-request", 400],
        [{ error: { message: "m", status_code: 429 } }, "rate-limited", 429],
        [[{ error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } }], "unavailable", 503],
        [{ error: { message: "m", status: "RESOURCE_EXHAUSTED" } }, "rate-limited", undefined],
        [{ error: { message: "m", type: "authentication_error" } }, "unauthorized", undefined],
        [{ error: "model not loaded" }, "other", undefined],
        [{ error: { message: "m", type: "mystery" } }, "other", undefined]
      ]
      expect(cases.map(([payload]) => [of(payload).reason, of(payload).status])).toEqual(cases.map(([, reason, status]) => [reason, status]))
    })

    it("quotes the server's message and names the code; without a message, shows the payload's start", () => {
      expect(of([{ error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } }]).message).toBe(
        "P failed mid-stream (UNAVAILABLE): The model is overloaded."
      )
      expect(of({ error: "model not loaded" }).message).toBe("P failed mid-stream: model not loaded")
      expect(errorFromPayload({ provider: "P", payload: { error: { code: 500 } }, where: "with HTTP 200" }).message).toBe(
        "P answered HTTP 200 with an error (500): {\"error\":{\"code\":500}}"
      )
    })

    it("a payload too deep to write is not quoted: a marker takes its place, never a RangeError", () => {
      const deep = JSON.parse(`{"error":${"[".repeat(10_000)}${"]".repeat(10_000)}}`)
      expect(of(deep).message).toBe(`P failed mid-stream: ${unwritable}`)
    })

    it("isErrorPayload: an error envelope, not an answer that carries a null or failed error field", () => {
      expect([
        { error: { message: "m" } },
        { type: "error", error: { type: "api_error", message: "m" } },
        [{ error: { code: 503 } }],
        { object: "response", error: { code: "server_error" }, output: [] },
        { object: "chat.completion", choices: [], error: null },
        { error: null }
      ].map(isErrorPayload)).toEqual([true, true, true, false, false, false])
    })
  })

  describe("retry", () => {
    it.effect("waits at least the Retry-After before the next attempt, even when the schedule is faster", () =>
      Effect.gen(function*() {
        const { attempts, call } = flaky([rateLimited(5000)])
        const fiber = yield* Effect.forkChild(ModelRetry.retry(call, spaced))
        yield* TestClock.adjust("4999 millis")
        expect(attempts).toEqual([0])
        yield* TestClock.adjust("1 millis")
        expect(yield* Fiber.join(fiber)).toBe("ok")
        expect(attempts).toEqual([0, 5000])
      }))

    it.effect("keeps the schedule's delay when it is longer than the Retry-After", () =>
      Effect.gen(function*() {
        const { attempts, call } = flaky([rateLimited(5), rateLimited()])
        const fiber = yield* Effect.forkChild(ModelRetry.retry(call, spaced))
        yield* TestClock.adjust("1 second")
        expect(yield* Fiber.join(fiber)).toBe("ok")
        expect(attempts).toEqual([0, 10, 20])
      }))

    it.effect("the default schedule makes 3 retries, 500 ms, 1 s, 2 s apart (±20%), then fails with the last error", () =>
      Effect.gen(function*() {
        const unavailable = new ChatModel.ModelError({ reason: "unavailable", message: "HTTP 503", status: 503 })
        const { attempts, call } = flaky(Array.from({ length: 10 }, () => unavailable))
        const fiber = yield* Effect.forkChild(Effect.result(ModelRetry.retry(call)))
        yield* TestClock.adjust("1 minute")
        expect(yield* Fiber.join(fiber)).toEqual(Result.fail(unavailable))
        expect(attempts).toHaveLength(4)
        const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!)
        gaps.forEach((gap, i) => {
          expect(gap).toBeGreaterThanOrEqual(500 * 2 ** i * 0.8)
          expect(gap).toBeLessThanOrEqual(500 * 2 ** i * 1.2)
        })
      }))

    it.effect("does not retry a non-transient error", () =>
      Effect.gen(function*() {
        const refused = new ChatModel.ModelError({ reason: "invalid-request", message: "HTTP 400", status: 400 })
        const { attempts, call } = flaky([refused])
        expect(yield* Effect.flip(ModelRetry.retry(call, spaced))).toBe(refused)
        expect(attempts).toEqual([0])
      }))

    it.effect("does not wait for a Retry-After longer than maxRetryAfter: fails at once with it", () =>
      Effect.gen(function*() {
        const { attempts, call } = flaky([rateLimited(3_600_000)])
        const error = yield* Effect.flip(ModelRetry.retry(call, { ...spaced, maxRetryAfter: "1 minute" }))
        expect(error.retryAfterMillis).toBe(3_600_000)
        expect(attempts).toEqual([0])
      }))

    it.effect("under a caller that retries (ChatModel.RetriedByCaller, set by ChatModel.fallback): one attempt, its error the caller's", () =>
      Effect.gen(function*() {
        const { attempts, call } = flaky([rateLimited(), rateLimited()])
        const error = yield* Effect.flip(Effect.provideService(ModelRetry.retry(call, spaced), ChatModel.RetriedByCaller, true))
        expect([error.reason, attempts]).toEqual(["rate-limited", [0]])
        const streamed = flaky([rateLimited()])
        yield* Effect.flip(Stream.runCollect(Stream.provideService(ModelRetry.retryStream(Stream.fromEffect(streamed.call), spaced), ChatModel.RetriedByCaller, true)))
        expect(streamed.attempts).toEqual([0])
      }))

    it.effect("Schedule.recurs(0) disables retrying", () =>
      Effect.gen(function*() {
        const { attempts, call } = flaky([rateLimited()])
        yield* Effect.flip(ModelRetry.retry(call, { schedule: Schedule.recurs(0) }))
        expect(attempts).toEqual([0])
      }))
  })

  describe("retryStream", () => {
    it.effect("retries a stream that failed before its first element, honouring Retry-After", () =>
      Effect.gen(function*() {
        const { attempts, call } = flaky([rateLimited(2000)])
        const fiber = yield* Effect.forkChild(Stream.runCollect(ModelRetry.retryStream(Stream.fromEffect(call), spaced)))
        yield* TestClock.adjust("2 seconds")
        expect(yield* Fiber.join(fiber)).toEqual(["ok"])
        expect(attempts).toEqual([0, 2000])
      }))

    it.effect("does not retry once an element was emitted", () =>
      Effect.gen(function*() {
        let runs = 0
        const stream = Stream.suspend(() => {
          runs += 1
          return Stream.concat(Stream.make("a"), Stream.fail(rateLimited()))
        })
        const error = yield* Effect.flip(Stream.runCollect(ModelRetry.retryStream(stream, spaced)))
        expect(error.reason).toBe("rate-limited")
        expect(runs).toBe(1)
      }))
  })
})
