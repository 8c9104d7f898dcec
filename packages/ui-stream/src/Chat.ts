/**
 * A chat endpoint for an agent, for the AI SDK's `useChat` (`ai` 7 with `@ai-sdk/react` 4, and
 * `ai` 6 with `@ai-sdk/react` 3: one stream serves both) with its `DefaultChatTransport`,
 * unchanged: a user message starts a run, whose assistant message streams as the UI message
 * stream protocol — text as it comes, tool calls and their results, a pause as approval
 * requests. The person's approval responses resume the run (`Agent.resume`: exactly one resume
 * of a pause proceeds; a second is refused with 409). A client that lost its connection
 * reattaches (`resume`) and gets the message from its start, then the rest live; a page opened
 * again reads the chat's thread (`GET /api/chat/:chatId/messages`: `useChat`'s messages, its
 * pending approvals included, newest page first) for `useChat`'s `messages`. Mount it in your
 * server (`routes`) or start it alone (`serve`).
 *
 * The chat's id is the run's conversation id: the conversation is kept in the server's
 * `ChatMemory`, and of each request only the last message is read. Every request passes an
 * authorization hook (`Options.authorize`, the inbox's shape); by default only clients on this
 * machine are admitted (`ChatAuthorization.loopback()`). A refusal is a status and a sentence,
 * which `useChat` shows as its error.
 *
 * @since 0.1.0
 */
import type { Agent, Listening } from "@agentfx/core"
import type { Scope } from "effect"
import { Layer } from "effect"
import type { HttpServer, HttpServerError } from "effect/http"
import type { HttpApiGroup } from "effect/http-api"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "./ChatApi.js"
import type * as ChatAuthorization from "./ChatAuthorization.js"
import type * as ChatDriver from "./ChatDriver.js"
import * as Handlers from "./internal/handlers.js"
import * as Serve from "./internal/serve.js"

/**
 * The largest replay kept of one message (8 MiB of events): past it, a reattach gets
 * `ReplayDropped` (410) while the run goes on and its listeners still get every event.
 *
 * @example
 * ```ts
 * import { Chat } from "@agentfx/ui-stream"
 *
 * console.log(`${Chat.replayMaxBytes / 1024 / 1024} MiB`)
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const replayMaxBytes = 8 * 1024 * 1024

/**
 * How many chats' messages that paused or ended are kept for a reattach (the oldest are
 * forgotten first); a message that streams is always kept.
 *
 * @example
 * ```ts
 * import { Chat } from "@agentfx/ui-stream"
 *
 * console.log(Chat.replaySettledKept) // 1000
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const replaySettledKept = 1000

/**
 * How long a message that ended (completed or failed) is replayed to a reattach (60 seconds):
 * a client that lost its connection just before the end still gets it. A paused message is
 * replayed until the chat's next message (or until forgotten, see `replaySettledKept`).
 *
 * @example
 * ```ts
 * import { Chat } from "@agentfx/ui-stream"
 *
 * console.log(Chat.replayEndedMillis) // 60000
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const replayEndedMillis = 60_000

/**
 * How many messages a page of a thread holds when the request names no `limit` (50): the chat's
 * `GET /api/chat/:chatId/messages` and AG-UI's `GET /api/agui/:threadId/messages`.
 *
 * @example
 * ```ts
 * import { Chat } from "@agentfx/ui-stream"
 *
 * console.log(Chat.pageLimit) // 50
 * ```
 *
 * @since 0.2.0
 * @category constants
 */
export const pageLimit = 50

/**
 * The most messages a page of a thread holds (200): a larger `limit` is refused with
 * `InvalidRequest` (400), which says so.
 *
 * @example
 * ```ts
 * import { Chat } from "@agentfx/ui-stream"
 *
 * console.log(Chat.pageMaxLimit) // 200
 * ```
 *
 * @since 0.2.0
 * @category constants
 */
export const pageMaxLimit = 200

/**
 * What a chat endpoint is given.
 *
 * @example
 * ```ts
 * import type { Agent } from "@agentfx/core"
 * import type { Chat } from "@agentfx/ui-stream"
 *
 * declare const payments: Agent.Agent
 * const options: Chat.Options<never> = { agent: payments }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<R> {
  /** The agent every chat talks to. */
  readonly agent: Agent.Agent<any, R, any>
  /**
   * Who may start a run, answer a pause, reattach, read the thread — the inbox's hook, of the same shape: the
   * request (and what it asks, `ChatAuthorization.Access`) to the name of who asks, recorded as
   * `decidedBy` when they answer a pause; or `Unauthorized` (401) / `Forbidden` (403). Default
   * `ChatAuthorization.loopback()`: clients on this machine only, on a loopback `Host`, from no
   * other origin.
   */
  readonly authorize?: ChatAuthorization.Authorize
  /**
   * What drives the runs. Default: this process (`Agent.stream`, `Agent.streamResume`, with the
   * Layer's services: the agent's requirements and a `ChatModel`). `@agentfx/cluster`'s
   * `ClusterChat.driver()` drives them on the cluster's runners: the Layer then needs none of
   * those, only the run store and `ChatMemory` the runners share (for answers and thread reads).
   */
  readonly driver?: ChatDriver.ChatDriver
}

/**
 * The handlers of `ChatApi.Api`: give them to `HttpApiBuilder.layer(ChatApi.Api)` (as
 * {@link routes} does). Runs run in the Layer's
 * scope (a client that goes away does not stop its run) with the Layer's services — the
 * agent's requirements, a `ChatModel`, and the `RunStore` and `ChatMemory` when provided (else
 * their in-memory defaults). The replay buffer is the Layer's, in memory. Every request passes
 * `options.authorize` (default `ChatAuthorization.loopback()`: clients on this machine only).
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { HttpApiBuilder } from "effect/http-api"
 * import type { Agent } from "@agentfx/core"
 * import { Chat, ChatApi } from "@agentfx/ui-stream"
 *
 * declare const payments: Agent.Agent
 * const ChatLive = HttpApiBuilder.layer(ChatApi.Api).pipe(Layer.provide(Chat.layer({ agent: payments })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <R, D extends ChatDriver.ChatDriver | undefined = undefined>(
  options: Options<R> & { readonly driver?: D }
): Layer.Layer<HttpApiGroup.Service<"agentfx-chat", "chat">, never, Serve.Needs<D, R>> => handlers(options, undefined)

/** The handlers, their runs in `runs` when given, else in the Layer's scope. */
const handlers = <R, D extends ChatDriver.ChatDriver | undefined>(options: Options<R> & { readonly driver?: D }, runs: Scope.Scope | undefined) =>
  Serve.handlers(options, { maxBytes: replayMaxBytes, maxSettled: replaySettledKept, endedMillis: replayEndedMillis }, runs, (endpoint) =>
    Handlers.layer(endpoint, { limit: pageLimit, maxLimit: pageMaxLimit }))

/**
 * The chat's routes for an `HttpRouter` server of your own: merge them with your routes
 * (a page that uses `useChat`, say) and serve them with `HttpRouter.serve`. Without
 * `authorize`, only clients on this machine are admitted: give a hook to serve others.
 *
 * @example
 * ```ts
 * import { NodeHttpServer } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { HttpRouter } from "effect/http"
 * import { createServer } from "node:http"
 * import { type Agent, ScriptedChatModel } from "@agentfx/core"
 * import { Chat } from "@agentfx/ui-stream"
 *
 * declare const payments: Agent.Agent
 * const Server = HttpRouter.serve(Chat.routes({ agent: payments })).pipe(
 *   Layer.provide(NodeHttpServer.layer(createServer, { port: 3000, host: "127.0.0.1" })),
 *   Layer.provide(ScriptedChatModel.layer([]))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const routes = <R, D extends ChatDriver.ChatDriver | undefined = undefined>(options: Options<R> & { readonly driver?: D }) =>
  HttpApiBuilder.layer(Api).pipe(Layer.provide(layer(options)))

/**
 * Options of {@link serve}.
 *
 * @example
 * ```ts
 * import type { Agent } from "@agentfx/core"
 * import type { Chat } from "@agentfx/ui-stream"
 *
 * declare const payments: Agent.Agent
 * const options: Chat.ServeOptions<never> = { agent: payments, port: 3000 }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ServeOptions<R> extends Options<R>, Serve.Address {}

/**
 * The chat endpoint alone, on a Node HTTP server (127.0.0.1 unless told). The Layer holds the
 * server while it is in use; its `HttpServer` tells the address, and it logs it once it listens
 * (`Chat endpoint at http://127.0.0.1:3000/api/chat`, at level Info). A port that is taken fails it
 * with `Listening.PortInUse`, one sentence naming the port and what to do. Without `authorize`, it admits
 * clients on this machine only, on a loopback `Host` and from no other origin: a page of
 * another site — one whose name resolves to 127.0.0.1 (DNS rebinding) included — can neither
 * start a run nor answer its pause (403). Closing it stops the runs first (their messages end
 * with an `error` chunk), then the server.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { HttpServer } from "effect/http"
 * import { type Agent, ScriptedChatModel } from "@agentfx/core"
 * import { Chat } from "@agentfx/ui-stream"
 *
 * declare const payments: Agent.Agent
 * const program = Effect.gen(function*() {
 *   const server = yield* HttpServer.HttpServer
 *   if (server.address._tag !== "UnixPathAddress") console.log(`POST http://127.0.0.1:${server.address.port}/api/chat`)
 *   yield* Effect.never
 * }).pipe(Effect.provide(Chat.serve({ agent: payments, port: 3000 })), Effect.provide(ScriptedChatModel.layer([])))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const serve = <R, D extends ChatDriver.ChatDriver | undefined = undefined>(
  options: ServeOptions<R> & { readonly driver?: D }
): Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError | Listening.PortInUse, Serve.Needs<D, R>> =>
  Serve.serve((runs) => HttpApiBuilder.layer(Api).pipe(Layer.provide(handlers(options, runs))), options, {
    name: "Chat endpoint",
    server: "the chat endpoint",
    path: "/api/chat"
  })
