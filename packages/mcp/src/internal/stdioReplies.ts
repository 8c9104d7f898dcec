/**
 * The stdio transport's reading of a server's lines, with one change: an answer to a request
 * (a JSON object with an `id` and no `method`) that is not JSON-RPC — a `result` that is not an
 * object, neither `result` nor `error`, an `error` of the wrong shape — answers that request
 * with a JSON-RPC error naming what was wrong. The SDK's own reading drops such a line as an
 * invalid message, and the request it answers waits for ever (for its timeout, if it has one).
 * Lines that are no answer (junk, a notification the SDK does not know) are dropped as before.
 */
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ReadBuffer, STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js"
import { ErrorCode, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"

const isObject = (u: unknown): u is { readonly [key: string]: unknown } => typeof u === "object" && u !== null && !Array.isArray(u)

/** What is wrong with an answer the SDK refused: said in a few words, not quoted (a hostile answer may be large). */
const problemOf = (answer: { readonly [key: string]: unknown }): string => {
  if (answer.jsonrpc !== "2.0") return `its jsonrpc is not "2.0"`
  if ("result" in answer && !isObject(answer.result)) {
    return `its result is ${answer.result === null ? "null" : Array.isArray(answer.result) ? "an array" : `a ${typeof answer.result}`}, not an object`
  }
  if ("error" in answer) return "its error is not an object with an integer code and a message"
  return "result" in answer ? "it is not a response of JSON-RPC 2.0" : "it has neither a result nor an error"
}

/** What the server sent in place of an answer to request `id`, as the JSON-RPC error that request gets. */
const invalidAnswer = (id: string | number, answer: { readonly [key: string]: unknown }): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  error: { code: ErrorCode.InternalError, message: `the server's answer is not a JSON-RPC response: ${problemOf(answer)}` }
})

/** A line as a message: the SDK's, or for an invalid answer to a request, that request's error. */
const messageOf = (line: string): JSONRPCMessage => {
  const json: unknown = JSON.parse(line)
  const parsed = JSONRPCMessageSchema.safeParse(json)
  if (parsed.success) return parsed.data
  const id = isObject(json) ? json.id : undefined
  if ((typeof id === "string" || typeof id === "number") && isObject(json) && !("method" in json)) return invalidAnswer(id, json)
  throw parsed.error
}

/**
 * The SDK's `ReadBuffer` with its own bytes (none of the SDK's private fields read): the same
 * limit per message, failing with the SDK's own words (`connection.ts` names the limit from
 * them), the same lines, each read by `messageOf`.
 */
class AnswerReadBuffer extends ReadBuffer {
  private pending: Buffer | undefined
  constructor(private readonly maxBytes: number) {
    super({ maxBufferSize: maxBytes })
  }

  override append(chunk: Buffer): void {
    const size = (this.pending?.length ?? 0) + chunk.length
    if (size > this.maxBytes) {
      this.clear()
      throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBytes} bytes`)
    }
    this.pending = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk])
  }

  override readMessage(): JSONRPCMessage | null {
    const index = this.pending?.indexOf("\n") ?? -1
    if (this.pending === undefined || index === -1) return null
    const line = this.pending.toString("utf8", 0, index).replace(/\r$/, "")
    this.pending = this.pending.subarray(index + 1)
    return messageOf(line)
  }

  override clear(): void {
    this.pending = undefined
  }
}

/**
 * `transport` reading its server's lines as above. It replaces the SDK 1.32's `ReadBuffer`
 * (its private field `_readBuffer`, set in the constructor); a transport without one is left
 * as it is — a later SDK that renames it reads as the SDK does (`Hostile.test.ts` pins the
 * behaviour, and fails then).
 */
export const answeringInvalidReplies = (transport: StdioClientTransport): StdioClientTransport => {
  const target = transport as unknown as { _readBuffer?: unknown }
  // the SDK's default limit per message: the transports agentfx makes are given no other
  if (target._readBuffer instanceof ReadBuffer) target._readBuffer = new AnswerReadBuffer(STDIO_DEFAULT_MAX_BUFFER_SIZE)
  return transport
}
