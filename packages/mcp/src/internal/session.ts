/**
 * The life of an `McpToolkit`: the current connection (replaced when it is lost), the current
 * tool list (refreshed on `tools/list_changed` and after a reconnection), and the scope that
 * closes it all.
 */
import { ToolError } from "@agentfx/core"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Queue, Result, Semaphore } from "effect"
import type { McpTool as AgentTool, McpToolkitError, Options, Service } from "../McpToolkit.js"
import type { Connection } from "./connection.js"
import { connect, describeTransport } from "./connection.js"
import * as Checker from "./checker.js"
import { classify } from "./errors.js"
import type { Sorted } from "./listing.js"
import { listAll, sort } from "./listing.js"
import { masker } from "./mask.js"
import type { Arguments } from "./tools.js"
import { prepare, toTool } from "./tools.js"

/** The longest timeout `setTimeout` takes (about 24.8 days): the SDK's own request timeout, switched off. */
const noTimeout = 2_147_483_647

type MakeError = (reason: McpToolkitError["reason"], message: string) => McpToolkitError

export const make = Effect.fnUntraced(function*(options: Options, error: MakeError) {
  const transport = options.transport
  const mask = masker(transport)
  const prefix = options.prefix ?? ""
  const overrides = options.overrides ?? {}
  const refreshes = yield* Queue.sliding<void>(1)
  const listener = { onToolsChanged: () => void Queue.offerUnsafe(refreshes, undefined) }
  /** A new connection, or why not — and the tool list of one, or why not — with the transport's credentials masked. */
  const open = Effect.mapError(connect(transport, listener), mask)
  const list = (connection: Connection) => Effect.map(Effect.mapError(listAll(connection), mask), sort)
  // its thread starts while the connection opens
  const checker = yield* Checker.make()
  const lock = yield* Semaphore.make(1)
  const closing = new Set<Promise<void>>()
  const discarded = new WeakSet<Connection>()
  let closed = false
  let tools: Result.Result<ReadonlyArray<AgentTool>, McpToolkitError> = Result.succeed([])

  /** Drops a connection; its closing is awaited when the scope closes. */
  const discard = (connection: Connection) => {
    connection.open = false
    if (discarded.has(connection)) return
    discarded.add(connection)
    const done = connection.close().finally(() => closing.delete(done))
    closing.add(done)
  }

  let current: Connection = yield* Effect.acquireRelease(
    Effect.mapError(open, (message) => error("connect", message)),
    () =>
      lock.withPermits(1)(Effect.promise(() => {
        closed = true
        discard(current)
        return Promise.all(closing)
      }))
  )
  const server = current.server.name.length > 0 ? current.server.name : mask(describeTransport(transport))

  /** The usable tools as agentfx tools (a tool whose schema does not compile is left out too), and the warnings. */
  const build = (sorted: Sorted) =>
    Effect.partition(sorted.usable, (tool) => prepare(checker, tool)).pipe(
      Effect.map(([prepared, uncompiled]) => ({
        tools: prepared.map((ready) => toTool(ready, { server, prefix, override: overrides[ready.tool.name], checker, call })),
        leftOut: [...sorted.leftOut, ...uncompiled]
      }))
    )

  /** The `invalid-options` error when `overrides` name tools the server does not list. */
  const unknownOverrides = ({ names }: Sorted): McpToolkitError | undefined => {
    const unknown = Object.keys(overrides).filter((name) => !names.includes(name))
    return unknown.length === 0 ? undefined : error(
      "invalid-options",
      `overrides name tools that MCP server "${server}" does not list: ${unknown.map((name) => `"${name}"`).join(", ")} (it lists: ${
        names.join(", ") || "no tools"
      })`
    )
  }

  /** A refreshed list whose overrides no longer match is refused like the first one: `tools` fails with its error until a list matches again. */
  const install = (sorted: Sorted) =>
    Effect.suspend(() => {
      const refused = unknownOverrides(sorted)
      if (refused !== undefined) {
        tools = Result.fail(refused)
        return Effect.logWarning(`MCP server "${server}": the refreshed tool list is refused: ${refused.message}`)
      }
      return Effect.flatMap(build(sorted), (built) => {
        tools = Result.succeed(built.tools)
        return Effect.forEach(built.leftOut, (why) => Effect.logWarning(`MCP server "${server}": ${why}`), { discard: true })
      })
    })

  /** The open connection, or a new one when it was lost (the process died, the HTTP stream broke). */
  const connection: Effect.Effect<Connection, ToolError.ToolError> = Effect.suspend(() =>
    current.open ? Effect.succeed(current) : lock.withPermits(1)(Effect.suspend(() => {
      if (closed) return Effect.fail(ToolError.environment(`MCP server "${server}": the toolkit's scope is closed`))
      if (current.open) return Effect.succeed(current)
      discard(current)
      return open.pipe(
        Effect.mapError((message) => ToolError.environment(`MCP server "${server}" is not connected, and reconnecting failed: ${message}`)),
        Effect.map((opened) => {
          current = opened
          listener.onToolsChanged()
          return opened
        })
      )
    }))
  )

  function call(name: string, args: Arguments): Effect.Effect<CallToolResult, ToolError.ToolError> {
    return Effect.flatMap(connection, (open) =>
      Effect.tryPromise({
        try: (signal) =>
          open.client.callTool({ name, arguments: args }, undefined, { signal, timeout: noTimeout }) as Promise<CallToolResult>,
        catch: (cause) => classify(server, name, cause, mask, open.lost)
      }).pipe(Effect.tapError((failure) =>
          Effect.sync(() => {
            if (failure.reason === "environment") discard(open)
          })
        )
      ))
  }

  yield* Effect.mapError(checker.ready, (why) => error("list-tools", `MCP server "${server}": its tools cannot be checked: ${why}`))
  const listed = yield* Effect.mapError(list(current), (message) => error("list-tools", `MCP server "${server}": ${message}`))
  const refused = unknownOverrides(listed)
  if (refused !== undefined) return yield* Effect.fail(refused)
  yield* install(listed)

  // refreshes the list for the next toolkit; a failed refresh keeps the list it had
  yield* Queue.take(refreshes).pipe(
    Effect.andThen(Effect.suspend(() => current.open ? list(current) : Effect.fail("not connected"))),
    Effect.flatMap(install),
    Effect.catch((message) => Effect.logWarning(`MCP server "${server}": refreshing the tool list failed: ${message}`)),
    Effect.forever,
    Effect.forkScoped
  )

  return { tools: Effect.suspend(() => Effect.fromResult(tools)), server: current.server } satisfies Service
})
