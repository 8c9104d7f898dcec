/**
 * How the adapters of this package retry a failed model call: transient `ModelError`s
 * (`rate-limited`, `unavailable`, `network`) are retried by a `Schedule`, waiting at least
 * as long as the server's `Retry-After`; every other error fails at once. Under a caller that
 * retries itself (`ChatModel.fallback`, which sets `ChatModel.RetriedByCaller`), a call is one
 * attempt: the plan's attempts and waits are the only ones (decision 164).
 *
 * @since 0.1.0
 */
import { ChatModel } from "@agentfx/core"
import { Duration, Effect, Schedule, Stream } from "effect"

/**
 * Retry settings shared by every adapter (`OpenAiChatModel`, `AnthropicChatModel`,
 * `ChatCompletionsModel`, `AiChatModel`). A model that is a step of `ChatModel.fallback` does
 * not use them: the plan's `attempts`, `schedule` and `Retry-After` rule apply instead.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The delays between attempts, fed with each transient `ModelError`; its end ends the
   * retries. Default `defaultSchedule` (3 retries, exponential from 500 ms, jittered).
   * `Schedule.recurs(0)` disables retrying.
   */
  readonly schedule?: Schedule.Schedule<unknown, ChatModel.ModelError>
  /**
   * The longest `Retry-After` worth waiting for. A server asking for longer (a spent daily
   * quota, say) fails the call at once with its `rate-limited` error, `retryAfterMillis`
   * set. Default 60 seconds.
   */
  readonly maxRetryAfter?: Duration.Input
}

/**
 * The default schedule: up to 3 retries, 500 ms, 1 s, 2 s apart, each jittered (×0.8–1.2).
 *
 * @example
 * ```ts
 * import { Schedule } from "effect"
 * import { ModelRetry } from "@agentfx/ai"
 *
 * // twice as many retries, the same back-off
 * const patient = Schedule.exponential("500 millis").pipe(Schedule.jittered, Schedule.upTo({ times: 6 }))
 * const options: ModelRetry.Options = { schedule: patient }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultSchedule: Schedule.Schedule<unknown> = Schedule.exponential("500 millis").pipe(
  Schedule.jittered,
  Schedule.upTo({ times: 3 })
)

/**
 * The schedule the adapters retry with: `options.schedule` (or the default), continued
 * only for transient errors whose `Retry-After` does not exceed `maxRetryAfter`, each delay
 * raised to at least the error's `retryAfterMillis`.
 *
 * @example
 * ```ts
 * import { Effect, Schedule } from "effect"
 * import { ChatModel } from "@agentfx/core"
 * import { ModelRetry } from "@agentfx/ai"
 *
 * declare const call: Effect.Effect<string, ChatModel.ModelError>
 * const retried = Effect.retry(call, ModelRetry.schedule({ schedule: Schedule.spaced("1 second") }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const schedule = (options?: Options): Schedule.Schedule<unknown, ChatModel.ModelError> => {
  const maxRetryAfterMillis = Duration.toMillis(options?.maxRetryAfter ?? "60 seconds")
  return (options?.schedule ?? defaultSchedule).pipe(
    Schedule.setInputType<ChatModel.ModelError>(),
    Schedule.while(({ input }) => input.isTransient && (input.retryAfterMillis ?? 0) <= maxRetryAfterMillis),
    Schedule.modifyDelay(({ input, duration }) =>
      Effect.succeed(Duration.max(duration, Duration.millis(Math.max(0, input.retryAfterMillis ?? 0))))
    )
  )
}

/**
 * Retries a model call by `schedule(options)` — unless the caller retries it
 * (`ChatModel.RetriedByCaller`, set by `ChatModel.fallback` for each attempt of its plan): then
 * the call is made once, and its error is the caller's to retry.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatModel } from "@agentfx/core"
 * import { ModelRetry } from "@agentfx/ai"
 *
 * declare const call: Effect.Effect<ChatModel.ChatResponse, ChatModel.ModelError>
 * const retried = ModelRetry.retry(call, { maxRetryAfter: "10 seconds" })
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const retry = <A, R>(
  effect: Effect.Effect<A, ChatModel.ModelError, R>,
  options?: Options
): Effect.Effect<A, ChatModel.ModelError, R> =>
  Effect.flatMap(Effect.service(ChatModel.RetriedByCaller), (byCaller) => byCaller ? effect : Effect.retry(effect, schedule(options)))

/**
 * Retries a streamed model call by `schedule(options)`, but only until its first part was
 * emitted: after that, a failure ends the stream (the parts already emitted cannot be
 * taken back). Under `ChatModel.RetriedByCaller`, the stream is tried once (as {@link retry}).
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { ChatModel } from "@agentfx/core"
 * import { ModelRetry } from "@agentfx/ai"
 *
 * declare const call: Stream.Stream<ChatModel.StreamPart, ChatModel.ModelError>
 * const retried = ModelRetry.retryStream(call)
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const retryStream = <A, R>(
  stream: Stream.Stream<A, ChatModel.ModelError, R>,
  options?: Options
): Stream.Stream<A, ChatModel.ModelError, R> =>
  Stream.unwrap(Effect.map(Effect.service(ChatModel.RetriedByCaller), (byCaller) => {
    if (byCaller) return stream
    let emitted = false
    return stream.pipe(
      Stream.tap(() => Effect.sync(() => void (emitted = true))),
      Stream.retry(schedule(options).pipe(Schedule.while(() => !emitted)))
    )
  }))
