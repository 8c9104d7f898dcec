/**
 * A bank agent whose transfers need approval, served by a real inbox on 127.0.0.1:0 over
 * stores of its own; runs that pause are started in the same stores.
 */
import type { ChatModel } from "@agentfx/core"
import { Agent, ChatMemory, type Gate, Message, RunStore, ScriptedChatModel, Tool } from "@agentfx/core"
import type { Scope } from "effect"
import { Context, Effect, Layer, Schema } from "effect"
import { HttpServer } from "effect/http"
import type { Authorization, RunDriver } from "../src/index.js"
import { DecisionLog, Inbox } from "../src/index.js"

export interface Bank {
  readonly agent: Agent.Agent<{}, never>
  /** `callId to amount` of every transfer that ran, in order. */
  readonly executed: Array<string>
}

/** The account's balance: 1000, without approval. */
export const balance = Tool.make("balance", {
  description: "The account's balance",
  parameters: Schema.Struct({}),
  success: Schema.Number,
  handler: () => Effect.succeed(1000)
})

/** `transfer` needs approval (to: not empty, not Mallory; amount: a positive number, at most 10,000); `balance` does not — unless `gate` says otherwise. */
export const bank = (name = "bank", gate?: Gate.Gate): Bank => {
  const executed: Array<string> = []
  const transfer = Tool.make("transfer", {
    description: "Sends money to a person",
    parameters: Schema.Struct({
      // a rule JSON Schema cannot say: the page lets it through, the server refuses it
      to: Schema.String.check(Schema.isMinLength(1), Schema.makeFilter((to) => to !== "Mallory" || "transfers to Mallory are blocked")),
      amount: Schema.Finite.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(10_000))
    }),
    success: Schema.String,
    needsApproval: true,
    handler: ({ amount, to }, { callId }) => Effect.sync(() => executed.push(`${callId} ${to} ${amount}`)).pipe(Effect.as(`sent ${amount} to ${to}`))
  })
  return { agent: Agent.make({ name, tools: [transfer, balance], ...(gate === undefined ? {} : { gate }) }), executed }
}

/** Asks for one transfer (to Ada, 250; `amount` in the input overrides), then reports the results it got. */
export const model = ScriptedChatModel.layer((request) => {
  const last = request.messages.at(-1)
  if (last?._tag === "User") {
    const amount = Number(/\d+/.exec(last.text)?.[0] ?? 250)
    return ScriptedChatModel.toolCalls({ id: "t1", name: "transfer", args: { to: "Ada", amount } })
  }
  const results = request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult")
  return ScriptedChatModel.text(`Done: ${results.map((r) => JSON.stringify(r.content)).join("; ")}`)
})

export interface Served {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** Runs `input` on the agent in the inbox's stores; returns the paused run's id. */
  readonly pause: (agent: Agent.Agent<{}, never>, input: string, conversationId?: string) => Effect.Effect<string>
  readonly store: RunStore.RunStore.Service
  /** The inbox's model. */
  readonly model: Layer.Layer<ChatModel.ChatModel>
  /** Runs an effect in the inbox's stores. */
  readonly inStores: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
}

/** A real inbox over fresh in-memory stores, for the scope. */
export const serve = (
  agents: ReadonlyArray<Agent.Agent<{}, never>>,
  options: {
    readonly authorize?: Authorization.Authorize
    /** The inbox's view of the store (the runs that pause are written to the store itself). */
    readonly storeView?: (store: RunStore.RunStore.Service) => RunStore.RunStore.Service
    /** The inbox's model (default: the fixture's). */
    readonly model?: Layer.Layer<ChatModel.ChatModel>
    /** The run store and chat memory (default: fresh in-memory ones). */
    readonly stores?: Layer.Layer<never, unknown>
    /** The inbox's decision log (default: the process-wide one). */
    readonly decisionLog?: DecisionLog.DecisionLog.Service
    /** What drives the runs it decides (default: the inbox's process, with the model). */
    readonly driver?: RunDriver.RunDriver
  } = {}
): Effect.Effect<Served, never, Scope.Scope> =>
  Effect.gen(function*() {
    const stores = yield* Layer.build(options.stores ?? Layer.mergeAll(RunStore.layerMemory(), ChatMemory.layerMemory)).pipe(Effect.orDie)
    const store = Context.get(stores, RunStore.RunStore)
    const viewed = Context.add(stores, RunStore.RunStore, options.storeView?.(store) ?? store)
    const inboxStores = options.decisionLog === undefined ? viewed : Context.add(viewed, DecisionLog.DecisionLog, options.decisionLog)
    const authorize = options.authorize === undefined ? {} : { authorize: options.authorize }
    const server = yield* Layer.build(
      // driven elsewhere, the inbox has no model
      (options.driver === undefined
        ? Inbox.serve({ agents, ...authorize }).pipe(Layer.provide(options.model ?? model))
        : Inbox.serve({ agents, ...authorize, driver: options.driver })).pipe(Layer.provide(Layer.succeedContext(inboxStores)))
    ).pipe(Effect.orDie)
    const address = Context.get(server, HttpServer.HttpServer).address
    if (address._tag === "UnixPathAddress") return yield* Effect.die(new Error("expected a TCP address"))
    const pause = (agent: Agent.Agent<{}, never>, input: string, conversationId?: string) =>
      Agent.run(agent, { input, ...(conversationId === undefined ? {} : { conversationId }) }).pipe(
        Effect.flatMap((exit) => exit._tag === "Paused" ? Effect.succeed(exit.runId) : Effect.die(new Error("expected a pause"))),
        Effect.provide(model),
        Effect.provide(stores),
        Effect.orDie
      )
    return { origin: `http://127.0.0.1:${address.port}`, pause, store, inStores: Effect.provide(stores), model: options.model ?? model }
  })

export interface Reply {
  readonly status: number
  readonly body: any
  readonly headers: Headers
}

/** One HTTP request to the inbox; the body parsed as JSON when it is JSON. */
export const request = (url: string, init: RequestInit = {}): Effect.Effect<Reply> =>
  Effect.promise(async () => {
    const response = await fetch(url, { redirect: "manual", ...init })
    const text = await response.text()
    const json = (response.headers.get("content-type") ?? "").includes("json")
    return { status: response.status, body: json ? JSON.parse(text) : text, headers: response.headers }
  })

/** POSTs a decision as JSON, naming the person deciding. */
export const decide = (origin: string, runId: string, decision: unknown, name?: string): Effect.Effect<Reply> =>
  request(`${origin}/inbox/api/runs/${encodeURIComponent(runId)}/decision`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(name === undefined ? {} : { "x-agentfx-reviewer": encodeURIComponent(name) }) },
    body: JSON.stringify(decision)
  })

/** Reads a Server-Sent Events response to its end: each event's id and parsed data. */
export const events = (url: string, init: RequestInit = {}): Effect.Effect<{ readonly status: number; readonly contentType: string | null; readonly events: Array<{ id: string; data: any }> }> =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    const text = await response.text()
    const parsed = text.split("\n\n").filter((block) => block.trim().length > 0).map((block) => {
      const id = /^id: (.*)$/m.exec(block)?.[1] ?? ""
      const data = /^data: (.*)$/m.exec(block)?.[1]
      return { id, data: data === undefined ? undefined : JSON.parse(data) }
    })
    return { status: response.status, contentType: response.headers.get("content-type"), events: parsed }
  })
