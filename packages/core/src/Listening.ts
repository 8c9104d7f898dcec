/**
 * What agentfx's own servers (the approval inbox, the chat and AG-UI endpoints) tell about
 * where they listen: their address once they listen, as a URL a person on this machine can
 * open, and a port that is taken as one sentence saying what to do, not a stack trace.
 *
 * @since 0.2.0
 */
import * as Data from "effect/Data"

/**
 * The port a server was to listen on is taken by another process.
 *
 * @example
 * ```ts
 * import { Listening } from "@agentfx/core"
 *
 * const error = new Listening.PortInUse({ host: "127.0.0.1", port: 3000, server: "the chat endpoint" })
 * console.log(error.message) // Port 3000 of 127.0.0.1 is in use: stop what listens there, or serve the chat endpoint on another port (0 picks a free one)
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class PortInUse extends Data.TaggedError("PortInUse")<{
  readonly host: string
  readonly port: number
  /** What was to listen there, as the sentence names it (`"the inbox"`). */
  readonly server: string
}> {
  override get message(): string {
    return `Port ${this.port} of ${this.host} is in use: stop what listens there, or serve ${this.server} on another port (0 picks a free one)`
  }
}

/**
 * A server's failure to listen, with a taken port (`EADDRINUSE`) as {@link PortInUse}.
 *
 * @example
 * ```ts
 * import { Listening } from "@agentfx/core"
 *
 * const failed = { cause: Object.assign(new Error("listen EADDRINUSE"), { code: "EADDRINUSE" }) }
 * const error = Listening.portTaken({ host: "127.0.0.1", port: 3000, server: "the inbox" })(failed)
 * console.log(error instanceof Listening.PortInUse) // true
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export const portTaken = (listen: { readonly host: string; readonly port: number; readonly server: string }) =>
<E extends { readonly cause?: unknown }>(error: E): E | PortInUse =>
  typeof error.cause === "object" && error.cause !== null && (error.cause as { readonly code?: unknown }).code === "EADDRINUSE"
    ? new PortInUse(listen)
    : error

/**
 * The URL of `path` on a server bound to `host` and listening at `address` (its `HttpServer`'s
 * address), for a person on this machine: a server on every address (`0.0.0.0`, `::`) is
 * reached on loopback; a Unix socket is an `http+unix:` URL.
 *
 * @example
 * ```ts
 * import { Listening } from "@agentfx/core"
 *
 * console.log(Listening.url("0.0.0.0", { _tag: "InetAddressV4", port: 4180 }, "/inbox")) // http://127.0.0.1:4180/inbox
 * console.log(Listening.url("::1", { _tag: "InetAddressV6", port: 3000 }, "/api/chat")) // http://[::1]:3000/api/chat
 * ```
 *
 * @since 0.2.0
 * @category formatting
 */
export const url = (
  host: string,
  address: { readonly _tag: string; readonly port?: number; readonly path?: string },
  path: string
): string => {
  if (address._tag === "UnixPathAddress") return `http+unix://${encodeURIComponent(address.path ?? "")}${path}`
  const reachable = host === "0.0.0.0" || host === "" ? "127.0.0.1" : host === "::" ? "::1" : host
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${address.port}${path}`
}
