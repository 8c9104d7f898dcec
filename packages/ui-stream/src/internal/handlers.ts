/**
 * The handlers of the chat group: a request read (a turn, or answers to a pause), authorized,
 * its run started in the endpoint's scope, and its message streamed; a reattach authorized and
 * served from the replay buffer. A refusal is answered with its status and its sentence as
 * text — what `useChat` shows — or its JSON to a client that asks for JSON.
 */
import type { Agent, AgentError, AgentEvent } from "@agentfx/core"
import { Agent as Agents } from "@agentfx/core"
import type { Context, Scope, Stream } from "effect"
import { Clock, Effect, SchemaAST, Stream as Streams } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import {
  AlreadyDecided,
  Api,
  ConversationBusy,
  DecisionRefused,
  InvalidRequest,
  ReplayDropped,
  RunNotFound,
  Unavailable
} from "../ChatApi.js"
import type { Access, Authorize } from "../ChatAuthorization.js"
import { Forbidden, Unauthorized } from "../ChatAuthorization.js"
import * as UiChunk from "../UiChunk.js"
import * as Answers from "./answers.js"
import type * as Replay from "./replay.js"
import * as Request from "./request.js"
import * as Runner from "./runner.js"

/** How deeply a request may nest beyond the arguments the agent accepts: a message, its part, its input. */
const envelope = 8

/** A run's or resume's failure before its first event, as the request's refusal. */
const refusal = (chatId: string, error: AgentError.ResumeError) => {
  switch (error._tag) {
    case "RunAlreadyResumed":
      return Answers.alreadyDecided(error)
    case "RunNotFound":
      return new RunNotFound({ runId: error.runId, message: error.message })
    case "ConversationBusy":
      return Answers.conversationBusy(chatId)
    case "InvalidRunInput":
      return new InvalidRequest({ message: error.message })
    case "UnknownDecision":
    case "IncompleteDecisions":
    case "InvalidEditedArguments":
    case "DecisionMismatch":
    case "InvalidCheckpoint":
    case "ConversationDiverged":
      return new DecisionRefused({ error: error._tag, message: error.message })
    default:
      return new Unavailable({ message: error.message })
  }
}

/** The hook's answer: who asks, or its refusal as this endpoint's (a hook may fail with the inbox's errors of the same tags). */
const authorized = (authorize: Authorize, request: HttpServerRequest.HttpServerRequest, access: Access) =>
  Effect.mapError(
    authorize(request, access),
    (error) => error._tag === "Unauthorized" ? new Unauthorized({ message: error.message }) : new Forbidden({ message: error.message })
  )

/** Every refusal of the endpoint, by the class that gives its status. */
const refusals = [InvalidRequest, Unauthorized, Forbidden, RunNotFound, AlreadyDecided, ConversationBusy, DecisionRefused, ReplayDropped, Unavailable]

/** Whether the client asks for JSON: `application/json` among its `Accept` media ranges (not with q=0). */
export const acceptsJson = (accept: string | undefined): boolean =>
  accept !== undefined && accept.split(",").some((range) => {
    const [type, ...parameters] = range.split(";").map((part) => part.trim().toLowerCase())
    return type === "application/json" && !parameters.some((parameter) => /^q=0(\.0*)?$/.test(parameter))
  })

/**
 * A refusal answered as text: its status, its sentence as the body (`DefaultChatTransport`
 * throws the body's text as the chat's error, which `useChat` shows). A client that asks for
 * JSON gets the refusal as declared (`{ _tag, message, … }`), encoded by the API.
 */
const asText = <A, E extends { readonly message: string }, R>(request: HttpServerRequest.HttpServerRequest, effect: Effect.Effect<A, E, R>) =>
  acceptsJson(request.headers["accept"]) ? effect : Effect.catch(effect, (error) => {
    const declared = refusals.find((refused) => error instanceof refused)
    if (declared === undefined) return Effect.fail(error)
    const status = SchemaAST.resolve(declared.ast)?.["httpApiStatus"]
    return Effect.succeed(HttpServerResponse.text(error.message, { status: typeof status === "number" ? status : 500, contentType: "text/plain; charset=utf-8" }))
  })

const respond = (events: Stream.Stream<Uint8Array>) =>
  HttpServerResponse.stream(events, { contentType: "text/event-stream", headers: UiChunk.headers })

/** The handlers, over one agent, running in `scope` with the services of `context`; every request passes `authorize`. */
export const layer = (agent: Agent.Any, authorize: Authorize, replay: Replay.Replay, context: Context.Context<any>, scope: Scope.Scope) =>
  HttpApiBuilder.group(Api, "chat", (handlers) =>
    handlers
      .handleRaw("send", ({ request }) =>
        asText(
          request,
          Effect.gen(function*() {
            const parsed = yield* Request.parse(request, { depth: agent.limits.depth + envelope, fileBytes: agent.limits.fileBytes })
            const { chatId } = parsed
            const start = <E extends AgentError.ResumeError>(events: Stream.Stream<AgentEvent.AgentEvent, E, any>, prelude: ReadonlyArray<UiChunk.UiChunk>) =>
              Runner.run(replay, scope, { chatId, prelude, events: Streams.provideContext(events, context) })
            if (parsed._tag === "Turn") {
              yield* authorized(authorize, request, { action: "start", chatId })
              const events = yield* start(Agents.stream(agent, { input: parsed.input, conversationId: chatId }), []).pipe(
                Effect.mapError((error) => refusal(chatId, error))
              )
              return respond(events)
            }
            const decidedBy = yield* authorized(authorize, request, { action: "decide", chatId, runId: parsed.runId })
            const resume = yield* Answers.prepare(agent, chatId, parsed.runId, parsed.answers)
            const events = yield* start(Agents.streamResume(agent, resume.checkpoint, resume.decision, { decidedBy }), resume.prelude).pipe(
              Effect.catch((error) => Effect.flatMap(
                error._tag === "ConversationBusy" ? Answers.busy(resume, chatId) : Effect.succeed(refusal(chatId, error)),
                Effect.fail
              ))
            )
            return respond(events)
          })
        ))
      .handle("reattach", ({ params, request }) =>
        asText(
          request,
          Effect.gen(function*() {
            yield* authorized(authorize, request, { action: "reattach", chatId: params.chatId })
            const found = yield* replay.reattach(params.chatId, yield* Clock.currentTimeMillis)
            switch (found._tag) {
              case "None":
                return HttpServerResponse.empty({ status: 204 })
              case "Dropped":
                return yield* new ReplayDropped({
                  chatId: params.chatId,
                  message: `The replay of chat ${params.chatId}'s message was dropped: it grew past the replay buffer's bound; its run goes on`
                })
              case "Replay":
                return respond(found.events)
            }
          })
        ))
  )
