/**
 * What a failed `tools/call` means for the run: the class of its `ToolError`.
 */
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import { ToolError } from "@agentfx/core"
import { describeError } from "./connection.js"

/** HTTP statuses worth another attempt. */
const transientStatuses = new Set([408, 429, 502, 503, 504])

/** A result the SDK could not parse: it rejects with zod's error, which carries `issues`. */
const isParseFailure = (error: unknown) =>
  typeof error === "object" && error !== null && "issues" in error && Array.isArray(error.issues)

/**
 * The error for a `tools/call` that did not produce a result:
 * - the connection closed under the call (the server exited, the stream broke), the
 *   transport failed, or it was not connected → `environment` (the connection is dropped
 *   and the next call reconnects);
 * - an HTTP 408, 429, 502, 503 or 504 → `transient`;
 * - the server answered with a JSON-RPC error (unknown tool, invalid params, internal
 *   error), or with a result that is not a `CallToolResult`, or structured content that
 *   its output schema rejects → `semantic`, with the server's message.
 *
 * What the error says passes through `mask` (the transport's credentials, which a server may echo);
 * `lost` says why the connection was lost, when the transport said it.
 */
export const classify = (
  server: string,
  tool: string,
  error: unknown,
  mask: (text: string) => string,
  lost: string | undefined
): ToolError.ToolError => {
  const what = `MCP server "${server}", tool "${tool}"`
  const detail = mask(describeError(error))
  if (error instanceof McpError) {
    if (error.code === ErrorCode.ConnectionClosed) {
      const why = lost === undefined ? "" : ` (${lost})`
      return ToolError.environment(`${what}: the connection was lost before the server answered${why}; the next call reconnects`)
    }
    if (error.code === ErrorCode.RequestTimeout) return ToolError.transient(`${what}: ${detail}`)
    return ToolError.semantic(`${what}: ${detail}`)
  }
  if (isParseFailure(error)) return ToolError.semantic(`${what}: the server's answer is not a valid tool result: ${detail}`)
  if (error instanceof StreamableHTTPError && error.code !== undefined && transientStatuses.has(error.code)) {
    return ToolError.transient(`${what}: ${detail}`)
  }
  return ToolError.environment(`${what}: the transport failed (${detail}); the next call reconnects`)
}
