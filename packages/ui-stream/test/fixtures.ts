/**
 * A payments agent served by a real chat endpoint on 127.0.0.1:0 over fresh in-memory stores,
 * and the AI SDK's own client for it, of each major the endpoint supports (`ai` 7, npm's latest,
 * and `ai` 6, installed as `ai6`): `DefaultChatTransport`, its parser `readUIMessageStream`, and
 * `AbstractChat` (what `useChat` runs) over a plain state.
 */
import { Agent, ChatMemory, type ChatModel, RunStore, ScriptedChatModel, Tool, ToolError } from "@agentfx/core"
import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai"
import * as Ai6 from "ai6"
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import { HttpServer } from "effect/http"
import * as Http from "node:http"
import { Chat } from "../src/index.js"

export interface Payments {
  readonly agent: Agent.Agent<{}, never>
  /** `<to> <amount>` of every transfer that ran, in order. */
  readonly executed: Array<string>
  /** Resolved when `slow_report` may return (it waits for it). */
  readonly release: () => void
}

/** `transfer` needs approval above 100; `balance` runs at once; `slow_report` waits for `release()`. */
export const payments = (): Payments => {
  const executed: Array<string> = []
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const transfer = Tool.make("transfer", {
    description: "Sends money to a person",
    parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
    success: Schema.String,
    needsApproval: ({ amount }) => Effect.succeed(amount > 100),
    handler: ({ amount, to }) => Effect.sync(() => executed.push(`${to} ${amount}`)).pipe(Effect.as(`sent ${amount} to ${to}`))
  })
  const balance = Tool.make("balance", {
    description: "The account's balance",
    parameters: Schema.Struct({}),
    success: Schema.Number,
    handler: () => Effect.succeed(1000)
  })
  const slowReport = Tool.make("slow_report", {
    description: "A report that takes a while",
    parameters: Schema.Struct({}),
    success: Schema.String,
    handler: () => Effect.promise(() => released).pipe(Effect.as("report ready"))
  })
  return { agent: Agent.make({ name: "payments", tools: [transfer, balance, slowReport] }), executed, release }
}

/** An agent that pauses on environment failures: `send_mail` fails with one (no credentials) until `fixed` is set. */
export const mailer = () => {
  const state = { fixed: false, sent: 0 }
  const sendMail = Tool.make("send_mail", {
    description: "Sends a mail",
    parameters: Schema.Struct({ to: Schema.String }),
    success: Schema.String,
    handler: ({ to }) =>
      state.fixed
        ? Effect.sync(() => state.sent++).pipe(Effect.as(`mailed ${to}`))
        : Effect.fail(ToolError.environment("no SMTP credentials"))
  })
  return { agent: Agent.make({ name: "mailer", tools: [sendMail], onEnvironmentError: "pause" }), state }
}

export interface Served {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** The `useChat` transport of the client served (`ai` 7 unless told), at `<origin>/api/chat`. */
  readonly transport: DefaultChatTransport<UIMessage>
  readonly store: RunStore.RunStore.Service
  readonly memory: ChatMemory.ChatMemory.Service
  readonly close: () => Promise<void>
}

/** A real endpoint — `endpoint`, a server over the stores it is given — over fresh in-memory stores, on 127.0.0.1:0; `close()` stops it. */
export const start = async (
  endpoint: (stores: Layer.Layer<never>) => Layer.Layer<HttpServer.HttpServer, unknown>
) => {
  const scope = Effect.runSync(Scope.make())
  const served = await Effect.runPromise(Scope.provide(
    Effect.gen(function*() {
      const stores = yield* Layer.build(Layer.mergeAll(RunStore.layerMemory(), ChatMemory.layerMemory))
      const server = yield* Layer.build(endpoint(Layer.succeedContext(stores)))
      const address = Context.get(server, HttpServer.HttpServer).address
      if (address._tag === "UnixPathAddress") return yield* Effect.die(new Error("expected a TCP address"))
      return { origin: `http://127.0.0.1:${address.port}`, store: Context.get(stores, RunStore.RunStore), memory: Context.get(stores, ChatMemory.ChatMemory) }
    }).pipe(Effect.orDie),
    scope
  ))
  return { ...served, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** A real chat endpoint for `agent` and `model`, over fresh in-memory stores, with `client`'s transport; `close()` stops it. */
export const serve = async (agent: Agent.Agent<{}, never>, model: Layer.Layer<ChatModel.ChatModel>, client: Client = latest): Promise<Served> => {
  const served = await start((stores) => Chat.serve({ agent }).pipe(Layer.provide(model), Layer.provide(stores)))
  return { ...served, transport: client.transport(`${served.origin}/api/chat`) }
}

/** Answers every run with the steps in order, from its first (across its resumes). */
export const script = (...steps: ScriptedChatModel.Script & ReadonlyArray<unknown>) => ScriptedChatModel.layer(steps, { index: "run" })

class PlainState implements ChatState<UIMessage> {
  status: ChatStatus = "ready"
  error: Error | undefined = undefined
  constructor(public messages: Array<UIMessage> = []) {}
  pushMessage = (message: UIMessage) => void (this.messages = [...this.messages, message])
  popMessage = () => void (this.messages = this.messages.slice(0, -1))
  replaceMessage = (index: number, message: UIMessage) => void (this.messages = this.messages.map((m, i) => (i === index ? message : m)))
  snapshot = <T>(thing: T): T => structuredClone(thing)
}

/** What `useChat` runs, without React: the AI SDK's `AbstractChat` (`ai` 7) over a plain state, from its `messages` (as `useChat`'s). */
export class NodeChat extends AbstractChat<UIMessage> {
  constructor(init: Omit<ChatInit<UIMessage>, "state">) {
    super({ ...init, state: new PlainState(init.messages) })
  }
}

/** `ai` 6's `AbstractChat` over a plain state. */
class NodeChat6 extends Ai6.AbstractChat<Ai6.UIMessage> {
  constructor(init: Omit<Ai6.ChatInit<Ai6.UIMessage>, "state">) {
    super({ ...init, state: new PlainState(init.messages as Array<UIMessage> | undefined) as unknown as Ai6.ChatState<Ai6.UIMessage> })
  }
}

/**
 * The AI SDK's client of one major, as the tests use it — typed as `ai` 7's (the messages and
 * chunks the endpoint sends are the same to both; where the majors' types differ, the tests read
 * what they share).
 */
export interface Client {
  readonly name: string
  readonly transport: (api: string) => DefaultChatTransport<UIMessage>
  readonly readUIMessageStream: typeof readUIMessageStream
  readonly Chat: new(init: Omit<ChatInit<UIMessage>, "state">) => AbstractChat<UIMessage>
}

/** `ai` 7, npm's latest. */
export const latest: Client = {
  name: "ai 7",
  transport: (api) => new DefaultChatTransport({ api }),
  readUIMessageStream,
  Chat: NodeChat
}

/** `ai` 6. */
export const previous: Client = {
  name: "ai 6",
  transport: (api) => new Ai6.DefaultChatTransport({ api }) as unknown as DefaultChatTransport<UIMessage>,
  readUIMessageStream: Ai6.readUIMessageStream as unknown as typeof readUIMessageStream,
  Chat: NodeChat6 as unknown as Client["Chat"]
}

/** Every major of the AI SDK the endpoint supports, each with its own client. */
export const clients: ReadonlyArray<Client> = [previous, latest]

/** Every chunk of a UI message stream, read with the AI SDK's parser. */
export const chunks = async <A>(stream: ReadableStream<A>): Promise<Array<A>> => {
  const all: Array<A> = []
  for await (const chunk of stream as unknown as AsyncIterable<A>) all.push(chunk)
  return all
}

/**
 * A JSON POST to the chat endpoint, asking for JSON refusals (`Accept: application/json`;
 * `useChat` asks for none, and gets their sentences as text): its status and body. `headers`
 * replace the defaults of the same names.
 */
export const post = async (origin: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${origin}/api/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })
  return { status: response.status, body: await response.text() }
}

/** A request with exactly these headers (fetch would not send `Host` as given): its status, content type and body. */
export const raw = (origin: string, method: "GET" | "POST", path: string, headers: Record<string, string>, body?: unknown) =>
  new Promise<{ readonly status: number; readonly type: string; readonly body: string }>((resolve, reject) => {
    const url = new URL(origin)
    const req = Http.request({ host: url.hostname, port: url.port, method, path, headers, setHost: headers["host"] === undefined }, (res) => {
      let text = ""
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), body: text }))
    })
    req.on("error", reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })

/**
 * The clients the default hook (`ChatAuthorization.loopback()`) refuses, each with the sentence
 * of its 403, for a server at `origin` (`http://127.0.0.1:<port>`).
 */
export const strangers = (origin: string) => {
  const { port } = new URL(origin)
  const own = `127.0.0.1:${port}`
  return [
    // a site whose name resolves to 127.0.0.1
    { headers: { host: `evil.example:${port}` }, message: `Host "evil.example:${port}" is not a loopback name: open the chat at 127.0.0.1 or localhost` },
    // a page of another site
    { headers: { host: own, origin: "http://evil.example" }, message: "A page of another origin (http://evil.example) cannot use this chat" },
    // another origin of this machine
    { headers: { host: own, origin: `http://localhost:${port}` }, message: `A page of another origin (http://localhost:${port}) cannot use this chat` },
    // a proxy's client
    {
      headers: { host: own, "x-forwarded-for": "203.0.113.9" },
      message: "The request came through a proxy (Forwarded / X-Forwarded-For): the server must be given an authorization hook to admit it"
    }
  ]
}

/**
 * A page of a thread (`GET <api>/<id>/messages<query>`: the chat's at `<origin>/api/chat`, AG-UI's at
 * `<origin>/api/agui`), refusals as JSON: its status and body.
 */
export const readThread = async <Page>(api: string, id: string, query = "") => {
  const response = await fetch(`${api}/${encodeURIComponent(id)}/messages${query}`, { headers: { accept: "application/json" } })
  return { status: response.status, body: await response.json() as Page & { readonly _tag?: string; readonly message?: string } }
}
