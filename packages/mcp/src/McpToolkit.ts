/**
 * An MCP server's tools as agentfx tools: a scoped connection (opened when the layer is
 * built, closed with its scope) that lists the server's tools and turns each into a `Tool`.
 *
 * @since 0.1.0
 */
import type { Json, Tool } from "@agentfx/core"
import type { Scope } from "effect"
import { Context, Data, Effect, Layer } from "effect"
import * as Internal from "./internal/session.js"
import type { McpTransport } from "./McpTransport.js"

/**
 * What a server's tool can be told beyond what the server says: the agentfx tool options
 * that are the caller's choice (`timeout`, `retry`, `needsApproval`, `serial`, `returnDirect`,
 * as `Tool.make` takes them). `needsApproval` given here beats the default derived from the
 * server's annotations. A timeout or an interruption aborts the request: the server is sent
 * `notifications/cancelled`. Retry only tools that are safe to repeat.
 *
 * @example
 * ```ts
 * import type { McpToolkit } from "@agentfx/mcp"
 *
 * const overrides: { readonly [tool: string]: McpToolkit.ToolOverride } = {
 *   search: { timeout: "10 seconds", retry: { times: 2 } },
 *   write_file: { needsApproval: false, serial: true }
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ToolOverride = Tool.Overrides

/**
 * Everything {@link make} and {@link layer} accept.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Where the server is: `McpTransport.stdio(…)` or `McpTransport.http(…)`. */
  readonly transport: McpTransport
  /**
   * Put before every tool name (`prefix: "files_"` → `files_read_file`), so that two servers'
   * tools cannot clash. Names are not otherwise changed: a name a model provider would reject
   * is refused when the toolkit is assembled, like any duplicate.
   */
  readonly prefix?: string
  /**
   * Per tool, keyed by the server's own tool name (without the prefix). A name the server does
   * not list is refused: at the first listing the toolkit fails to build, after a refresh
   * `tools` fails (see {@link Service}).
   */
  readonly overrides?: { readonly [tool: string]: ToolOverride }
}

/**
 * The server could not be used: `connect` (the process did not start, the URL did not
 * answer, the handshake failed), `list-tools` (its tool list could not be read, or it is
 * longer than 100 pages or 1000 tools, or the thread that checks the schemas could not start) or
 * `invalid-options` (e.g. an override naming a tool the server does not list).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { McpToolkit, McpTransport } from "@agentfx/mcp"
 *
 * const program = McpToolkit.make({ transport: McpTransport.stdio({ command: "mcp-server-time" }) }).pipe(
 *   Effect.catchTag("McpToolkitError", (error) => Effect.logError(error.reason, error.message)),
 *   Effect.scoped
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class McpToolkitError extends Data.TaggedError("McpToolkitError")<{
  readonly reason: "connect" | "list-tools" | "invalid-options"
  readonly message: string
}> {}

/**
 * A tool of an MCP server: it needs no service (its connection is the toolkit's).
 *
 * @since 0.1.0
 * @category models
 */
export interface McpTool extends Tool.Tool<string, { readonly [key: string]: unknown }, Json.JsonValue> {}

/**
 * A connected server's tools.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * The server's tools as agentfx tools, as last listed: read it when assembling a toolkit
   * for a run. A `notifications/tools/list_changed` from the server, or a reconnection,
   * refreshes the list in the background: a toolkit already assembled (a running batch)
   * keeps the tools it has. A refreshed list that no longer has a tool `overrides` names is
   * refused as at the first listing: `tools` fails with that `InvalidOptions` error (and it
   * is logged) until the server lists the tool again.
   */
  readonly tools: Effect.Effect<ReadonlyArray<McpTool>, McpToolkitError>
  /** The server's name and version, from its `initialize` answer. */
  readonly server: { readonly name: string; readonly version: string }
}

/**
 * The tools of one MCP server. For several servers, make a tag per server and provide each
 * with `Layer.effect(MyTag, McpToolkit.make(…))`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent } from "@agentfx/core"
 * import { McpToolkit } from "@agentfx/mcp"
 *
 * // the server's tools as they are now: an agent per run picks up `tools/list_changed`
 * const agentNow = Effect.gen(function*() {
 *   const mcp = yield* McpToolkit.McpToolkit
 *   return Agent.make({ tools: yield* mcp.tools })
 * })
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class McpToolkit extends Context.Service<McpToolkit, Service>()("@agentfx/mcp/McpToolkit") {}

/**
 * Connects to the server and lists its tools; the connection lives as long as the scope.
 * Closing the scope closes the connection: a stdio server's stdin is closed, and the process
 * gets `SIGTERM` if still alive 2 s later and `SIGKILL` 2 s after that; an HTTP session is
 * ended with a `DELETE`.
 *
 * Each tool becomes an agentfx `Tool`:
 * - its name, with `prefix` before it; its description;
 * - its parameters: the server's `inputSchema`, given to the model as the server wrote it,
 *   and checked against the arguments before the call by the SDK's JSON Schema validator
 *   (Ajv) — arguments it rejects are a `semantic` error naming the problem, and the server
 *   is not called. The checks run on a thread of the toolkit's own, each within 5 s: a check
 *   that takes longer (a server's `pattern` that backtracks catastrophically on the value) is
 *   stopped — the thread is ended — and is a `semantic` error; the event loop is not blocked;
 * - its result: `structuredContent` when the tool declares an `outputSchema`, else the text
 *   of its content; its images, audio and embedded resources' bytes (`blob`) go to the model
 *   as files beside it (`Tool.output(value, { files })`, held to the agent's
 *   `limits.fileBytes`); a resource link, and a file block that is not a valid file, as a
 *   one-line description in the text;
 * - `needsApproval` (the default gate asks for approval) unless the server says the tool is
 *   read-only or not destructive (`readOnlyHint`, `destructiveHint`, with MCP's defaults:
 *   a tool that says nothing counts as destructive); tags `"mcp"`, and `"readOnly"`,
 *   `"destructive"`, `"idempotent"`, `"openWorld"` as its annotations say;
 * - no timeout, retry, `serial` or `returnDirect` unless `overrides` says so (the SDK's own
 *   60 s request timeout is switched off: the agentfx timeout is the only one).
 *
 * Calls: a result with `isError: true` is a `semantic` error with the server's text; a
 * JSON-RPC error answer is `semantic`; a lost connection (the process died, the HTTP stream
 * broke) or a failed transport is `environment` — the next call starts a new connection (a
 * new process). A timeout or an interruption aborts the request: the SDK sends
 * `notifications/cancelled`, and the call ends as a `ToolTimeout` or interrupted.
 *
 * The list is read page by page, at most 100 pages and 1000 tools (more fails with
 * `ListTools`). An entry that cannot be used is left out with a logged warning naming it and
 * why, and the others are offered: one that is not an MCP tool, one whose input or output
 * schema does not compile, a name listed more than once, a tool that runs only as an MCP task.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Toolkit } from "@agentfx/core"
 * import { McpToolkit, McpTransport } from "@agentfx/mcp"
 *
 * const program = Effect.gen(function*() {
 *   const files = yield* McpToolkit.make({
 *     transport: McpTransport.stdio({ command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] }),
 *     prefix: "fs_",
 *     overrides: { read_text_file: { timeout: "5 seconds" } }
 *   })
 *   return Toolkit.make(...(yield* files.tools))
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<Service, McpToolkitError, Scope.Scope> = (options) =>
  Internal.make(options, (reason, message) => new McpToolkitError({ reason, message }))

/**
 * {@link make} as a layer of the {@link McpToolkit} tag: connected when the layer is built,
 * closed when the layer's scope closes.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, ScriptedChatModel, Toolkit } from "@agentfx/core"
 * import { McpToolkit, McpTransport } from "@agentfx/mcp"
 *
 * const McpLive = McpToolkit.layer({
 *   transport: McpTransport.http({ url: "http://127.0.0.1:3000/mcp" }),
 *   overrides: { search: { timeout: "10 seconds" } }
 * })
 * const program = Effect.gen(function*() {
 *   const mcp = yield* McpToolkit.McpToolkit
 *   const agent = Agent.make({ tools: [...(yield* mcp.tools)] })
 *   return yield* Agent.run(agent, { input: "Search the docs for timeouts" })
 * }).pipe(Effect.provide(McpLive), Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("…")])))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<McpToolkit, McpToolkitError> =>
  Layer.effect(McpToolkit, make(options))
