/**
 * A real AG-UI endpoint on 127.0.0.1:0 over fresh in-memory stores, and AG-UI's own client for
 * it: `HttpAgent` of `@ag-ui/client` 1.0, with `connect` — what its `connectAgent()` runs —
 * reading the thread's reattach stream. Each client records the events it applied; the client
 * validates each (`@ag-ui/core`'s schemas) and warns of anything it does not know, which
 * `warnings()` collects.
 */
import type { Agent, ChatModel } from "@agentfx/core"
import { type BaseEvent, HttpAgent, type RunAgentInput, runHttpRequest, transformHttpEventStream } from "@ag-ui/client"
import { Layer } from "effect"
import { afterEach, beforeEach, expect, vi } from "vitest"
import { AgUi, type ChatAuthorization } from "../src/index.js"
import { start } from "./fixtures.js"

/** `HttpAgent`, whose `connectAgent()` reattaches to the thread's last run (`GET <url>/<threadId>/stream`). */
export class AgentfxAgent extends HttpAgent {
  protected override connect(input: RunAgentInput): ReturnType<HttpAgent["run"]> {
    return transformHttpEventStream(runHttpRequest(() =>
      this.fetch(`${this.url}/${encodeURIComponent(input.threadId)}/stream`, { headers: this.headers, signal: this.abortController.signal })
    ))
  }
}

export type Served = Awaited<ReturnType<typeof start>> & { readonly url: string }

/** A real AG-UI endpoint for `agent` and `model`, over fresh in-memory stores; `close()` stops it. */
export const serve = async (
  agent: Agent.Agent<any, never, any>,
  model: Layer.Layer<ChatModel.ChatModel>,
  authorize?: ChatAuthorization.Authorize
): Promise<Served> => {
  const served = await start((stores) =>
    AgUi.serve({ agent, ...(authorize === undefined ? {} : { authorize }) }).pipe(Layer.provide(model), Layer.provide(stores))
  )
  return { ...served, url: `${served.origin}/api/agui` }
}

/** A client of the thread, with the events it applied. */
export const client = (served: Served, threadId: string) => {
  const agent = new AgentfxAgent({ url: served.url, threadId })
  const events: Array<BaseEvent> = []
  agent.subscribe({ onEvent: ({ event }) => void events.push(event) })
  return { agent, events }
}

/**
 * The client's warnings (an event it had to strip or drop, one it could not apply), collected
 * per test; its `console.error` of a run that failed (its `runAgent` rejects: the tests read that)
 * is kept quiet.
 */
let warned: Array<string> = []
export const warnings = () => warned
beforeEach(() => {
  warned = []
  vi.spyOn(console, "warn").mockImplementation((...args: Array<unknown>) => void warned.push(args.map(String).join(" ")))
  vi.spyOn(console, "error").mockImplementation(() => undefined)
})
afterEach(() => {
  vi.restoreAllMocks()
})

/** What `runAgent` rejected with: the endpoint's refusal, as `HttpAgent` reports it (`HTTP <status>: <body>`). */
export const refusal = (run: Promise<unknown>) =>
  run.then(
    () => expect.fail("the run was not refused"),
    (error: Error & { readonly status?: number }) => ({ status: error.status, message: error.message })
  )

/** A `RunAgentInput` posted as is (`Accept: application/json`: refusals as JSON): its status and body. */
export const post = async (served: Served, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(served.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })
  return { status: response.status, body: await response.text() }
}

/** A run's input with a user message. */
export const said = (threadId: string, text: string, runId = `run-${Math.random().toString(36).slice(2)}`) => ({
  threadId,
  runId,
  messages: [{ id: `u-${runId}`, role: "user", content: text }],
  tools: [],
  context: [],
  state: {}
})

/** A run's input answering interrupts. */
export const answering = (threadId: string, resume: ReadonlyArray<unknown>, runId = `run-${Math.random().toString(36).slice(2)}`) => ({
  threadId,
  runId,
  messages: [],
  resume
})
