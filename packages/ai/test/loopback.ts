/**
 * A node:http server on 127.0.0.1 that records every request and answers with a handler:
 * the provider's real wire format, written by hand in each test.
 */
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface Recorded {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly body: any
  /** performance.now() when the request arrived. */
  readonly at: number
}

export type Handler = (request: Recorded, response: Http.ServerResponse, index: number) => void

export interface Loopback {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly requests: Array<Recorded>
  /** Indexes of requests whose connection closed before the response was finished. */
  readonly aborted: Array<number>
}

/** Starts the server for the scope; closing the scope closes every connection. */
export const loopback = (handler: Handler) =>
  Effect.acquireRelease(
    Effect.callback<Loopback & { readonly server: Http.Server }>((resume) => {
      const requests: Array<Recorded> = []
      const aborted: Array<number> = []
      const server = Http.createServer((req, res) => {
        let data = ""
        req.setEncoding("utf8")
        req.on("data", (chunk) => (data += chunk))
        req.on("end", () => {
          const index = requests.length
          const recorded: Recorded = {
            method: req.method ?? "",
            path: req.url ?? "",
            headers: req.headers,
            body: data.length > 0 ? JSON.parse(data) : undefined,
            at: performance.now()
          }
          requests.push(recorded)
          res.on("close", () => {
            if (!res.writableFinished) aborted.push(index)
          })
          handler(recorded, res, index)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, requests, aborted, server }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/**
 * Whether a fiber sleeps on the `TestClock` until `at` (milliseconds of the clock's time): a
 * timeout is armed. Effect 4's `TestClock` has no public list of its sleeps (Effect 3's
 * `TestClock.sleeps()`): this reads the one its implementation keeps.
 */
export const sleepsUntil = (at: number) =>
  TestClock.testClockWith((clock) =>
    Effect.sync(() => (clock as unknown as { readonly sleeps: ReadonlyArray<{ readonly timestamp: number }> }).sleeps.some((sleep) => sleep.timestamp === at))
  )

/** Waits `millis` of real time, also under the `TestClock`. */
const realSleep = (millis: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, millis)))

/** Polls (real time, also under the `TestClock`) until `condition` holds, for at most `millis`. */
export const eventually = (condition: () => boolean | Effect.Effect<boolean>, millis = 3000) =>
  Effect.gen(function*() {
    const end = performance.now() + millis
    while (true) {
      const holds = condition()
      if (typeof holds === "boolean" ? holds : yield* holds) return
      if (performance.now() > end) return yield* Effect.die(new Error("condition not met in time"))
      yield* realSleep(5)
    }
  })

export const json = (
  res: Http.ServerResponse,
  body: unknown,
  status = 200,
  headers: Http.OutgoingHttpHeaders = {}
) => {
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify(body))
}

/** Server-sent events: `data:` lines (and `event:` lines when the event has a `type` and `named`). */
export const sseText = (events: ReadonlyArray<unknown>, options?: { readonly named?: boolean }) =>
  events.map((event) => {
    const name = options?.named === true && typeof event === "object" && event !== null && "type" in event
      ? `event: ${String(event.type)}\n`
      : ""
    return `${name}data: ${typeof event === "string" ? event : JSON.stringify(event)}\n\n`
  }).join("")

/** Answers with server-sent events (see `sseText`). */
export const sse = (res: Http.ServerResponse, events: ReadonlyArray<unknown>, options?: { readonly named?: boolean }) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  res.end(sseText(events, options))
}

/** Never answers. */
export const hang = (_res: Http.ServerResponse) => {}

/** Sends the headers of an event stream and `text`, then nothing more. */
export const hangAfter = (res: Http.ServerResponse, text = "") => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  res.flushHeaders()
  if (text.length > 0) res.write(text)
}
