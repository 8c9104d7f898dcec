/**
 * One JSON POST to a provider over `HttpClient`, answered with a JSON body or a stream of
 * server-sent events; every failure a `ModelError`. Shared by the adapters that own their
 * wire format (Chat Completions, Responses, Messages).
 */
import { ChatModel, Mask } from "@agentfx/core"
import * as Sse from "./sse.js"
import type { HttpClient, HttpClientError, HttpClientResponse } from "effect/http"
import { FetchHttpClient, HttpClientRequest } from "effect/http"
import type { Duration } from "effect"
import { Clock, Effect, Option, Redacted, Result, Stream } from "effect"
import { errorFromPayload, errorFromStatus, isErrorPayload } from "./httpError.js"
import { idle } from "./timeout.js"
import { unwritable, writeJson } from "./wireJson.js"

/** Where requests go, with which headers; `provider` and `url` are safe to show. */
export interface Endpoint {
  readonly url: string
  /** Names the server in messages, e.g. `"OpenAI"`. */
  readonly provider: string
  readonly headers: { readonly [name: string]: string }
  /** Masks this endpoint's credentials (and any others) in a text. */
  readonly mask: (text: string) => string
}

const invalidRequest = (message: string) => new ChatModel.ModelError({ reason: "invalid-request", message })

/**
 * The endpoint at `url`. Credentials in the URL (`https://user:pass@host/v1`, which `fetch`
 * refuses) are taken out of it and sent as `Authorization: Basic`; a URL with credentials
 * and an `authorization` credential both set is an `invalid-request`, as is a URL that does
 * not parse, and so is a blank credential (it would only earn a 401 on every call). Every
 * credential (header values, the URL's password) is masked in messages.
 */
export const endpoint = (options: {
  readonly url: string
  readonly provider: (url: string) => string
  /** Headers carrying a credential; an undefined value is left out. */
  readonly credentials: { readonly [name: string]: Redacted.Redacted | undefined }
  readonly headers?: { readonly [name: string]: string }
}): Result.Result<Endpoint, ChatModel.ModelError> => {
  const headers: Record<string, string> = { ...options.headers }
  const secrets: Array<string> = []
  for (const [name, value] of Object.entries(options.credentials)) {
    if (value === undefined) continue
    headers[name] = Redacted.value(value)
    secrets.push(Redacted.value(value).replace(/^(Bearer|Basic)(\s+|$)/i, ""))
  }
  const mask = (extra: ReadonlyArray<string>) => Mask.make([...secrets, ...extra])
  let parsed: URL
  try {
    parsed = new URL(options.url)
  } catch {
    return Result.fail(invalidRequest(`${mask([])(options.url)} is not a URL: check the base URL.`))
  }
  const user = decodedOrAsIs(parsed.username)
  const password = decodedOrAsIs(parsed.password)
  parsed.username = ""
  parsed.password = ""
  const url = parsed.toString()
  const provider = options.provider(url)
  if (secrets.some((secret) => secret.trim().length === 0)) {
    return Result.fail(invalidRequest(`${provider}: the API key is blank; give the key (a blank key counts as unset).`))
  }
  if (user.length > 0 || password.length > 0) {
    const token = Buffer.from(`${user}:${password}`).toString("base64")
    secrets.push(password, token, `${user}:${password}`)
    if (Object.keys(headers).some((name) => name.toLowerCase() === "authorization")) {
      return Result.fail(
        invalidRequest(`${provider}: the base URL carries credentials and an API key is set as well; give one of them.`)
      )
    }
    headers.authorization = `Basic ${token}`
  }
  return Result.succeed({ url, provider, headers, mask: mask([]) })
}

/**
 * A URL's user or password as it was meant: percent-decoded, or as written when it holds a `%`
 * that starts no escape (`50%off`: the URL parser keeps it, and it is the password).
 */
const decodedOrAsIs = (component: string): string => {
  try {
    return decodeURIComponent(component)
  } catch {
    return component
  }
}

/**
 * The error of a body that failed in its decompression (`content-encoding`), not in its
 * connection: zlib's (`Z_DATA_ERROR`, …) or brotli's (`ERR__ERROR_…`), found along the
 * failure's `cause`s (`fetch` wraps it in a `TypeError: terminated`).
 */
const decompressionFailure = (failure: unknown): Error | undefined => {
  let link = failure
  for (let depth = 0; depth < 4 && link instanceof Error; depth++, link = link.cause) {
    const code = (link as { readonly code?: unknown }).code
    if (typeof code === "string" && /^(Z_|ERR__ERROR_)/.test(code)) return link
  }
  return undefined
}

const networkError = (provider: string, error: HttpClientError.HttpClientError): ChatModel.ModelError => {
  const reason = error.reason
  const detail = reason.description ?? reason.message
  switch (reason._tag) {
    case "TransportError":
      return new ChatModel.ModelError({ reason: "network", message: `could not reach ${provider}: ${detail}` })
    case "EncodeError":
    case "InvalidUrlError":
      return invalidRequest(`could not send the request to ${provider} (${reason._tag}): ${detail}`)
  }
  const broken = decompressionFailure(reason.cause)
  if (broken !== undefined) {
    const encoding = reason.response.headers["content-encoding"] ?? "none"
    return new ChatModel.ModelError({
      reason: "invalid-response",
      message: `${provider} sent a body that cannot be decompressed (content-encoding: ${encoding}): ${broken.message}`
    })
  }
  return new ChatModel.ModelError({ reason: "network", message: `the connection to ${provider} broke while reading its answer: ${detail}` })
}

const unreadable = (provider: string, what: string, text: string) =>
  new ChatModel.ModelError({
    reason: "invalid-response",
    message: `${provider} sent ${what}: ${Mask.quote(text, 200)}`
  })

/** The most of an error answer's body that is read: its message is quoted from there. */
const errorBodyLimit = 64 * 1024

/**
 * The most characters of an answer's body (not streamed), and of one event of a stream (from
 * its first line to the blank line that ends it): 16 Mi. Past it the answer is refused at once,
 * unread to its end: `invalid-response`, not retried.
 */
export const answerLimit = 16 * 1024 * 1024

const tooLarge = (provider: string, what: string) => () =>
  new ChatModel.ModelError({
    reason: "invalid-response",
    message: `${provider} sent ${what} longer than ${answerLimit} characters (the adapters' limit); it was not read further.`
  })

/** The text of a body, failing once it passes {@link answerLimit} characters. */
const boundedText = (provider: string) => <R>(bytes: Stream.Stream<Uint8Array, ChatModel.ModelError, R>) =>
  Stream.suspend(() => {
    let read = 0
    const over = tooLarge(provider, "a body")
    return Stream.mapEffect(Stream.decodeText(bytes), (text): Effect.Effect<string, ChatModel.ModelError> =>
      (read += text.length) > answerLimit ? Effect.fail(over()) : Effect.succeed(text))
  })

/** An answer's body as it is read: the bytes, or the `ModelError` that ends them. */
type Body = (response: HttpClientResponse.HttpClientResponse) => Stream.Stream<Uint8Array, ChatModel.ModelError>

/** The body as the server sends it, bounded in time by nothing but the attempt's `requestTimeout`. */
const whole = (target: Endpoint): Body => (response) => Stream.mapError(response.stream, (error) => networkError(target.provider, error))

/** The body, failing once no bytes came for `idleTimeout` (the bound of every body a streamed call reads). */
const idleBounded = (target: Endpoint, idleTimeout: Duration.Duration): Body => (response) =>
  idle(whole(target)(response), idleTimeout, target.provider)

/** The start of a body that is no answer — an error status's, an HTML page's — (up to {@link errorBodyLimit} characters; the rest is not read), if it can be read. */
const errorBody = (bytes: Stream.Stream<Uint8Array, ChatModel.ModelError>) =>
  Stream.suspend(() => {
    let read = 0
    return bytes.pipe(Stream.decodeText(), Stream.takeUntil((chunk) => (read += chunk.length) >= errorBodyLimit))
  }).pipe(
    Stream.mkString,
    Effect.map((text) => text.slice(0, errorBodyLimit)),
    Effect.option
  )

/**
 * The request sent without following redirects (`fetch`'s `redirect: "manual"`, with the
 * `FetchHttpClient.RequestInit` the app gave kept): a redirect would carry the API key's
 * header (`x-api-key`: `fetch` drops only `authorization`) to whatever host it names, and turn
 * the POST into a GET whose answer would be taken for the model's.
 */
const unredirected = <A, E, R>(execute: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(
    Effect.serviceOption(FetchHttpClient.RequestInit),
    (init) => Effect.provideService(execute, FetchHttpClient.RequestInit, { ...Option.getOrUndefined(init), redirect: "manual" })
  )

/** A redirect's answer: refused, naming where it points (masked), never followed. */
const redirected = (target: Endpoint, response: HttpClientResponse.HttpClientResponse): ChatModel.ModelError =>
  invalidRequest(
    `${target.provider} answered HTTP ${response.status}, a redirect${
      response.headers.location === undefined ? "" : ` to ${target.mask(response.headers.location)}`
    }: redirects are not followed (the request carries the API key); set the base URL to where the API is.`
  )

/**
 * Builds the body and sends it; a body that cannot be built or encoded (a value nested too
 * deep for `JSON.stringify`) is an `invalid-request`, a non-2xx answer the `ModelError` of
 * its status, quoting the server (its body read as `read` reads it: one that stalls or
 * breaks is not quoted).
 */
const send = (
  client: HttpClient.HttpClient,
  target: Endpoint,
  body: () => unknown,
  accept: string,
  read: Body
): Effect.Effect<HttpClientResponse.HttpClientResponse, ChatModel.ModelError> =>
  Effect.gen(function*() {
    const unencodable = (cause: unknown) => invalidRequest(`could not encode the request to ${target.provider}: ${String(cause)}`)
    const payload = yield* Effect.try({ try: body, catch: unencodable })
    const request = yield* HttpClientRequest.post(target.url).pipe(
      HttpClientRequest.setHeaders(target.headers),
      HttpClientRequest.accept(accept),
      HttpClientRequest.bodyJson(payload),
      Effect.mapError((error) => unencodable(error.cause))
    )
    const response = yield* Effect.mapError(unredirected(client.execute(request)), (error) => networkError(target.provider, error))
    if (response.status >= 200 && response.status < 300) return response
    if (response.status >= 300 && response.status < 400) return yield* Effect.fail(redirected(target, response))
    const text = yield* errorBody(read(response))
    return yield* Effect.fail(errorFromStatus({
      provider: target.provider,
      status: response.status,
      headers: response.headers,
      body: Option.getOrUndefined(text),
      nowMillis: yield* Clock.currentTimeMillis
    }))
  })

/** The JSON of a response body, read as `read` reads it; an error envelope fails with the server's error. */
const readJson = (target: Endpoint, response: HttpClientResponse.HttpClientResponse, read: Body) =>
  Effect.gen(function*() {
    const text = yield* Stream.mkString(boundedText(target.provider)(read(response)))
    const parsed = yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: () => unreadable(target.provider, "a body that is not JSON", text.trim())
    })
    if (isErrorPayload(parsed)) return yield* Effect.fail(errorFromPayload({ provider: target.provider, payload: parsed, where: "with HTTP 200" }))
    return parsed
  })

/**
 * POSTs the `body` built and returns the JSON answer. A 200 whose body is an error envelope
 * (`{ error: … }`) fails with the server's message and the error's class.
 */
export const postJson = (client: HttpClient.HttpClient, target: Endpoint, body: () => unknown): Effect.Effect<unknown, ChatModel.ModelError> =>
  Effect.flatMap(send(client, target, body, "application/json", whole(target)), (response) => readJson(target, response, whole(target)))

/**
 * POSTs the `body` built and returns the server-sent events of the answer. No bytes for `idleTimeout`
 * once the headers came fails the stream (the wait for the headers is `requestTimeout`'s), whatever
 * the body: events, JSON, or an error status's body (which then goes unquoted). A JSON answer where
 * events were asked for fails: with the server's message when it is an error envelope, else `invalid-response`;
 * so does an HTML page (a proxy's), quoting its start.
 */
export const postStream = (
  client: HttpClient.HttpClient,
  target: Endpoint,
  body: () => unknown,
  idleTimeout: Duration.Duration
): Stream.Stream<Sse.Event, ChatModel.ModelError> =>
  Effect.gen(function*() {
    const read = idleBounded(target, idleTimeout)
    const response = yield* send(client, target, body, "text/event-stream", read)
    const type = (response.headers["content-type"] ?? "").toLowerCase()
    if (type.startsWith("text/html")) {
      const page = Option.getOrElse(yield* errorBody(read(response)), () => "")
      return yield* Effect.fail(unreadable(target.provider, "an HTML page where an event stream was asked for", page.trim()))
    }
    if (!type.includes("json")) return read(response)
    const json = yield* readJson(target, response, read)
    return yield* Effect.fail(unreadable(target.provider, "JSON where an event stream was asked for", writeJson(json) ?? unwritable))
  }).pipe(
    Stream.unwrap,
    Stream.decodeText(),
    Sse.events({ limit: answerLimit, tooLarge: tooLarge(target.provider, "a stream event") })
  )
