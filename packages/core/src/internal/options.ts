import * as Duration from "effect/Duration"
import * as Result from "effect/Result"

const show = (input: unknown): string => typeof input === "string" ? JSON.stringify(input) : String(input)

/**
 * The longest a timer waits: Node's `setTimeout` and Effect's clock take at most 2³¹ − 1 ms
 * (about 24.8 days); Effect's clock never fires a longer sleep.
 */
const maxTimerMillis = 2 ** 31 - 1

/**
 * Checks a declared timeout: it must parse as a duration that is positive, finite and no
 * longer than a timer can wait (2³¹ − 1 ms, about 24.8 days: a longer one would never fire).
 * Returns the duration, or a sentence saying what is wrong with the input.
 */
export const validateTimeout = (
  input: Duration.Input,
  label = "timeout"
): Result.Result<Duration.Duration, string> => {
  if (typeof input === "number" && Number.isNaN(input)) return Result.fail(`${label} ${show(input)} is not a number`)
  if (typeof input === "number" && input <= 0) return Result.fail(`${label} ${show(input)} is not positive`)
  const decoded = Duration.fromInput(input)
  if (decoded._tag === "None") return Result.fail(`${label} ${show(input)} cannot be parsed as a duration`)
  if (!Duration.isFinite(decoded.value)) return Result.fail(`${label} ${show(input)} is not finite`)
  if (Duration.isLessThanOrEqualTo(decoded.value, Duration.zero)) {
    return Result.fail(`${label} ${show(input)} is not positive`)
  }
  if (Duration.toMillis(decoded.value) > maxTimerMillis) {
    return Result.fail(`${label} ${show(input)} is longer than a timer can wait (2147483647 ms, about 24.8 days): it would never fire`)
  }
  return Result.succeed(decoded.value)
}

const policies: ReadonlyArray<unknown> = ["fail", "wait", "steer", "interrupt", "rollback"]

/** Checks an `onConversationBusy` option (an agent's or a run's): the problem, or `undefined` when it is one of the policies, or absent. */
export const conversationBusyProblem = (value: unknown): string | undefined =>
  value === undefined || policies.includes(value)
    ? undefined
    : `onConversationBusy ${JSON.stringify(value)} must be "fail", "wait", "steer", "interrupt" or "rollback"`

/** Checks a retry count: a non-negative integer. */
export const validateRetryTimes = (times: number): Result.Result<number, string> =>
  Number.isInteger(times) && times >= 0
    ? Result.succeed(times)
    : Result.fail(`retry.times ${show(times)} is not a non-negative integer`)
