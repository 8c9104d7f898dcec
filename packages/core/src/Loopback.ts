/**
 * Whether an HTTP request comes from this machine's own user: the rule the approval inbox and
 * the chat endpoint admit by default. The peer address must be a loopback address, the request
 * must not have come through a proxy (`Forwarded`, `X-Forwarded-For`: a proxy would make every
 * client look local), its `Host` must be a loopback name (a page of another site whose name
 * resolves to 127.0.0.1 — DNS rebinding — is refused), and its `Origin`, when sent, the server's
 * own (a page of another site, or of another local server, cannot act). Each server words the
 * refusal for its readers.
 *
 * @since 0.2.0
 */

/**
 * The parts of a request the rule reads: the peer's address and the headers (names in lower case).
 *
 * @since 0.2.0
 * @category models
 */
export interface Request {
  readonly remoteAddress: string | undefined
  readonly headers: { readonly [name: string]: string | undefined }
}

/**
 * Why a request is not this machine's user's.
 *
 * @since 0.2.0
 * @category models
 */
export type Refusal =
  | { readonly _tag: "NotLoopback"; readonly address: string | undefined }
  | { readonly _tag: "Proxied" }
  | { readonly _tag: "ForeignHost"; readonly host: string }
  | { readonly _tag: "ForeignOrigin"; readonly origin: string }

const isLoopbackAddress = (address: string) => address === "::1" || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address)

/** `localhost`, `127.x.y.z` or `[::1]`, with or without a port. */
const isLoopbackHost = (host: string) => {
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "")
  return name === "localhost" || name === "[::1]" || isLoopbackAddress(name)
}

/**
 * Why `request` is not from this machine's own user, or `undefined` when it is.
 *
 * @example
 * ```ts
 * import { Loopback } from "@agentfx/core"
 *
 * Loopback.refusal({ remoteAddress: "127.0.0.1", headers: { host: "127.0.0.1:4100" } }) // undefined
 * Loopback.refusal({ remoteAddress: "127.0.0.1", headers: { host: "evil.example:4100" } }) // { _tag: "ForeignHost", host: "evil.example:4100" }
 * ```
 *
 * @since 0.2.0
 * @category checks
 */
export const refusal = (request: Request): Refusal | undefined => {
  const address = request.remoteAddress
  if (address === undefined || !isLoopbackAddress(address)) return { _tag: "NotLoopback", address }
  if (request.headers["forwarded"] !== undefined || request.headers["x-forwarded-for"] !== undefined) return { _tag: "Proxied" }
  const host = request.headers["host"] ?? ""
  if (!isLoopbackHost(host)) return { _tag: "ForeignHost", host }
  const origin = request.headers["origin"]
  if (origin !== undefined && origin !== `http://${host}`) return { _tag: "ForeignOrigin", origin }
  return undefined
}
