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
    ? "RateLimited"
    // 408 (the server gave up waiting for the request), 409 (a lock it could not take now):
    // retried, as OpenAI's and Anthropic's own SDKs retry them
    : (status >= 500 && status <= 599) || status === 408 || status === 409
    ? "Unavailable"
    : status === 401 || status === 403
    ? "Unauthorized"
    : status >= 400 && status <= 499
    ? "InvalidRequest"
    : "InvalidResponse"

/**
 * A `ModelError` tagged transient or not by an HTTP status: 429 `RateLimited`, 5xx, 408 and 409
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
  const reason = reasonOfStatus(status)
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
  rate_limit_exceeded: "RateLimited",
  rate_limit_error: "RateLimited",
  rate_limit: "RateLimited",
  too_many_requests: "RateLimited",
  resource_exhausted: "RateLimited",
  // the server's side: OpenAI, Anthropic, Groq, vLLM, Google
  server_error: "Unavailable",
  internal_server_error: "Unavailable",
  internal_error: "Unavailable",
  internal: "Unavailable",
  api_error: "Unavailable",
  overloaded_error: "Unavailable",
  overloaded: "Unavailable",
  service_unavailable: "Unavailable",
  unavailable: "Unavailable",
  deadline_exceeded: "Unavailable",
  timeout: "Unavailable",
  // credentials
  authentication_error: "Unauthorized",
  permission_error: "Unauthorized",
  invalid_api_key: "Unauthorized",
  unauthenticated: "Unauthorized",
  permission_denied: "Unauthorized",
  // the request itself
  invalid_request_error: "InvalidRequest",
  not_found_error: "InvalidRequest",
  request_too_large: "InvalidRequest",
  context_length_exceeded: "InvalidRequest",
  invalid_prompt: "InvalidRequest",
  invalid_argument: "InvalidRequest",
  badrequesterror: "InvalidRequest",
  not_found: "InvalidRequest",
  failed_precondition: "InvalidRequest"
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
 * decides (`server_error`, `overloaded_error` → `Unavailable`, rate limits → `RateLimited`,
 * …); an unknown one is `Other`. The message quotes the server's own.
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
    : "Other"
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
