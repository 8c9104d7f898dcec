/**
 * An AG-UI 1.0 endpoint for an agent, for `@ag-ui/client`'s `HttpAgent`: a `RunAgentInput`
 * with a user message starts a run, streamed as AG-UI's events — steps, text as it comes, tool
 * calls and their results, the agent's slots as state snapshots and deltas. A pause is an
 * interrupt (`RUN_FINISHED` with `outcome: interrupt`, one interrupt per pending call); the
 * client's next `RunAgentInput` answers it with `resume` — approve, approve with edited
 * arguments, reject with a reason, or reply — and the run resumes through `Agent.resume`,
 * exactly once: a second answer to one pause is refused with 409. A client that lost its
 * connection reattaches (`GET …/:threadId/stream`) and gets the run from its start, then the
 * rest live; a page opened again reads the thread (`GET …/:threadId/messages`: AG-UI messages and
 * the pending interrupts, newest page first). Mount it in your server (`routes`) or start it
 * alone (`serve`). The guide:
 * `docs/ag-ui.md`; the choices: decision 165.
 *
 * The thread is the server's: its id is the run's conversation id, its history is kept in the
 * server's `ChatMemory`, and of the messages a client sends only the last — the user's — is
 * read. Every request passes an authorization hook (`Options.authorize`, the chat endpoint's);
 * by default only clients on this machine are admitted (`ChatAuthorization.loopback()`). A
 * refusal is a status and a sentence: `HttpAgent` rejects its run with `HTTP <status>: <sentence>`.
 *
 * @since 0.2.0
 */
import type { Agent, Listening } from "@agentfx/core"
import type { Scope } from "effect"
import { Layer } from "effect"
import type { HttpServer, HttpServerError } from "effect/http"
import type { HttpApiGroup } from "effect/http-api"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "./AgUiApi.js"
import { pageLimit, pageMaxLimit, replayEndedMillis, replayMaxBytes, replaySettledKept } from "./Chat.js"
import type * as ChatAuthorization from "./ChatAuthorization.js"
import type * as ChatDriver from "./ChatDriver.js"
import * as Handlers from "./internal/agUi/handlers.js"
import * as Serve from "./internal/serve.js"

/**
 * How often a comment (`: keepalive`) is sent on an open event stream (15 seconds), so that a
 * proxy or a load balancer does not close a connection while a tool runs long or a reattached
 * client waits for the run's next event.
 *
 * @example
 * ```ts
 * import { AgUi } from "@agentfx/ui-stream"
 *
 * console.log(`${AgUi.keepAliveMillis / 1000} s`) // 15 s
 * ```
 *
 * @since 0.2.0
 * @category constants
 */
export const keepAliveMillis = 15_000

/**
 * What an AG-UI endpoint is given.
 *
 * @example
 * ```ts
 * import type { Agent } from "@agentfx/core"
 * import type { AgUi } from "@agentfx/ui-stream"
 *
 * declare const payments: Agent.Agent
 * const options: AgUi.Options<never> = { agent: payments }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface Options<R> {
  /** The agent every thread talks to. */
  readonly agent: Agent.Agent<any, R, any>
  /**
   * Who may start a run, answer its interrupts, reattach, read the thread — the chat endpoint's hook
   * (`ChatAuthorization.Authorize`: `access.chatId` is the thread's id): the request (and what it
   * asks) to the name of who asks, recorded as `decidedBy` when they answer a pause; or
   * `Unauthorized` (401) / `Forbidden` (403). Default `ChatAuthorization.loopback()`: clients on
   * this machine only, on a loopback `Host`, from no other origin.
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
 * The handlers of `AgUiApi.Api`: give them to `HttpApiBuilder.layer(AgUiApi.Api)` (as
 * {@link routes} does). Runs run in the Layer's scope (a client that goes away does not stop
 * its run) with the Layer's services — the agent's requirements, a `ChatModel`, and the
 * `RunStore` and `ChatMemory` when provided (else their in-memory defaults). The replay buffer
 * is the Layer's, in memory, bounded as the chat endpoint's (`Chat.replayMaxBytes`, …). Every
 * request passes `options.authorize` (default `ChatAuthorization.loopback()`).
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { HttpApiBuilder } from "effect/http-api"
 * import type { Agent } from "@agentfx/core"
 * import { AgUi, AgUiApi } from "@agentfx/ui-stream"
 *
 * declare const payments: Agent.Agent
 * const AgUiLive = HttpApiBuilder.layer(AgUiApi.Api).pipe(Layer.provide(AgUi.layer({ agent: payments })))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = <R, D extends ChatDriver.ChatDriver | undefined = undefined>(
  options: Options<R> & { readonly driver?: D }
): Layer.Layer<HttpApiGroup.Service<"agentfx-ag-ui", "agui">, never, Serve.Needs<D, R>> => handlers(options, undefined)

/** The handlers, their runs in `runs` when given, else in the Layer's scope. */
const handlers = <R, D extends ChatDriver.ChatDriver | undefined>(options: Options<R> & { readonly driver?: D }, runs: Scope.Scope | undefined) =>
  Serve.handlers(
    options,
    { maxBytes: replayMaxBytes, maxSettled: replaySettledKept, endedMillis: replayEndedMillis },
    runs,
    (endpoint) => Handlers.layer(endpoint, keepAliveMillis, { limit: pageLimit, maxLimit: pageMaxLimit })
  )

/**
 * The AG-UI endpoint's routes for an `HttpRouter` server of your own (`POST /api/agui`,
 * `GET /api/agui/:threadId/stream`, `GET /api/agui/:threadId/messages`): merge them with your routes (the page, say) and serve
 * them with `HttpRouter.serve`. Without `authorize`, only clients on this machine are admitted:
 * give a hook to serve others.
 *
 * @example
 * ```ts
 * import { NodeHttpServer } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { HttpRouter } from "effect/http"
 * import { createServer } from "node:http"
 * import { type Agent, ScriptedChatModel } from "@agentfx/core"
 * import { AgUi } from "@agentfx/ui-stream"
 *
 * declare const payments: Agent.Agent
 * const Server = HttpRouter.serve(AgUi.routes({ agent: payments })).pipe(
 *   Layer.provide(NodeHttpServer.layer(createServer, { port: 3000, host: "127.0.0.1" })),
 *   Layer.provide(ScriptedChatModel.layer([]))
 * )
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const routes = <R, D extends ChatDriver.ChatDriver | undefined = undefined>(options: Options<R> & { readonly driver?: D }) =>
  HttpApiBuilder.layer(Api).pipe(Layer.provide(layer(options)))

/**
 * Options of {@link serve}: the endpoint's, and its address.
 *
 * @example
 * ```ts
 * import type { Agent } from "@agentfx/core"
 * import type { AgUi } from "@agentfx/ui-stream"
 *
 * declare const payments: Agent.Agent
 * const options: AgUi.ServeOptions<never> = { agent: payments, port: 3000 }
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export interface ServeOptions<R> extends Options<R>, Serve.Address {}

/**
 * The AG-UI endpoint alone, on a Node HTTP server (127.0.0.1 unless told). The Layer holds the
 * server while it is in use; its `HttpServer` tells the address, and it logs it once it listens
 * (`AG-UI endpoint at http://127.0.0.1:3000/api/agui`, at level Info). A port that is taken fails it
 * with `Listening.PortInUse`, one sentence naming the port and what to do. Without `authorize`, it admits
 * clients on this machine only, on a loopback `Host` and from no other origin (403). Closing
 * it stops the runs first (their AG-UI runs end with `RUN_ERROR`), then the server.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { HttpServer } from "effect/http"
 * import { type Agent, ScriptedChatModel } from "@agentfx/core"
 * import { AgUi } from "@agentfx/ui-stream"
 *
 * declare const payments: Agent.Agent
 * const program = Effect.gen(function*() {
 *   const server = yield* HttpServer.HttpServer
 *   if (server.address._tag !== "UnixPathAddress") console.log(`new HttpAgent({ url: "http://127.0.0.1:${server.address.port}/api/agui" })`)
 *   yield* Effect.never
 * }).pipe(Effect.provide(AgUi.serve({ agent: payments, port: 3000 })), Effect.provide(ScriptedChatModel.layer([])))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const serve = <R, D extends ChatDriver.ChatDriver | undefined = undefined>(
  options: ServeOptions<R> & { readonly driver?: D }
): Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError | Listening.PortInUse, Serve.Needs<D, R>> =>
  Serve.serve((runs) => HttpApiBuilder.layer(Api).pipe(Layer.provide(handlers(options, runs))), options, {
    name: "AG-UI endpoint",
    server: "the AG-UI endpoint",
    path: "/api/agui"
  })
