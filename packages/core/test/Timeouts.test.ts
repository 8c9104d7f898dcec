/**
 * What a declared timeout really stops, measured on real time: `it.live` is the point here.
 * Bounds are generous; the assertions are about what happens, not how fast.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { Tool, ToolCallingManager, ToolError, Toolkit } from "../src/index.js"
import { summary } from "./fixtures.js"

/** A loopback server that accepts requests and never answers; it records when each request's connection closes. */
const hangingServer = () => {
  const closedAt = new Map<string, number>()
  const server = Http.createServer((req) => {
    const id = new URL(req.url ?? "/", "http://x").searchParams.get("id") ?? "?"
    req.socket.on("close", () => closedAt.set(id, performance.now()))
  })
  return { server, closedAt, url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow` }
}

const busyFor = (millis: number) => {
  const end = performance.now() + millis
  while (performance.now() < end) {
    // a synchronous, CPU-bound body: it never yields
  }
}

describe("Timeouts (real time)", () => {
  const hanging = hangingServer()
  beforeAll(() => new Promise<void>((resolve) => hanging.server.listen(0, "127.0.0.1", resolve)))
  afterAll(() =>
    new Promise<void>((resolve) => {
      hanging.server.closeAllConnections()
      hanging.server.close(() => resolve())
    })
  )

  const fetchTool = (name: string, passSignal: boolean) =>
    Tool.make(name, {
      description: "GET a slow URL",
      parameters: Schema.Struct({ id: Schema.String }),
      success: Schema.String,
      timeout: "200 millis",
      handler: ({ id }) =>
        Effect.tryPromise({
          try: passSignal
            ? (signal) => fetch(`${hanging.url()}?id=${id}`, { signal }).then((r) => r.text())
            : () => fetch(`${hanging.url()}?id=${id}`).then((r) => r.text()),
          catch: (error) => ToolError.transient(String(error))
        })
    })

  it.live("a fetch tool given the AbortSignal is aborted at its deadline: the server sees the connection close", () =>
    Effect.gen(function*() {
      const toolkit = Toolkit.make(fetchTool("fetch_slow", true))
      const started = performance.now()
      const results = yield* ToolCallingManager.executeBatch(toolkit, [
        { id: "c1", name: "fetch_slow", args: { id: "aborted" } }
      ])
      const returned = performance.now() - started
      expect(summary(results)).toEqual([`ToolTimeout(transient): Tool "fetch_slow" timed out after 200ms`])
      expect(returned).toBeGreaterThanOrEqual(195)
      expect(returned).toBeLessThan(2000)
      yield* Effect.sleep("20 millis").pipe(Effect.repeat({ until: () => hanging.closedAt.has("aborted"), times: 100 }))
      expect(hanging.closedAt.get("aborted")! - started).toBeLessThan(2000)
    }))

  it.live("a fetch tool that ignores the signal times out, but its request stays open (pass the signal!)", () =>
    Effect.gen(function*() {
      const toolkit = Toolkit.make(fetchTool("fetch_leaky", false))
      const results = yield* ToolCallingManager.executeBatch(toolkit, [
        { id: "c1", name: "fetch_leaky", args: { id: "leaked" } }
      ])
      expect(summary(results)).toEqual([`ToolTimeout(transient): Tool "fetch_leaky" timed out after 200ms`])
      yield* Effect.sleep("500 millis")
      expect(hanging.closedAt.has("leaked")).toBe(false)
    }))

  it.live("a synchronous busy-loop tool is NOT stopped at its deadline in-process: it runs to the end and succeeds", () =>
    Effect.gen(function*() {
      const busy = Tool.make("busy", {
        description: "burns CPU for 400 ms without yielding",
        parameters: Schema.Struct({}),
        success: Schema.String,
        timeout: "50 millis",
        handler: () => Effect.sync(() => busyFor(400)).pipe(Effect.as("finished"))
      })
      const toolkit = Toolkit.make(busy)
      const started = performance.now()
      const results = yield* ToolCallingManager.executeBatch(toolkit, [{ id: "c1", name: "busy", args: {} }])
      expect(summary(results)).toEqual(["finished"])
      expect(performance.now() - started).toBeGreaterThanOrEqual(400)
    }))

  it.live("Effect.yieldNow between slices lets the deadline fire (Effect 4's scheduler yields through setImmediate), as Tool.yieldToEventLoop does", () =>
    Effect.gen(function*() {
      const sliced = (name: string, yieldEffect: Effect.Effect<void>) =>
        Tool.make(name, {
          description: "burns CPU in 1 ms slices for 400 ms",
          parameters: Schema.Struct({}),
          success: Schema.String,
          timeout: "50 millis",
          handler: () =>
            Effect.gen(function*() {
              const end = performance.now() + 400
              while (performance.now() < end) {
                busyFor(1)
                yield* yieldEffect
              }
              return "finished"
            })
        })
      const toolkit = Toolkit.make(sliced("micro", Effect.yieldNow), sliced("macro", Tool.yieldToEventLoop))
      for (const name of ["micro", "macro"]) {
        const started = performance.now()
        const results = yield* ToolCallingManager.executeBatch(toolkit, [{ id: "c1", name, args: {} }])
        expect(summary(results)).toEqual([`ToolTimeout(transient): Tool "${name}" timed out after 50ms`])
        // the timeout is the proof (a slice that never yields to the event loop runs its 400 ms); this bounds a hang, with room for a busy machine
        expect(performance.now() - started).toBeLessThan(2000)
      }
    }))
})
