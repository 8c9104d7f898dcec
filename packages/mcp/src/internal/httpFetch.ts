/**
 * The `fetch` given to the SDK's HTTP transports, so that a server that dies mid-request
 * never leaves a call waiting forever.
 *
 * Over Streamable HTTP, the answer to a request comes on the event stream of its own POST.
 * When that stream breaks before the answer (the server died, the network went away), the
 * SDK 1.32 only reports the break to `onerror` and the request stays pending for ever
 * (measured: docs/decisions/041-mcp-connection-loss.md). This fetch watches each POST's
 * event stream and, when it ends without an answer for a request it carried, appends a
 * JSON-RPC error response `ConnectionClosed` for that request, so the SDK rejects it. A
 * stream that ends cleanly after an event id is left alone: the SDK resumes it.
 *
 * Over the older HTTP+SSE transport every answer comes on one GET event stream; when that
 * stream is lost, `onEventStreamLost` is called (the connection then closes, rejecting every
 * pending request).
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js"

const isEventStream = (response: Response) =>
  (response.headers.get("content-type") ?? "").toLowerCase().startsWith("text/event-stream")

/** The ids of the JSON-RPC requests in a POST body (one message or a batch). */
const requestIds = (body: unknown): ReadonlyArray<string | number> => {
  if (typeof body !== "string") return []
  try {
    const parsed: unknown = JSON.parse(body)
    return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((message) =>
      typeof message === "object" && message !== null && "method" in message && "id" in message &&
        (typeof message.id === "string" || typeof message.id === "number")
        ? [message.id]
        : []
    )
  } catch {
    return []
  }
}

/** Reads an SSE byte stream line by line: which event ids and which answered request ids went by. */
class EventTracker {
  private readonly decoder = new TextDecoder()
  private pending = ""
  private data: Array<string> = []
  sawEventId = false
  readonly answered = new Set<string | number>()

  push(chunk: Uint8Array): void {
    this.pending += this.decoder.decode(chunk, { stream: true })
    const lines = this.pending.split(/\r\n|\r|\n/)
    this.pending = lines.pop() ?? ""
    for (const line of lines) this.line(line)
  }

  private line(line: string): void {
    if (line === "") return this.dispatch()
    if (line.startsWith("id:")) this.sawEventId = true
    else if (line.startsWith("data:")) this.data.push(line.slice(line.startsWith("data: ") ? 6 : 5))
  }

  private dispatch(): void {
    const data = this.data.join("\n")
    this.data = []
    if (data === "") return
    try {
      const message: unknown = JSON.parse(data)
      if (
        typeof message === "object" && message !== null && "id" in message &&
        (typeof message.id === "string" || typeof message.id === "number") &&
        ("result" in message || "error" in message)
      ) this.answered.add(message.id)
    } catch {
      // not JSON: the SDK reports it
    }
  }
}

const lostAnswer = (id: string | number) =>
  `\n\nevent: message\ndata: ${
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      error: {
        code: ErrorCode.ConnectionClosed,
        message: "the response stream ended before the answer"
      }
    })
  }\n\n`

/** A POST's event stream, with an error answer appended for each request it lost. */
const guardPost = (body: ReadableStream<Uint8Array>, ids: ReadonlyArray<string | number>) => {
  const reader = body.getReader()
  const tracker = new EventTracker()
  const encoder = new TextEncoder()
  const finish = (controller: ReadableStreamDefaultController<Uint8Array>, broken: boolean) => {
    if (broken || !tracker.sawEventId) {
      for (const id of ids) if (!tracker.answered.has(id)) controller.enqueue(encoder.encode(lostAnswer(id)))
    }
    controller.close()
  }
  return new ReadableStream<Uint8Array>({
    pull: (controller) =>
      reader.read().then(
        ({ done, value }) => {
          if (done) return finish(controller, false)
          tracker.push(value)
          controller.enqueue(value)
        },
        () => finish(controller, true)
      ),
    cancel: (reason) => reader.cancel(reason)
  })
}

/** A GET event stream that reports its loss (an end or a break not asked for by the reader). */
const watchGet = (body: ReadableStream<Uint8Array>, onLost: () => void) => {
  const reader = body.getReader()
  return new ReadableStream<Uint8Array>({
    pull: (controller) =>
      reader.read().then(
        ({ done, value }) => {
          if (!done) return controller.enqueue(value)
          controller.close()
          onLost()
        },
        (error) => {
          controller.error(error)
          onLost()
        }
      ),
    cancel: (reason) => reader.cancel(reason)
  })
}

const rewrap = (response: Response, body: ReadableStream<Uint8Array>) =>
  new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })

/**
 * `fetch`, with each POST's event stream guarded and, when `onEventStreamLost` is given, each
 * GET event stream watched.
 */
export const guardedFetch = (onEventStreamLost?: () => void): FetchLike => async (url, init) => {
  const response = await fetch(url, init)
  if (!response.ok || response.body === null || !isEventStream(response)) return response
  const method = (init?.method ?? "GET").toUpperCase()
  if (method === "POST") {
    const ids = requestIds(init?.body)
    return ids.length === 0 ? response : rewrap(response, guardPost(response.body, ids))
  }
  return method === "GET" && onEventStreamLost !== undefined
    ? rewrap(response, watchGet(response.body, onEventStreamLost))
    : response
}
