/**
 * How to reach an MCP server: a child process spoken to over stdio, or a URL spoken to over
 * Streamable HTTP (with the older HTTP+SSE transport as a fallback).
 *
 * @since 0.1.0
 */

/**
 * A server started as a child process, spoken to over its stdin and stdout.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stdio {
  readonly _tag: "Stdio"
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: { readonly [name: string]: string } | undefined
  readonly cwd: string | undefined
  readonly stderr: "inherit" | "ignore"
}

/**
 * A server at a URL, spoken to over Streamable HTTP; when `sseFallback` is on and the URL
 * refuses Streamable HTTP with a 4xx status, over the older HTTP+SSE transport.
 *
 * @since 0.1.0
 * @category models
 */
export interface Http {
  readonly _tag: "Http"
  /** Parsed when the toolkit connects: a URL that does not parse fails the connection, naming it. */
  readonly url: string
  readonly headers: { readonly [name: string]: string }
  readonly sseFallback: boolean
}

/**
 * Where an `McpToolkit` connects.
 *
 * @since 0.1.0
 * @category models
 */
export type McpTransport = Stdio | Http

/**
 * A server run as a child process. The process is started when the `McpToolkit` layer is
 * built, and ended when its scope closes: its stdin is closed, then — if it has not exited
 * within 2 s — it gets `SIGTERM`, and 2 s later `SIGKILL` (the MCP SDK's shutdown sequence).
 *
 * The child does **not** inherit this process's environment: it gets `HOME`, `LOGNAME`,
 * `PATH`, `SHELL`, `TERM` and `USER` (the SDK's safe default), plus `env`. Pass
 * `env: { ...process.env }` only for a server you trust with every secret in it.
 *
 * @example
 * ```ts
 * import { McpTransport } from "@agentfx/mcp"
 *
 * const files = McpTransport.stdio({
 *   command: "npx",
 *   args: ["-y", "@modelcontextprotocol/server-filesystem", "/srv/reports"],
 *   env: { NODE_OPTIONS: "--max-old-space-size=256" },
 *   stderr: "ignore"
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const stdio = (options: {
  readonly command: string
  readonly args?: ReadonlyArray<string>
  /** Added to the safe default environment (see above). */
  readonly env?: { readonly [name: string]: string }
  readonly cwd?: string
  /** Where the server's stderr goes: this process's stderr (`"inherit"`, the default) or nowhere. */
  readonly stderr?: "inherit" | "ignore"
}): McpTransport => ({
  _tag: "Stdio",
  command: options.command,
  args: options.args ?? [],
  env: options.env,
  cwd: options.cwd,
  stderr: options.stderr ?? "inherit"
})

/**
 * A server at `url`, over Streamable HTTP. `headers` go with every request (e.g. an
 * `Authorization` header); their values and the URL's userinfo are masked (`***`) in every
 * error and log of the toolkit, even where the server echoes them. A redirect is followed
 * only within the URL's origin (the SDK's policy). With `sseFallback` (on by default), a URL that answers the
 * Streamable HTTP handshake with a 4xx status is tried once more with the older HTTP+SSE
 * transport. When the scope closes, the session is ended with an HTTP `DELETE` (waited for
 * at most 1 s) and the connection closed.
 *
 * @example
 * ```ts
 * import { McpTransport } from "@agentfx/mcp"
 *
 * const remote = McpTransport.http({
 *   url: "https://mcp.example.com/mcp",
 *   headers: { authorization: "Bearer …" }
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const http = (options: {
  readonly url: string | URL
  readonly headers?: { readonly [name: string]: string }
  readonly sseFallback?: boolean
}): McpTransport => ({
  _tag: "Http",
  url: String(options.url),
  headers: options.headers ?? {},
  sseFallback: options.sseFallback ?? true
})
