/**
 * How long a model call may take. Every adapter of this package has two timeouts: an idle
 * timeout while a streamed answer is read, and a timeout on each request as a whole. Both
 * fail the call with a transient `ModelError` (`unavailable`), which `ModelRetry` retries
 * while nothing of the answer was emitted yet.
 *
 * @since 0.1.0
 */
import type { ChatModel } from "@agentfx/core"
import type { Duration } from "effect"
import { Effect, Result, Stream } from "effect"
import * as Internal from "./internal/timeout.js"

/**
 * The timeouts of an adapter Layer. A value that is not a positive duration fails every
 * call with an `invalid-request` naming it; `Duration.infinity` disables a timeout.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The longest silence while a streamed answer is read: from the response's headers to
   * its first bytes, and between any two reads. Any bytes count, keep-alive comments and
   * `ping` events too (for `AiChatModel`, which sees no bytes: any stream part). `generate`
   * reads no stream: only `requestTimeout` bounds it. Default `defaultIdleTimeout` (2 minutes).
   */
  readonly idleTimeout?: Duration.Input | undefined
  /**
   * The longest one attempt may take, from sending the request to the last byte of the
   * answer, streamed or not. Each retry is a new attempt with the full time; the waits
   * between attempts are not counted. Default `defaultRequestTimeout` (10 minutes).
   */
  readonly requestTimeout?: Duration.Input | undefined
}

/**
 * The default `idleTimeout`: 2 minutes.
 *
 * @example
 * ```ts
 * import { Duration } from "effect"
 * import { ModelTimeout } from "@agentfx/ai"
 *
 * Duration.toMillis(ModelTimeout.defaultIdleTimeout) // 120000
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultIdleTimeout: Duration.Duration = Internal.defaultIdle

/**
 * The default `requestTimeout`: 10 minutes (what OpenAI's and Anthropic's own SDKs wait).
 *
 * @example
 * ```ts
 * import { Duration } from "effect"
 * import { ModelTimeout } from "@agentfx/ai"
 *
 * Duration.toMinutes(ModelTimeout.defaultRequestTimeout) // 10
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultRequestTimeout: Duration.Duration = Internal.defaultRequest

/**
 * Bounds one model call by `requestTimeout`: past it, the call is interrupted (its request
 * aborted) and fails with an `unavailable` `ModelError` naming `provider` and the timeout.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatModel } from "@agentfx/core"
 * import { ModelTimeout } from "@agentfx/ai"
 *
 * declare const call: Effect.Effect<ChatModel.ChatResponse, ChatModel.ModelError>
 * const bounded = ModelTimeout.effect(call, { requestTimeout: "30 seconds" }, "my model")
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const effect = <A, R>(
  self: Effect.Effect<A, ChatModel.ModelError, R>,
  options: Options | undefined,
  provider: string
): Effect.Effect<A, ChatModel.ModelError, R> =>
  Result.match(Internal.resolve(options, provider), {
    onFailure: Effect.fail,
    onSuccess: (resolved) => Internal.request(self, resolved.request, provider)
  })

/**
 * Bounds a streamed model call: `idleTimeout` between two elements (and before the
 * first), `requestTimeout` on the whole stream. Either ends the stream (its request
 * aborted) with an `unavailable` `ModelError`.
 *
 * @example
 * ```ts
 * import { Stream } from "effect"
 * import { ChatModel } from "@agentfx/core"
 * import { ModelTimeout } from "@agentfx/ai"
 *
 * declare const parts: Stream.Stream<ChatModel.StreamPart, ChatModel.ModelError>
 * const bounded = ModelTimeout.stream(parts, { idleTimeout: "20 seconds" }, "my model")
 * ```
 *
 * @since 0.1.0
 * @category combinators
 */
export const stream = <A, R>(
  self: Stream.Stream<A, ChatModel.ModelError, R>,
  options: Options | undefined,
  provider: string
): Stream.Stream<A, ChatModel.ModelError, R> =>
  Result.match(Internal.resolve(options, provider), {
    onFailure: Stream.fail,
    onSuccess: (resolved) => Internal.requestStream(Internal.idle(self, resolved.idle, provider), resolved.request, provider)
  })
