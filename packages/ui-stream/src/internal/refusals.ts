/**
 * What the endpoints refuse with, and how: a run's or resume's failure before its first event
 * as the request's refusal, the authorization hook's refusal as the endpoint's own, and a
 * refusal answered with its status and its sentence as text — what `useChat` shows, and what
 * `@ag-ui/client`'s `HttpAgent` puts in its error — or its JSON to a client that asks for JSON.
 */
import type { AgentError } from "@agentfx/core"
import { Effect, SchemaAST } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpServerResponse } from "effect/http"
import {
  AlreadyDecided,
  ConversationBusy,
  DecisionRefused,
  InvalidRequest,
  ReplayDropped,
  RunNotFound,
  SteerRefused,
  Unavailable
} from "../ChatApi.js"
import type { Access, Authorize } from "../ChatAuthorization.js"
import { Forbidden, Unauthorized } from "../ChatAuthorization.js"
import * as Pause from "./pause.js"

/** How deeply a request may nest beyond the arguments the agent accepts: a message, its part, its input. */
export const envelope = 8

/** A run's or resume's failure before its first event, as the request's refusal (`busy`: a conversation held; `SteerRefused`: a steered message its running run did not take, as it paused). */
export const refusal = (error: AgentError.ResumeError, words: Pause.Words, busy: () => ConversationBusy) => {
  switch (error._tag) {
    case "RunAlreadyResumed":
      return Pause.alreadyDecided(error, words)
    case "RunNotFound":
      return new RunNotFound({ runId: error.runId, message: error.message })
    case "ConversationBusy":
      return busy()
    case "SteerRefused": {
      const conversation = words.conversation(error.conversationId)
      return new SteerRefused({
        chatId: error.conversationId,
        runId: error.runId,
        message: `${conversation.charAt(0).toUpperCase()}${conversation.slice(1)} waits for a person: its running run ${error.runId} paused before it took your message, and nothing was written; answer its ${words.pause}, then send the message again`
      })
    }
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
export const authorized = (authorize: Authorize, request: HttpServerRequest.HttpServerRequest, access: Access) =>
  Effect.mapError(
    authorize(request, access),
    (error) => error._tag === "Unauthorized" ? new Unauthorized({ message: error.message }) : new Forbidden({ message: error.message })
  )

/** Every refusal of the endpoints, by the class that gives its status. */
const refusals = [InvalidRequest, Unauthorized, Forbidden, RunNotFound, AlreadyDecided, ConversationBusy, SteerRefused, DecisionRefused, ReplayDropped, Unavailable]

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
export const asText = <A, E extends { readonly message: string }, R>(request: HttpServerRequest.HttpServerRequest, effect: Effect.Effect<A, E, R>) =>
  acceptsJson(request.headers["accept"]) ? effect : Effect.catch(effect, (error) => {
    const declared = refusals.find((refused) => error instanceof refused)
    if (declared === undefined) return Effect.fail(error)
    const status = SchemaAST.resolve(declared.ast)?.["httpApiStatus"]
    return Effect.succeed(HttpServerResponse.text(error.message, { status: typeof status === "number" ? status : 500, contentType: "text/plain; charset=utf-8" }))
  })
