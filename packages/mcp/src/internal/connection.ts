/**
 * One connection to an MCP server: an SDK `Client` on a stdio, Streamable HTTP or HTTP+SSE
 * transport, opened as an interruptible Effect and closed by a promise that always settles.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { Implementation } from "@modelcontextprotocol/sdk/types.js"
import { McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import type * as McpTransport from "../McpTransport.js"
import { guardedFetch } from "./httpFetch.js"
import { answeringInvalidReplies } from "./stdioReplies.js"

/** An open (or once open) connection. `open` turns false when the transport closes or the connection is discarded. */
export interface Connection {
  readonly client: Client
  /** The server's name and version, from its `initialize` answer. */
  server: Implementation
  open: boolean
  /** Why the connection was lost, when the transport said so before closing (a message over the SDK's stdio limit). */
  lost: string | undefined
  /** Ends the session (HTTP), closes the transport (stdio: ends the child process); never rejects. */
  readonly close: () => Promise<void>
}

/** What a connection reports to its owner. */
export interface Listener {
  /** The server said its tool list changed (`notifications/tools/list_changed`). */
  readonly onToolsChanged: () => void
}

const clientInfo = { name: "agentfx", version: "0.1.0" }

/** How long the session's `DELETE` may take when an HTTP connection closes. */
const terminateTimeoutMillis = 1_000

/** Where a transport leads, for messages: the command line or the URL. */
export const describeTransport = (transport: McpTransport.McpTransport): string =>
  transport._tag === "Stdio" ? [transport.command, ...transport.args].join(" ") : transport.url

/**
 * An error's message. An `McpError` from a server's JSON-RPC error carries `MCP error <code>: `
 * twice (the SDK adds it on each side of the wire): it is said once.
 */
export const describeError = (error: unknown): string =>
  error instanceof McpError
    ? `MCP error ${error.code}: ${error.message.replace(/^(MCP error -?\d+: )+/, "")}`
    : error instanceof Error
    ? error.message
    : String(error)

/**
 * What an error the transport reported says about a lost connection: the SDK 1.32's stdio
 * transport reports a message over its limit (`STDIO_DEFAULT_MAX_BUFFER_SIZE`, 10 MiB) as
 * `ReadBuffer exceeded maximum size of <n> bytes`, then closes the connection.
 */
const lossOf = (error: Error): string | undefined => {
  const limit = /^ReadBuffer exceeded maximum size of (\d+) bytes$/.exec(error.message)?.[1]
  return limit === undefined
    ? undefined
    : `the server sent a message larger than the MCP SDK's stdio limit of ${limit} bytes (${Number(limit) / 1024 / 1024} MiB)`
}

const settle = (promise: Promise<unknown>): Promise<void> => promise.then(() => undefined, () => undefined)

const terminate = (transport: Transport): Promise<void> => {
  if (!(transport instanceof StreamableHTTPClientTransport) || transport.sessionId === undefined) return Promise.resolve()
  let timer: ReturnType<typeof setTimeout> | undefined
  return Promise.race([
    settle(transport.terminateSession()),
    new Promise<void>((resolve) => timer = setTimeout(resolve, terminateTimeoutMillis))
  ]).finally(() => clearTimeout(timer))
}

/**
 * Connects a fresh `Client` on the transport `makeTransport` builds (the MCP `initialize`
 * handshake). Interrupted, it closes what it opened, and waits for that. A failure closes it
 * too, then fails with the SDK's error.
 */
const connectOn = (makeTransport: (client: Client) => Transport, listener: Listener): Effect.Effect<Connection, unknown> =>
  Effect.callback<Connection, unknown>((resume) => {
    const client = new Client(clientInfo, { capabilities: {} })
    const transport = makeTransport(client)
    const connection: Connection = {
      client,
      server: { name: "", version: "" },
      open: false,
      lost: undefined,
      close: () => settle(terminate(transport).then(() => client.close()))
    }
    client.onclose = () => {
      connection.open = false
    }
    client.onerror = (error) => {
      connection.lost ??= lossOf(error)
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => listener.onToolsChanged())
    client.connect(transport).then(
      () => {
        connection.open = client.transport !== undefined
        connection.server = client.getServerVersion() ?? connection.server
        resume(Effect.succeed(connection))
      },
      (error) => resume(Effect.andThen(Effect.promise(connection.close), Effect.fail(error)))
    )
    return Effect.promise(connection.close)
  })

const stdioTransport = (transport: McpTransport.Stdio) => () =>
  answeringInvalidReplies(new StdioClientTransport({
    command: transport.command,
    args: [...transport.args],
    // the SDK adds its safe default environment (HOME, PATH, …) to these
    ...(transport.env === undefined ? {} : { env: { ...transport.env } }),
    ...(transport.cwd === undefined ? {} : { cwd: transport.cwd }),
    stderr: transport.stderr
  }))

const isClientError = (error: unknown) =>
  error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 400 && error.code < 500

/**
 * Opens a connection as `transport` says. Over HTTP, a 4xx answer to the Streamable HTTP
 * handshake is followed by one attempt over HTTP+SSE when `sseFallback` is on. Fails with a
 * sentence naming the server and what went wrong.
 */
export const connect = (transport: McpTransport.McpTransport, listener: Listener): Effect.Effect<Connection, string> => {
  if (transport._tag === "Stdio") {
    return Effect.mapError(
      connectOn(stdioTransport(transport), listener),
      (error) => `could not start ${describeTransport(transport)}: ${describeError(error)}`
    )
  }
  let url: URL
  try {
    url = new URL(transport.url)
  } catch {
    return Effect.fail(`${JSON.stringify(transport.url)} is not a URL`)
  }
  const requestInit = { headers: { ...transport.headers } }
  const streamable = connectOn(
    () => new StreamableHTTPClientTransport(url, { requestInit, fetch: guardedFetch() }),
    listener
  )
  const sse = connectOn(
    (client) => new SSEClientTransport(url, { requestInit, fetch: guardedFetch(() => void client.close()) }),
    listener
  )
  return streamable.pipe(
    Effect.catch((error) =>
      transport.sseFallback && isClientError(error)
        ? Effect.mapError(sse, (sseError) =>
          `${url.href} refused Streamable HTTP (${describeError(error)}), and HTTP+SSE failed too: ${describeError(sseError)}`)
        : Effect.fail(`could not connect to ${url.href}: ${describeError(error)}`)
    )
  )
}
