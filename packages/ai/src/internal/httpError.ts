/**
 * HTTP failures as `ModelError`s: the status decides the reason, `Retry-After` the wait.
 */
import { ChatModel } from "@agentfx/core"

/**
 * The wait a server asked for, in milliseconds, from its `retry-after-ms` header (OpenAI)
 * or its `Retry-After` header: delay-seconds (`"30"`, `"1.5"`) or an HTTP date, counted
 * from `nowMillis`. `undefined` when there is none or it cannot be read; never negative.
 *
 * @internal
 */
export const retryAfterMillis = (
  headers: { readonly [name: string]: string | undefined },
  nowMillis: number
): number | undefined => {
  const header = (name: string) => {
    for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return headers[key]?.trim()
    return undefined
  }
  const millis = header("retry-after-ms")
  if (millis !== undefined && /^\d+(\.\d+)?$/.test(millis)) return Math.ceil(Number(millis))
  const value = header("retry-after")
  if (value === undefined || value.length === 0) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000)
  // an HTTP date names its day and month ("Wed, 21 Oct 2015 07:28:00 GMT"); Date.parse alone also takes "-3"
  const date = /[a-z]{3}/i.test(value) ? Date.parse(value) : Number.NaN
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMillis)
}

/**
 * A `ModelError` tagged transient or not by an HTTP status: 429 `RateLimited`, 5xx
 * `Unavailable` (both with `retryAfterMillis` when the server sent one), 401/403 `Unauthorized`, other 4xx `InvalidRequest`,
 * anything else `InvalidResponse`. The message names the provider, the status and the
 * server's own error message.
 *
 * @internal
 */
export const errorFromStatus = (options: {
  readonly provider: string
  readonly status: number
  readonly headers: { readonly [name: string]: string | undefined }
  readonly body: string | undefined
  readonly nowMillis: number
}): ChatModel.ModelError => {
  const { status } = options
  const reason: ChatModel.ModelError["reason"] = status === 429
    ? "RateLimited"
    : status >= 500 && status <= 599
    ? "Unavailable"
    : status === 401 || status === 403
    ? "Unauthorized"
    : status >= 400 && status <= 499
    ? "InvalidRequest"
    : "InvalidResponse"
  const hint = reason === "Unauthorized"
    ? " Check the API key."
    : reason === "InvalidRequest"
    ? " The request was refused; retrying will not help."
    : ""
  const serverMessage = serverErrorMessage(options.body)
  const retryAfter = reason === "RateLimited" || reason === "Unavailable"
    ? retryAfterMillis(options.headers, options.nowMillis)
    : undefined
  return new ChatModel.ModelError({
    reason,
    status,
    message: `${options.provider} answered HTTP ${status}${serverMessage === undefined ? "" : `: ${serverMessage}`}.${hint}`,
    ...(retryAfter === undefined ? {} : { retryAfterMillis: retryAfter })
  })
}

/** The server's own error message: OpenAI/Anthropic `{error: {message}}`, Ollama `{error: "…"}`, else the body's start. */
const serverErrorMessage = (body: string | undefined): string | undefined => {
  if (body === undefined) return undefined
  const trimmed = body.trim()
  if (trimmed.length === 0) return undefined
  try {
    const parsed: unknown = JSON.parse(trimmed)
    if (typeof parsed === "object" && parsed !== null && "error" in parsed) {
      const error = parsed.error
      if (typeof error === "string") return error
      if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
        return error.message
      }
    }
    if (typeof parsed === "object" && parsed !== null && "message" in parsed && typeof parsed.message === "string") {
      return parsed.message
    }
  } catch {
    // not JSON: show its start
  }
  return trimmed.length > 300 ? `${trimmed.slice(0, 300)}…` : trimmed
}
