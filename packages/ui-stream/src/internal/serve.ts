/**
 * What the endpoints (the chat's, AG-UI's) are built on: their handlers over a replay buffer of
 * their own, the authorization hook and the Layer's services; and an endpoint alone on a Node
 * HTTP server (127.0.0.1 unless told). There, its runs run in a scope of their own, closed first
 * when the Layer closes — their streams end with the failure of a server that stopped — then the
 * server, whose graceful shutdown then waits only for idle connections.
 */
import type { Agent, ChatModel } from "@agentfx/core"
import { Agent as Agents, Listening } from "@agentfx/core"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type { Scope as Scopes } from "effect"
import type { Stream } from "effect"
import { Clock, Context, Effect, Exit, Layer, Scope, Stream as Streams } from "effect"
import type { HttpServerError } from "effect/http"
import type { HttpServerRequest } from "effect/http"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import * as ChatAuthorization from "../ChatAuthorization.js"
import type { ChatDriver } from "../ChatDriver.js"
import { ReplayDropped } from "../ChatApi.js"
import * as Refusals from "./refusals.js"
import * as Replay from "./replay.js"

/** What an endpoint's handlers run with: its agent, hook and replay buffer, what drives its runs, and the scope they run in. */
export interface Endpoint {
  readonly agent: Agent.Any
  readonly authorize: ChatAuthorization.Authorize
  readonly replay: Replay.Replay
  readonly driver: ChatDriver
  readonly scope: Scopes.Scope
}

/** What an endpoint needs of its Layer: the agent's requirements and a `ChatModel` when it drives its runs itself; nothing with a driver. */
export type Needs<D, R> = [D] extends [ChatDriver] ? never : R | ChatModel.ChatModel

/** The endpoint's own process as the driver: the runs with the services of `context`. */
const inProcess = (context: Context.Context<any>): ChatDriver => ({
  stream: (agent, options) => Streams.provideContext(Agents.stream(agent, options), context),
  resume: (agent, pause, decision, { decidedBy }) => Streams.provideContext(Agents.streamResume(agent, pause.checkpoint, decision, { decidedBy }), context)
})

/**
 * The handlers `make` builds over an endpoint: a replay buffer of its own (held to `bounds`),
 * `options.authorize` (default `ChatAuthorization.loopback()`), `options.driver` (default: this
 * process, with the Layer's services), and its runs in `runs` when given, else in the Layer's scope.
 */
export const handlers = <A, R, D extends ChatDriver | undefined>(
  options: { readonly agent: Agent.Agent<any, R, any>; readonly authorize?: ChatAuthorization.Authorize | undefined; readonly driver?: D },
  bounds: Replay.Bounds,
  runs: Scopes.Scope | undefined,
  make: (endpoint: Endpoint) => Layer.Layer<A>
): Layer.Layer<A, never, Needs<D, R>> =>
  Layer.unwrap(Effect.gen(function*() {
    return make({
      agent: options.agent,
      authorize: options.authorize ?? ChatAuthorization.loopback(),
      replay: Replay.make(bounds),
      driver: options.driver ?? inProcess(yield* Effect.context<any>()),
      scope: runs ?? (yield* Effect.scope)
    })
  })) as Layer.Layer<A, never, Needs<D, R>>

export interface Address {
  /** Default 0: a free port (read it from the `HttpServer`'s address). */
  readonly port?: number
  /** Default `"127.0.0.1"`: this machine only. */
  readonly host?: string
}

/** What an endpoint served alone is called in its log line and its `PortInUse` (`"Chat endpoint"`, `"the chat endpoint"`), and where it answers. */
export interface Named {
  readonly name: string
  readonly server: string
  readonly path: string
}

/**
 * Serves the routes `routes` makes, given the scope its runs run in; logs `<name> at <URL>`
 * (level Info) once it listens, and fails with `PortInUse` when its port is taken.
 */
export const serve = <R>(
  routes: (runs: Scope.Scope) => Layer.Layer<never, never, any>,
  address: Address,
  named: Named
): Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError | Listening.PortInUse, R> =>
  Layer.unwrap(Effect.gen(function*() {
    // the runs stop first: the server's graceful shutdown waits for the event streams, which end with their runs
    const runs = yield* Scope.fork(yield* Effect.scope)
    const listen = { port: address.port ?? 0, host: address.host ?? "127.0.0.1" }
    const server = Layer.merge(
      Layer.effect(
        HttpServer.HttpServer,
        // its runs stopped first, the connections left are idle ones: a second is plenty
        Effect.mapError(NodeHttpServer.make(createServer, { ...listen, gracefulShutdownTimeout: "1 second" }), Listening.portTaken({ ...listen, server: named.server }))
      ),
      NodeHttpServer.layerHttpServices
    )
    return Layer.effectDiscard(Effect.addFinalizer(() => Scope.close(runs, Exit.void))).pipe(
      Layer.provideMerge(
        HttpRouter.serve(routes(runs), { disableLogger: true, disableListenLog: true }).pipe(
          Layer.provideMerge(server),
          Layer.tap((context) => Effect.logInfo(`${named.name} at ${Listening.url(listen.host, Context.get(context, HttpServer.HttpServer).address, named.path)}`))
        )
      )
    )
  })) as Layer.Layer<HttpServer.HttpServer, HttpServerError.ServeError | Listening.PortInUse, R> // the router's request types do not reduce over a type parameter

/**
 * A reattach, as both endpoints answer it: the hook's `reattach` check, then the chat's replay
 * buffer — `none` when it keeps nothing for the chat, its events to `replayed`, or `ReplayDropped`
 * (410) naming `what` when it outgrew its bound.
 */
export const reattach = <A>(
  endpoint: Pick<Endpoint, "authorize" | "replay">,
  request: HttpServerRequest.HttpServerRequest,
  chatId: string,
  what: string,
  none: () => A,
  replayed: (events: Stream.Stream<Uint8Array>) => A
) =>
  Effect.gen(function*() {
    yield* Refusals.authorized(endpoint.authorize, request, { action: "reattach", chatId })
    const found = yield* endpoint.replay.reattach(chatId, yield* Clock.currentTimeMillis)
    switch (found._tag) {
      case "None":
        return none()
      case "Dropped":
        return yield* new ReplayDropped({
          chatId,
          message: `The replay of ${what} was dropped: it grew past the replay buffer's bound; its run goes on`
        })
      case "Replay":
        return replayed(found.events)
    }
  })

/**
 * The answer to a second message that the conversation's running run took (`Steered`: the agent
 * steers): that run's message, from the replay buffer — from its start, then live — so that the
 * sender follows the answer that took their message in; `undefined` when this process does not
 * replay it (another process runs it, or the replay outgrew its bound): the message is in the thread.
 */
export const steered = (replay: Replay.Replay, chatId: string, runId: string) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => replay.reattach(chatId, now, runId)).pipe(
    Effect.map((found) => found._tag === "Replay" ? found.events : undefined)
  )
