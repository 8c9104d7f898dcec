/**
 * The adapters' two timeouts: checked once, applied to an effect (the whole attempt) or to
 * a stream (between its elements, and around it).
 */
import { ChatModel } from "@agentfx/core"
import { Duration, Effect, Option, Result, Stream } from "effect"
import type * as ModelRetry from "../ModelRetry.js"
import type * as ModelTimeout from "../ModelTimeout.js"

/** Both timeouts, checked; `Duration.infinity` where disabled. */
export interface Resolved {
  readonly idle: Duration.Duration
  readonly request: Duration.Duration
}

export const defaultIdle: Duration.Duration = Duration.minutes(2)
export const defaultRequest: Duration.Duration = Duration.minutes(10)

/** The longest a timer waits (2³¹ − 1 ms, about 24.8 days): Effect's clock never fires a longer sleep. */
const maxTimerMillis = 2 ** 31 - 1

const check = (name: string, input: Duration.Input | undefined, fallback: Duration.Duration) => {
  if (input === undefined) return Result.succeed(fallback)
  const decoded = Option.filter(Duration.fromInput(input), (duration) => Duration.isGreaterThan(duration, Duration.zero))
  return Option.match(decoded, {
    onNone: () => Result.fail(`${name} must be a positive duration (Duration.infinity disables it), got ${String(input)}`),
    onSome: (duration) =>
      Duration.isFinite(duration) && Duration.toMillis(duration) > maxTimerMillis
        ? Result.fail(`${name} ${String(input)} is longer than a timer can wait (2147483647 ms, about 24.8 days): it would never fire (Duration.infinity disables it)`)
        : Result.succeed(duration)
  })
}

/** `retry.maxRetryAfter`, when given: a duration of zero or more (else the retry schedule could not be built). */
const maxRetryAfterProblem = (input: Duration.Input | undefined): ReadonlyArray<string> => {
  if (input === undefined) return []
  const decoded = Duration.fromInput(input)
  return Option.isSome(decoded) && Duration.toMillis(decoded.value) >= 0 ? [] : [`retry.maxRetryAfter must be a duration of zero or more, got ${String(input)}`]
}

/** The options with their defaults, or an `invalid-request` naming each bad one (the retry's `maxRetryAfter` too). */
export const resolve = (
  options: (ModelTimeout.Options & { readonly retry?: ModelRetry.Options | undefined }) | undefined,
  provider: string
): Result.Result<Resolved, ChatModel.ModelError> => {
  const idle = check("idleTimeout", options?.idleTimeout, defaultIdle)
  const request = check("requestTimeout", options?.requestTimeout, defaultRequest)
  const retry = maxRetryAfterProblem(options?.retry?.maxRetryAfter)
  if (Result.isSuccess(idle) && Result.isSuccess(request) && retry.length === 0) return Result.succeed({ idle: idle.success, request: request.success })
  const problems = [...[idle, request].flatMap((checked) => (Result.isFailure(checked) ? [checked.failure] : [])), ...retry]
  return Result.fail(new ChatModel.ModelError({ reason: "invalid-request", message: `${provider}: ${problems.join("; ")}.` }))
}

const isOff = (duration: Duration.Duration) => !Duration.isFinite(duration)

const requestError = (provider: string, duration: Duration.Duration) =>
  new ChatModel.ModelError({
    reason: "unavailable",
    message: `${provider} did not finish within ${Duration.format(duration)} (requestTimeout).`
  })

const idleError = (provider: string, duration: Duration.Duration) =>
  new ChatModel.ModelError({
    reason: "unavailable",
    message: `${provider} sent nothing for ${Duration.format(duration)} (idleTimeout).`
  })

/** Fails `effect` with the `requestTimeout` error once `duration` has passed (interrupting it). */
export const request = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  duration: Duration.Duration,
  provider: string
): Effect.Effect<A, E | ChatModel.ModelError, R> =>
  isOff(duration) ? effect : Effect.timeoutOrElse(effect, { duration, orElse: () => Effect.fail(requestError(provider, duration)) })

/** Fails `stream` with the `requestTimeout` error once `duration` has passed since it started. */
export const requestStream = <A, E, R>(
  stream: Stream.Stream<A, E, R>,
  duration: Duration.Duration,
  provider: string
): Stream.Stream<A, E | ChatModel.ModelError, R> =>
  isOff(duration) ? stream : Stream.interruptWhen(stream, Effect.andThen(Effect.sleep(duration), Effect.fail(requestError(provider, duration))))

/** Fails `stream` with the `idleTimeout` error when no element arrives for `duration`. */
export const idle = <A, E, R>(
  stream: Stream.Stream<A, E, R>,
  duration: Duration.Duration,
  provider: string
): Stream.Stream<A, E | ChatModel.ModelError, R> =>
  isOff(duration) ? stream : Stream.timeoutOrElse(stream, { duration, orElse: () => Stream.fail(idleError(provider, duration)) })
