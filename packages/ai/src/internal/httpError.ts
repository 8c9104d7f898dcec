/**
 * Server failures as `ModelError`s: an HTTP status, or an error object sent in place of
 * an answer (in a stream or with HTTP 200), decides the reason; `Retry-After` the wait.
 */
import { ChatModel } from "@agentfx/core"
import { isObject, snippet } from "./wireJson.js"

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

const reasonOfStatus = (status: number): ChatModel.ModelError["reason"] =>
  status === 429
    ? "rate-limited"
    // 408 (the server gave up waiting for the request), 409 (a lock it could not take now):
    // retried, as OpenAI's and Anthropic's own SDKs retry them
    : (status >= 500 && status <= 599) || status === 408 || status === 409
    ? "unavailable"
    : status === 401 || status === 403
    ? "unauthorized"
    : status >= 400 && status <= 499
    ? "invalid-request"
    : "invalid-response"

/**
 * A `ModelError` tagged transient or not by an HTTP status: 429 `rate-limited`, 5xx, 408 and 409
 * `unavailable` (both with `retryAfterMillis` when the server sent one), 401/403 `unauthorized`, other 4xx `invalid-request`,
 * anything else `invalid-response`. The message names the provider, the status and the
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
  const reason = reasonOfStatus(status)
  const hint = reason === "unauthorized"
    ? " Check the API key."
    : reason === "invalid-request"
    ? " The request was refused; retrying will not help."
    : ""
  const serverMessage = serverErrorMessage(options.body)
  const retryAfter = reason === "rate-limited" || reason === "unavailable"
    ? retryAfterMillis(options.headers, options.nowMillis)
    : undefined
  return new ChatModel.ModelError({
    reason,
    status,
    message: `${options.provider} answered HTTP ${status}${serverMessage === undefined ? "" : `: ${serverMessage}`}${
      /[.!?]$/.test(serverMessage ?? "") ? "" : "."
    }${hint}`,
    ...(retryAfter === undefined ? {} : { retryAfterMillis: retryAfter })
  })
}

/**
 * The server's own error message: `{error: {message}}`, `{error: "…"}`, `{message}`,
 * `[{error: {message}}]`, else the body. Not cut here: `maskError` cuts the whole message
 * once the credentials in it are masked.
 */
const serverErrorMessage = (body: string | undefined): string | undefined => {
  if (body === undefined) return undefined
  const trimmed = body.trim()
  if (trimmed.length === 0) return undefined
  try {
    const message = errorObject(JSON.parse(trimmed))?.message
    if (typeof message === "string" && message.trim().length > 0) return message.trim()
  } catch {
    // not JSON: the body itself
  }
  return trimmed
}

const codeReasons: { readonly [code: string]: ChatModel.ModelError["reason"] } = {
  // rate limits: OpenAI, Anthropic, Mistral, Google
  rate_limit_exceeded: "rate-limited",
  rate_limit_error: "rate-limited",
  rate_limit: "rate-limited",
  too_many_requests: "rate-limited",
  resource_exhausted: "rate-limited",
  // the server's side: OpenAI, Anthropic, Groq, vLLM, Google
  server_error: "unavailable",
  internal_server_error: "unavailable",
  internal_error: "unavailable",
  internal: "unavailable",
  api_error: "unavailable",
  overloaded_error: "unavailable",
  overloaded: "unavailable",
  service_unavailable: "unavailable",
  unavailable: "unavailable",
  deadline_exceeded: "unavailable",
  timeout: "unavailable",
  // credentials
  authentication_error: "unauthorized",
  permission_error: "unauthorized",
  invalid_api_key: "unauthorized",
  unauthenticated: "unauthorized",
  permission_denied: "unauthorized",
  // the request itself
  invalid_request_error: "invalid-request",
  not_found_error: "invalid-request",
  request_too_large: "invalid-request",
  context_length_exceeded: "invalid-request",
  invalid_prompt: "invalid-request",
  invalid_argument: "invalid-request",
  badrequesterror: "invalid-request",
  not_found: "invalid-request",
  failed_precondition: "invalid-request"
}

/** Ollama and others answer `{ error: "…" }`; Google wraps its error object in an array. */
const errorObject = (payload: unknown): { readonly [key: string]: unknown } | undefined => {
  const outer = Array.isArray(payload) ? payload[0] : payload
  if (!isObject(outer)) return undefined
  const inner = outer.error
  if (typeof inner === "string") return { ...outer, message: inner }
  return isObject(inner) ? { ...outer, ...inner } : outer
}

/**
 * True when a body the server sent with HTTP 200 (or as a stream event) is an error
 * envelope rather than an answer: `{ type: "error" }`, or a non-null `error` beside none of
 * the keys an answer has (`object`, `choices`, `output`, `content`).
 *
 * @internal
 */
export const isErrorPayload = (payload: unknown): boolean => {
  const outer = Array.isArray(payload) ? payload[0] : payload
  if (!isObject(outer)) return false
  if (outer.type === "error") return true
  return outer.error !== undefined && outer.error !== null &&
    !("object" in outer || "choices" in outer || "output" in outer || "content" in outer)
}

/**
 * A `ModelError` from an error object a server sent in place of an answer — inside a
 * stream (`where: "mid-stream"`) or as the body of an HTTP 200 — in any of the shapes
 * providers use: `{ error: { message, type, code } }` (OpenAI; `code` null, a string, or a
 * number as vLLM sends), `{ error: { …, status_code } }` (Groq), `{ type: "error", error:
 * { type, message } }` (Anthropic), `{ type: "error", code, message }` (Responses),
 * `[{ error: { code, message, status } }]` (Google), `{ error: "…" }` (Ollama). A numeric
 * status (400–599) is classified like an HTTP status; else the first known code or type
 * decides (`server_error`, `overloaded_error` → `unavailable`, rate limits → `rate-limited`,
 * …); an unknown one is `other`. The message quotes the server's own.
 *
 * @internal
 */
export const errorFromPayload = (options: {
  readonly provider: string
  readonly payload: unknown
  readonly where: "mid-stream" | "with HTTP 200"
}): ChatModel.ModelError => {
  const error = errorObject(options.payload) ?? {}
  const statuses = [error.status_code, error.code, error.status].map((value) =>
    typeof value === "number" || (typeof value === "string" && /^\d{3}$/.test(value)) ? Number(value) : Number.NaN
  )
  const status = statuses.find((value) => value >= 400 && value <= 599)
  const codes = [error.code, error.type, error.status].filter((value): value is string =>
    typeof value === "string" && value.length > 0 && !/^\d+$/.test(value)
  )
  const known = codes.find((code) => codeReasons[code.toLowerCase()] !== undefined)
  const reason = status !== undefined
    ? reasonOfStatus(status)
    : known !== undefined
    ? codeReasons[known.toLowerCase()]!
    : "other"
  const label = known ?? codes[0] ?? (status === undefined ? undefined : String(status))
  const message = typeof error.message === "string" && error.message.trim().length > 0
    ? error.message.trim()
    : snippet(options.payload, 300)
  const verb = options.where === "mid-stream" ? "failed mid-stream" : "answered HTTP 200 with an error"
  return new ChatModel.ModelError({
    reason,
    message: `${options.provider} ${verb}${label === undefined ? "" : ` (${label})`}: ${message}`,
    ...(status === undefined ? {} : { status })
  })
}
