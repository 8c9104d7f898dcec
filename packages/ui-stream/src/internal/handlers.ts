/**
 * The handlers of the chat group: a request read (a turn, or answers to a pause), authorized,
 * its run started in the endpoint's scope, and its message streamed; a reattach authorized and
 * served from the replay buffer. A second message while a run works is the agent's
 * `onConversationBusy` (decision 173): one the running run took (`"steer"`) is answered with that
 * run's message, from the replay buffer. A refusal is answered with its status and its sentence
 * as text — what `useChat` shows — or its JSON to a client that asks for JSON.
 */
import type { AgentError } from "@agentfx/core"
import { Effect, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../ChatApi.js"
import type { Driven } from "../ChatDriver.js"
import * as UiChunk from "../UiChunk.js"
import * as Answers from "./answers.js"
import * as ChatWire from "./chatWire.js"
import { asText, authorized, envelope, refusal } from "./refusals.js"
import * as Request from "./request.js"
import type * as Page from "./page.js"
import { pauseOf } from "./pause.js"
import * as Runner from "./runner.js"
import * as Serve from "./serve.js"
import * as Thread from "./thread.js"
import * as ThreadUi from "./threadUi.js"

/** The answer to a message a running run took that this process does not replay: a message that shows nothing (the run's message answers it). */
const answered = Stream.make(UiChunk.toEvent({ type: "finish", finishReason: "stop" }), UiChunk.done)

const respond = (events: Stream.Stream<Uint8Array>) =>
  HttpServerResponse.stream(events, { contentType: "text/event-stream", headers: UiChunk.headers })

/** The handlers, over one agent, its runs driven by `driver` in `scope`; every request passes `authorize`; a thread's pages are held to `pages`. */
export const layer = ({ agent, authorize, driver, replay, scope }: Serve.Endpoint, pages: Page.Bounds) =>
  HttpApiBuilder.group(Api, "chat", (handlers) =>
    handlers
      .handleRaw("send", ({ request }) =>
        asText(
          request,
          Effect.gen(function*() {
            const parsed = yield* Request.parse(request, { depth: agent.limits.depth + envelope, fileBytes: agent.limits.fileBytes })
            const { chatId } = parsed
            const refused = (error: AgentError.ResumeError) => refusal(error, Answers.words, () => Answers.conversationBusy(chatId))
            const start = (events: Stream.Stream<Driven, AgentError.ResumeError>, prelude: ReadonlyArray<UiChunk.UiChunk>) =>
              Runner.run(replay, scope, { chatId, wire: ChatWire.make(prelude), events })
            if (parsed._tag === "Turn") {
              yield* authorized(authorize, request, { action: "start", chatId })
              const events = yield* start(driver.stream(agent, { input: parsed.input, conversationId: chatId }), []).pipe(
                Effect.catchTag("Steered", (steered) => Effect.map(Serve.steered(replay, chatId, steered.runId), (events) => events ?? answered)),
                Effect.mapError(refused)
              )
              return respond(events)
            }
            const decidedBy = yield* authorized(authorize, request, { action: "decide", chatId, runId: parsed.runId })
            const resume = yield* Answers.prepare(agent, chatId, parsed.runId, parsed.answers)
            const events = yield* start(driver.resume(agent, pauseOf(resume.pause), resume.decision, { decidedBy }), resume.prelude).pipe(
              Effect.catch((error) => Effect.flatMap(error._tag === "ConversationBusy" ? Answers.busy(resume, chatId) : Effect.succeed(refused(error)), Effect.fail))
            )
            return respond(events)
          })
        ))
      .handle("reattach", ({ params, request }) =>
        asText(
          request,
          Serve.reattach({ authorize, replay }, request, params.chatId, `chat ${params.chatId}'s message`, () => HttpServerResponse.empty({ status: 204 }), respond)
        ))
      .handle("messages", ({ params, query, request }) =>
        asText(
          request,
          Effect.map(
            Thread.readPage({ agent, authorize, replay, request, chatId: params.chatId, query, bounds: pages, noun: "chat", items: ThreadUi.items }),
            ({ page }) => ({ messages: page.items.map((item) => item.message), ...(page.before === undefined ? {} : { before: page.before }) })
          )
        ))
  )
