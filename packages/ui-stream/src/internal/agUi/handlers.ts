/**
 * The handlers of the AG-UI group: a `RunAgentInput` read (a turn, or the answers to a paused
 * run's interrupts), authorized, its run started in the endpoint's scope, and streamed as an
 * AG-UI run; a reattach authorized and served from the replay buffer. A second message while a
 * run works is the agent's `onConversationBusy` (decision 173): one the running run took
 * (`"steer"`) is answered with that run's events, from the replay buffer. A refusal is answered
 * with its status and its sentence as text, or its JSON to a client that asks for JSON.
 */
import type { AgentError } from "@agentfx/core"
import type { Duration } from "effect"
import { Effect, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../../AgUiApi.js"
import { headers } from "../../AgUiEvent.js"
import type { Driven } from "../../ChatDriver.js"
import type * as Page from "../page.js"
import { pauseOf } from "../pause.js"
import { asText, authorized, envelope, refusal } from "../refusals.js"
import * as Runner from "../runner.js"
import * as Serve from "../serve.js"
import * as Thread from "../thread.js"
import * as Answers from "./answers.js"
import { keepingAlive } from "./keepAlive.js"
import * as Request from "./request.js"
import * as State from "./state.js"
import * as AgUiThread from "./thread.js"
import * as Wire from "./wire.js"

/**
 * The handlers, over one agent, its runs driven by `driver` in `scope`; every request
 * passes `authorize`; an open stream is kept alive every `keepAlive`; a thread's pages are held to `pages`.
 */
export const layer = ({ agent, authorize, driver, replay, scope }: Serve.Endpoint, keepAlive: Duration.Input, pages: Page.Bounds) => {
  const respond = (events: Stream.Stream<Uint8Array>) =>
    HttpServerResponse.stream(events.pipe(keepingAlive(keepAlive)), { contentType: "text/event-stream", headers })
  return HttpApiBuilder.group(Api, "agui", (handlers) =>
    handlers
      .handleRaw("run", ({ request }) =>
        asText(
          request,
          Effect.gen(function*() {
            const parsed = yield* Request.parse(request, { depth: agent.limits.depth + envelope, fileBytes: agent.limits.fileBytes })
            const { runId, threadId } = parsed
            const refused = (error: AgentError.ResumeError) => refusal(error, Answers.words, () => Answers.conversationBusy(threadId))
            const start = (events: Stream.Stream<Driven, AgentError.ResumeError>, from: Omit<Wire.Start, "threadId" | "runId">) =>
              Runner.run(replay, scope, { chatId: threadId, wire: Wire.make(agent, { threadId, runId, ...from }), events })
            if (parsed._tag === "Turn") {
              yield* authorized(authorize, request, { action: "start", chatId: threadId })
              const events = yield* start(driver.stream(agent, { input: parsed.input, conversationId: threadId }), { state: State.initial(agent) }).pipe(
                Effect.catchTag("Steered", (steered) =>
                  Effect.map(Serve.steered(replay, threadId, steered.runId), (events) => events ?? Wire.answered(threadId, runId))),
                Effect.mapError(refused)
              )
              return respond(events)
            }
            const decidedBy = yield* authorized(authorize, request, { action: "decide", chatId: threadId, runId: parsed.pausedRunId })
            const resume = yield* Answers.prepare(agent, threadId, parsed.pausedRunId, parsed.entries)
            const events = yield* start(driver.resume(agent, pauseOf(resume.pause), resume.decision, { decidedBy }), {
              state: Object.keys(agent.slots).length === 0 ? undefined : resume.pause.checkpoint.state,
              resumed: { iteration: resume.pause.checkpoint.iteration, decided: resume.decided }
            }).pipe(
              Effect.catch((error) =>
                Effect.flatMap(
                  error._tag === "ConversationBusy"
                    ? Answers.busy(resume, threadId)
                    : Effect.succeed(error._tag === "InvalidEditedArguments" ? Answers.invalidEdits(resume, error) : refused(error)),
                  Effect.fail
                )
              )
            )
            return respond(events)
          })
        ))
      .handle("reattach", ({ params, request }) =>
        asText(
          request,
          Serve.reattach({ authorize, replay }, request, params.threadId, `thread ${params.threadId}'s last run`, () => respond(Stream.empty), respond)
        ))
      .handle("messages", ({ params, query, request }) =>
        asText(
          request,
          Effect.map(
            Thread.readPage({ agent, authorize, replay, request, chatId: params.threadId, query, bounds: pages, noun: "thread", items: AgUiThread.items }),
            ({ page, thread }) => ({
              messages: page.items.map((item) => item.message),
              interrupts: AgUiThread.interrupts(agent, thread),
              ...(page.before === undefined ? {} : { before: page.before })
            })
          )
        ))
  )
}
