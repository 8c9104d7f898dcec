/**
 * The handlers of the chat group: a request read (a turn, or answers to a pause), its run
 * started in the endpoint's scope, and its message streamed; a reattach served from the
 * replay buffer.
 */
import type { Agent, AgentError, AgentEvent } from "@agentfx/core"
import { Agent as Agents } from "@agentfx/core"
import type { Context, Scope, Stream } from "effect"
import { Clock, Effect, Stream as Streams } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api, ConversationBusy, DecisionRefused, InvalidRequest, ReplayDropped, RunNotFound, Unavailable } from "../ChatApi.js"
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
      return new ConversationBusy({ chatId, message: error.message })
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

const respond = (events: Stream.Stream<Uint8Array>) =>
  HttpServerResponse.stream(events, { contentType: "text/event-stream", headers: UiChunk.headers })

/** The handlers, over one agent, running in `scope` with the services of `context`. */
export const layer = (agent: Agent.Any, replay: Replay.Replay, context: Context.Context<any>, scope: Scope.Scope) =>
  HttpApiBuilder.group(Api, "chat", (handlers) =>
    handlers
      .handleRaw("send", ({ request }) =>
        Effect.gen(function*() {
          const parsed = yield* Request.parse(request, agent.limits.depth + envelope)
          const { chatId } = parsed
          const start = <E extends AgentError.ResumeError>(events: Stream.Stream<AgentEvent.AgentEvent, E, any>, prelude: ReadonlyArray<UiChunk.UiChunk>) =>
            Runner.run(replay, scope, { chatId, prelude, events: Streams.provideContext(events, context) })
          if (parsed._tag === "Turn") {
            const events = yield* start(Agents.stream(agent, { input: parsed.input, conversationId: chatId }), []).pipe(
              Effect.mapError((error) => refusal(chatId, error))
            )
            return respond(events)
          }
          const resume = yield* Answers.prepare(agent, chatId, parsed.answers)
          const events = yield* start(Agents.streamResume(agent, resume.checkpoint, resume.decision), resume.prelude).pipe(
            Effect.catch((error) => Effect.flatMap(
              error._tag === "ConversationBusy" ? Answers.busy(resume, chatId, error) : Effect.succeed(refusal(chatId, error)),
              Effect.fail
            ))
          )
          return respond(events)
        }))
      .handle("reattach", ({ params }) =>
        Effect.gen(function*() {
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
        }))
  )
