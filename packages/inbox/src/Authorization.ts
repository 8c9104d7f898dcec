/**
 * Who may use the inbox, and who decides. Every API request of the inbox passes through one
 * hook: an Effect that takes the request and returns the name of the person deciding (given
 * to `Agent.resume` as `decidedBy`, recorded with the run's claim), or fails with
 * `Unauthorized` (401) or `Forbidden` (403). The default, {@link loopbackOrToken}, admits
 * clients on this machine only, unless a token is configured.
 *
 * @since 0.1.0
 */
import { Loopback } from "@agentfx/core"
import { Context, Data, Effect, Layer, Option, Redacted, Schema } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { createHash, timingSafeEqual } from "node:crypto"

/**
 * The request carries no credentials the hook accepts (401).
 *
 * @example
 * ```ts
 * import { Authorization } from "@agentfx/inbox"
 *
 * new Authorization.Unauthorized({ message: "sign in first" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>("@agentfx/inbox/Unauthorized")(
  "Unauthorized",
  { message: Schema.String },
  { httpApiStatus: 401 }
) {}

/**
 * The client is known but not allowed (403).
 *
 * @example
 * ```ts
 * import { Authorization } from "@agentfx/inbox"
 *
 * new Authorization.Forbidden({ message: "only the finance team approves transfers" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Forbidden extends Schema.TaggedError<Forbidden>("@agentfx/inbox/Forbidden")(
  "Forbidden",
  { message: Schema.String },
  { httpApiStatus: 403 }
) {}

/**
 * {@link loopbackOrToken} was given a token that cannot guard the inbox: an empty one (an
 * empty cookie would present it), or one holding whitespace or control characters (which
 * `Authorization: Bearer` cannot carry, so that its `?token=` link would be refused).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { Authorization } from "@agentfx/inbox"
 *
 * try {
 *   Authorization.loopbackOrToken({ token: Redacted.make("") })
 * } catch (error) {
 *   if (error instanceof Authorization.InvalidToken) console.error(error.message) // "Invalid inbox token: it is empty"
 * }
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidToken extends Data.TaggedError("InvalidToken")<{ readonly message: string }> {}

/**
 * The authorization hook: who decides, from the request, or a refusal.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Authorization } from "@agentfx/inbox"
 *
 * const byHeader: Authorization.Authorize = (request) => {
 *   const user = request.headers["x-user"]
 *   return user === undefined ? Effect.fail(new Authorization.Unauthorized({ message: "no x-user header" })) : Effect.succeed(user)
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Authorize = (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<string, Unauthorized | Forbidden>

/**
 * Who decides, as the hook said: what an authorized handler reads.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Authorization } from "@agentfx/inbox"
 *
 * const whoAmI = Authorization.Decider.useSync((name) => `deciding as ${name}`)
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class Decider extends Context.Service<Decider, string>()("@agentfx/inbox/Decider") {}

/**
 * The middleware of the inbox's API endpoints: runs the hook, provides the `Decider`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Authorization } from "@agentfx/inbox"
 *
 * const OnlyAda = Authorization.layer(() => Effect.succeed("ada"))
 * ```
 *
 * @since 0.1.0
 * @category middleware
 */
export class Authorization extends HttpApiMiddleware.Service<Authorization, { provides: Decider }>()("@agentfx/inbox/Authorization", {
  error: [Unauthorized, Forbidden]
}) {}

/**
 * The middleware running `authorize` on every API request of the inbox.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { Authorization } from "@agentfx/inbox"
 *
 * const TokenLive = Authorization.layer(Authorization.loopbackOrToken({ token: Redacted.make("s3cret-token") }))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (authorize: Authorize): Layer.Layer<Authorization> =>
  Layer.succeed(Authorization)((handler) =>
    HttpServerRequest.HttpServerRequest.use((request) =>
      Effect.flatMap(authorize(request), (decider) => Effect.provideService(handler, Decider, decider))))

/**
 * The header a client names its person in (URI-encoded, so that any name fits in a header).
 * The page sends the name typed into its "Your name" field.
 *
 * @since 0.1.0
 * @category constants
 */
export const nameHeader = "x-agentfx-reviewer"

/**
 * The cookie that {@link loopbackOrToken} reads the token from; the inbox page sets it when
 * opened with `?token=…` (HttpOnly, SameSite=Strict).
 *
 * @since 0.1.0
 * @category constants
 */
export const tokenCookie = "agentfx-inbox-token"

/**
 * The name a request gives in {@link nameHeader}: URI-decoded, control characters dropped,
 * at most 64 characters; `undefined` when absent, empty or not decodable.
 *
 * @example
 * ```ts
 * import { HttpServerRequest } from "effect/http"
 * import { Authorization } from "@agentfx/inbox"
 *
 * declare const request: HttpServerRequest.HttpServerRequest
 * const name = Authorization.nameOf(request) ?? "anonymous"
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const nameOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const raw = request.headers[nameHeader]
  if (raw === undefined) return undefined
  let decoded: string
  try {
    decoded = decodeURIComponent(raw)
  } catch {
    return undefined
  }
  // cut by code points: a cut inside a surrogate pair would leave half a character
  const name = Array.from(decoded.replace(/[\u0000-\u001f\u007f]/g, "").trim()).slice(0, 64).join("")
  return name.length === 0 ? undefined : name
}

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest()

/** Compares in time independent of where the values differ (their SHA-256 digests, of equal length). */
const sameSecret = (given: string, expected: Redacted.Redacted<string>) => timingSafeEqual(digest(given), digest(Redacted.value(expected)))

/**
 * Whether an `Origin` names the server the request came to: its host and port are the `Host`
 * header's. The scheme is not compared (a proxy that terminates TLS serves an `https:` page
 * over a plain `http:` connection); it must be `http:` or `https:`.
 */
const isOwnOrigin = (origin: string, host: string) => {
  try {
    const url = new URL(origin)
    return (url.protocol === "http:" || url.protocol === "https:") && url.host === host.toLowerCase()
  } catch {
    return false
  }
}

const foreignOrigin = (origin: string) => new Forbidden({ message: `A request from another origin (${origin}) cannot use the inbox` })

const loopbackRefusal = (refused: Loopback.Refusal) => {
  switch (refused._tag) {
    case "NotLoopback":
      return new Forbidden({ message: `The inbox admits clients on this machine only (this one is ${refused.address ?? "unknown"}); configure a token to open it to others` })
    case "Proxied":
      return new Forbidden({ message: "The request came through a proxy (Forwarded / X-Forwarded-For): configure a token to admit it" })
    case "ForeignHost":
      return new Forbidden({ message: `Host ${JSON.stringify(refused.host)} is not a loopback name: open the inbox at 127.0.0.1 or localhost, or configure a token` })
    case "ForeignOrigin":
      return foreignOrigin(refused.origin)
  }
}

const bearerOf = (authorization: string | undefined) => {
  const match = authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization)
  return match === null ? undefined : match[1]
}

/**
 * The default hook. With a `token`, a request must carry it — `Authorization: Bearer <token>`,
 * or the {@link tokenCookie} cookie that the page's `?token=<token>` link sets — else 401; and
 * its `Origin`, when sent, must be the request's own (its host and port those of `Host`), else
 * 403: a page on another port of the same host is same-site, so its requests carry the cookie.
 * Without one, only clients on this machine are admitted, else 403: the peer address must be a
 * loopback address, the request must not have come through a proxy (`Forwarded`,
 * `X-Forwarded-For`), its `Host` must be a loopback name (a page of another site whose name
 * resolves to 127.0.0.1 — DNS rebinding — is refused), and its `Origin`, when sent, must be
 * the inbox's own (a page of another site cannot decide).
 *
 * Who decides is the name the client gives in {@link nameHeader} (the page's "Your name"
 * field): every admitted client is trusted, so the name is taken as given; without one,
 * `"local"` (no token) or `"token holder"`. For real identities, write a hook of your own.
 * Throws {@link InvalidToken} for a token that is empty or holds whitespace or control characters.
 *
 * @example
 * ```ts
 * import { Config, Effect, Option, Redacted } from "effect"
 * import { Authorization } from "@agentfx/inbox"
 *
 * const FromEnv = Effect.map(Config.option(Config.Redacted("INBOX_TOKEN")), (token) =>
 *   Authorization.layer(Authorization.loopbackOrToken(Option.isSome(token) ? { token: token.value } : {})))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const loopbackOrToken = (options: { readonly token?: Redacted.Redacted<string> } = {}): Authorize => {
  const { token } = options
  if (token !== undefined) {
    const value = Redacted.value(token)
    if (value === "") throw new InvalidToken({ message: "Invalid inbox token: it is empty" })
    if (/[\s\p{Cc}]/u.test(value)) {
      throw new InvalidToken({ message: "Invalid inbox token: it holds whitespace or control characters, which Authorization: Bearer cannot carry" })
    }
  }
  return (request) => admit(request, token)
}

const admit = (request: HttpServerRequest.HttpServerRequest, token: Redacted.Redacted<string> | undefined): Effect.Effect<string, Unauthorized | Forbidden> => {
  const name = nameOf(request)
  if (token !== undefined) {
    const origin = request.headers["origin"]
    if (origin !== undefined && !isOwnOrigin(origin, request.headers["host"] ?? "")) return Effect.fail(foreignOrigin(origin))
    const given = bearerOf(request.headers["authorization"]) ?? request.cookies[tokenCookie]
    if (given === undefined) {
      return Effect.fail(new Unauthorized({ message: "A token is required: send Authorization: Bearer <token>, or open the inbox with its ?token= link once" }))
    }
    if (!sameSecret(given, token)) return Effect.fail(new Unauthorized({ message: "The token is not valid" }))
    return Effect.succeed(name ?? "token holder")
  }
  const refused = Loopback.refusal({ remoteAddress: Option.getOrUndefined(request.remoteAddress), headers: request.headers })
  if (refused !== undefined) return Effect.fail(loopbackRefusal(refused))
  return Effect.succeed(name ?? "local")
}
