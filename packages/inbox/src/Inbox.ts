/**
 * The approval inbox: a web page and an HTTP API over the `RunStore`, where people see the
 * paused runs of the agents it is given, decide them, and follow each resumed run live.
 * Exactly one decision resumes a run (the store's claim); every other person deciding it is
 * told who decided, and when. Mount it in your server (`routes`) or start it alone (`serve`).
 *
 * @since 0.1.0
 */
import type { Agent, ChatModel } from "@agentfx/core"
import { Listening } from "@agentfx/core"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Data, Effect, Exit, Layer, Scope } from "effect"
import type { HttpServerError } from "effect/http"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import type { HttpApiGroup } from "effect/http-api"
import { HttpApiBuilder } from "effect/http-api"
import { createServer } from "node:http"
import * as Authorization from "./Authorization.js"
import { Api } from "./InboxApi.js"
import * as Live from "./internal/live.js"
import * as Page from "./internal/page.js"
import * as QueryCheck from "./internal/queryCheck.js"
import * as Runs from "./internal/runs.js"
import type * as RunDriver from "./RunDriver.js"

/**
 * What an inbox is given.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Agent } from "@agentfx/core"
 * import type { Inbox } from "@agentfx/inbox"
 *
 * declare const payments: Agent.Agent
 * const options: Inbox.Options<never> = { agents: [payments], authorize: () => Effect.succeed("ada") }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<R> {
  /**
   * The agents whose paused runs it shows and resumes, told apart by name (a run's record
   * names its agent). Runs of other agents are not listed.
   */
  readonly agents: ReadonlyArray<Agent.Agent<any, R, any>>
  /** Who may use it, and who decides. Default `Authorization.loopbackOrToken()`: clients on this machine only. */
  readonly authorize?: Authorization.Authorize
  /**
   * What drives the runs it decides. Default: this process — a decision is resumed here, with the
   * Layer's services (the agents' requirements and a `ChatModel`). A cluster's driver
   * (`ClusterInbox.driver()`) sends it to the runner that holds the run: the inbox then needs
   * neither the agents' services nor a model.
   */
  readonly driver?: RunDriver.RunDriver
}

/**
 * What an inbox needs of its context: the agents' requirements and a `ChatModel` when it runs
 * the runs it decides itself; nothing when a driver runs them elsewhere.
 *
 * @since 0.2.0
 * @category models
 */
export type Requirements<R, D extends RunDriver.RunDriver | undefined> = [D] extends [RunDriver.RunDriver] ? never : R | ChatModel.ChatModel

/**
 * The inbox was given options it cannot use; `problems` names every one.
 *
 * @example
 * ```ts
 * import { Inbox } from "@agentfx/inbox"
 *
 * try {
 *   Inbox.layer({ agents: [] })
 * } catch (error) {
 *   if (error instanceof Inbox.InvalidInbox) console.error(error.problems) // ["agents: give at least one agent"]
 * }
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidInbox extends Data.TaggedError("InvalidInbox")<{ readonly problems: ReadonlyArray<string> }> {
  override get message(): string {
    return `Invalid inbox: ${this.problems.join("; ")}`
  }
}

/**
 * The handlers of `InboxApi.Api`: give them to `HttpApiBuilder.layer(InboxApi.Api)` (as
 * {@link routes} does). Resumes run in the
 * Layer's scope with the Layer's services — the agents' requirements, a `ChatModel`, and
 * the `RunStore`, `ChatMemory` and `DecisionLog` when provided (else their defaults, in
 * memory). Throws {@link InvalidInbox} when no agent is given or two share a name.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { HttpApiBuilder } from "effect/http-api"
 * import { Agent } from "@agentfx/core"
 * import { Inbox, InboxApi } from "@agentfx/inbox"
 *
 * declare const payments: Agent.Agent
 * const InboxLive = HttpApiBuilder.layer(InboxApi.Api).pipe(Layer.provide(Inbox.layer({ agents: [payments] })))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <R, D extends RunDriver.RunDriver | undefined = undefined>(
  options: Options<R> & { readonly driver?: D }
): Layer.Layer<
  HttpApiGroup.Service<"agentfx-inbox", "inboxPage"> | HttpApiGroup.Service<"agentfx-inbox", "inboxRuns">,
  never,
  Requirements<R, D>
> => handlers(options)(undefined)

/**
 * The handlers of the inbox's options, once checked (throws {@link InvalidInbox}): resumes run
 * in `runs` when given, else in the Layer's scope.
 */
const handlers = <R, D extends RunDriver.RunDriver | undefined>(options: Options<R> & { readonly driver?: D }) => {
  const problems: Array<string> = []
  if (options.agents.length === 0) problems.push("agents: give at least one agent")
  const agents = new Map<string, Agent.Any>()
  const twice = new Set<string>()
  for (const agent of options.agents) {
    if (agents.has(agent.name)) twice.add(agent.name)
    agents.set(agent.name, agent)
  }
  if (twice.size > 0) problems.push(`agents: names used twice: ${[...twice].join(", ")} (a run's record names its agent)`)
  if (problems.length > 0) throw new InvalidInbox({ problems })
  const authorize = options.authorize ?? Authorization.loopbackOrToken()
  return (runScope: Scope.Scope | undefined): Layer.Layer<
    HttpApiGroup.Service<"agentfx-inbox", "inboxPage"> | HttpApiGroup.Service<"agentfx-inbox", "inboxRuns">,
    never,
    Requirements<R, D>
  > => {
    const runs = Layer.unwrap(
      Effect.gen(function*() {
        const live = Live.make(yield* Effect.context<any>(), runScope ?? (yield* Effect.scope), options.driver)
        return Runs.layer(agents, live, options.driver)
      })
    )
    return Layer.mergeAll(Page.layer(authorize), runs).pipe(Layer.provide(Layer.merge(Authorization.layer(authorize), QueryCheck.layer)))
  }
}

/**
 * The inbox's routes for an `HttpRouter` server of your own: merge them with your routes
 * and serve them with `HttpRouter.serve`. Everything lives under `/inbox`.
 *
 * @example
 * ```ts
 * import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
 * import { Layer } from "effect"
 * import { HttpRouter, HttpServerResponse } from "effect/http"
 * import { createServer } from "node:http"
 * import { Agent, ScriptedChatModel } from "@agentfx/core"
 * import { Inbox } from "@agentfx/inbox"
 *
 * declare const payments: Agent.Agent
 * const Health = HttpRouter.add("GET", "/health", HttpServerResponse.text("ok"))
 * const Server = HttpRouter.serve(Layer.mergeAll(Inbox.routes({ agents: [payments] }), Health)).pipe(
 *   Layer.provide(NodeHttpServer.layer(createServer, { port: 8080, host: "127.0.0.1" })),
 *   Layer.provide(ScriptedChatModel.layer([]))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const routes = <R, D extends RunDriver.RunDriver | undefined = undefined>(options: Options<R> & { readonly driver?: D }) =>
  HttpApiBuilder.layer(Api).pipe(Layer.provide(layer(options)))

/**
 * Options of {@link serve}.
 *
 * @example
 * ```ts
 * import type { Agent } from "@agentfx/core"
 * import type { Inbox } from "@agentfx/inbox"
 *
 * declare const payments: Agent.Agent
 * const options: Inbox.ServeOptions<never> = { agents: [payments], port: 4180, host: "127.0.0.1" }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface ServeOptions<R> extends Options<R> {
  /** Default 0: a free port (read it from the `HttpServer`'s address). */
  readonly port?: number
  /** Default `"127.0.0.1"`: this machine only. */
  readonly host?: string
}

/**
 * The port {@link serve} was given is taken: something else listens on it (another inbox,
 * perhaps). Serve on another `port`, or 0 for a free one. (`Listening.PortInUse` of
 * `@agentfx/core`, which the chat and AG-UI endpoints fail with too.)
 *
 * @example
 * ```ts
 * import { Console, Effect, Layer } from "effect"
 * import { Agent, ScriptedChatModel } from "@agentfx/core"
 * import { Inbox } from "@agentfx/inbox"
 *
 * declare const payments: Agent.Agent
 * const main = Layer.launch(Inbox.serve({ agents: [payments], port: 4180 })).pipe(
 *   Effect.provide(ScriptedChatModel.layer([])),
 *   Effect.catchTag("PortInUse", (e) => Console.error(e.message))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const PortInUse = Listening.PortInUse

/**
 * @since 0.1.0
 * @category errors
 */
export type PortInUse = Listening.PortInUse

/**
 * The inbox alone, on a Node HTTP server (`/` redirects to `/inbox`). The Layer holds the
 * server while it is in use; its `HttpServer` tells the address, and it logs the page's
 * address once it listens (`Inbox at http://127.0.0.1:4180/inbox`, at level Info). A port
 * that is taken fails it with {@link PortInUse}. Closing it stops the runs it resumed first
 * (their event streams end with `RunFailed`, `Interrupted`), then the server.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { HttpServer } from "effect/http"
 * import { Agent, ScriptedChatModel } from "@agentfx/core"
 * import { Inbox } from "@agentfx/inbox"
 *
 * declare const payments: Agent.Agent
 * const program = Effect.gen(function*() {
 *   const server = yield* HttpServer.HttpServer
 *   if (server.address._tag !== "UnixPathAddress") console.log(`http://127.0.0.1:${server.address.port}/inbox`)
 *   yield* Effect.never
 * }).pipe(Effect.provide(Inbox.serve({ agents: [payments], port: 8080 })), Effect.provide(ScriptedChatModel.layer([])))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const serve = <R, D extends RunDriver.RunDriver | undefined = undefined>(
  options: ServeOptions<R> & { readonly driver?: D }
): Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError | PortInUse, Requirements<R, D>> => {
  const inbox = handlers(options)
  const listen = { port: options.port ?? 0, host: options.host ?? "127.0.0.1" }
  const server = Layer.merge(
    Layer.effect(
      HttpServer.HttpServer,
      Effect.mapError(
        // its runs stopped first (below), the connections left are idle ones: a second is plenty
        NodeHttpServer.make(createServer, { ...listen, gracefulShutdownTimeout: "1 second" }),
        Listening.portTaken({ ...listen, server: "the inbox" })
      )
    ),
    NodeHttpServer.layerHttpServices
  )
  return Layer.unwrap(Effect.gen(function*() {
    // the runs stop first: the server's graceful shutdown waits for the event streams, which end with their runs
    const runs = yield* Scope.fork(yield* Effect.scope)
    const app = Layer.mergeAll(
      HttpApiBuilder.layer(Api).pipe(Layer.provide(inbox(runs))),
      HttpRouter.add("GET", "/", HttpServerResponse.redirect("/inbox", { status: 303 }))
    )
    return Layer.effectDiscard(Effect.addFinalizer(() => Scope.close(runs, Exit.void))).pipe(
      Layer.provideMerge(
        HttpRouter.serve(app, { disableLogger: true, disableListenLog: true }).pipe(
          Layer.provideMerge(server),
          Layer.tap((context) => Effect.logInfo(`Inbox at ${Listening.url(listen.host, Context.get(context, HttpServer.HttpServer).address, "/inbox")}`))
        )
      )
    )
  })) as Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError | PortInUse, Requirements<R, D>> // the router's request types do not reduce over a type parameter
}
