/**
 * The AG-UI endpoint's HTTP API, as an `HttpApi` of `effect/http-api`: the run request
 * `@ag-ui/client`'s `HttpAgent` posts (AG-UI 1.0's `RunAgentInput`), the reattach, and the
 * typed refusals, each with its status — the chat endpoint's (`ChatApi`), as both serve the same
 * runs. A refusal's body is its `message`, a sentence, as `text/plain` — `HttpAgent` rejects its
 * run with `HTTP <status>: <sentence>` — or, to a client that asks for `application/json`
 * (`Accept`), the JSON `{ _tag, message, … }`.
 *
 * | endpoint | what |
 * | --- | --- |
 * | `POST /api/agui` | a user message starts a run; `resume` answers a paused run's interrupts — answered with the run's AG-UI events |
 * | `GET /api/agui/:threadId/stream` | reattach: the thread's last run from its start, then live until it ends (no events when there is none) |
 * | `GET /api/agui/:threadId/messages` | the thread's messages as AG-UI's (`AgUiMessage`), with its pending interrupts: the newest page, or the page `?before=` a cursor; `?limit=` (default 50, at most 200) |
 *
 * @since 0.2.0
 */
import { Json } from "@agentfx/core"
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Interrupt } from "./AgUiEvent.js"
import { Message } from "./AgUiMessage.js"
import { AlreadyDecided, ConversationBusy, DecisionRefused, InvalidRequest, PageQuery, ReplayDropped, RunNotFound, SteerRefused, Unavailable } from "./ChatApi.js"
import { Forbidden, Unauthorized } from "./ChatAuthorization.js"

/**
 * An answer to an interrupt, in `RunAgentInput.resume`: the interrupt's id, and `resolved` with
 * an `Answer` as its `payload`, or `cancelled` (the call is rejected, without a reason).
 *
 * @example
 * ```ts
 * import { AgUiApi } from "@agentfx/ui-stream"
 *
 * const approved: typeof AgUiApi.ResumeEntry.Type = { interruptId: "run-1:3:t1", status: "resolved", payload: { type: "approve" } }
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const ResumeEntry = Schema.Struct({
  interruptId: Schema.String,
  status: Schema.Literals(["resolved", "cancelled"]),
  payload: Schema.optionalKey(Schema.Unknown),
  metadata: Schema.optionalKey(Schema.Unknown)
}).annotate({ identifier: "ResumeEntry" })

/**
 * What a person answers to an interrupt (a resolved entry's `payload`): `approve` the call — with
 * `args` to run it with edited arguments (held to the tool's parameters and the agent's gate) —,
 * `reject` it (`reason`: what the model is told, `rejected: <reason>`), or `reply` in its place
 * (`value`: the call's result, as the model is shown it). A call that failed for its environment
 * (`tool_failure`) is approved (tried again) or rejected (the model is told it failed), every
 * failed call of the pause alike.
 *
 * @example
 * ```ts
 * import { AgUiApi } from "@agentfx/ui-stream"
 *
 * const answers: ReadonlyArray<AgUiApi.Answer> = [
 *   { type: "approve" },
 *   { type: "approve", args: { to: "Ada", amount: 200 } },
 *   { type: "reject", reason: "not to Mallory" },
 *   { type: "reply", value: "sent already, by hand" }
 * ]
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const Answer = Schema.Union([
  Schema.Struct({ type: Schema.Literal("approve"), args: Schema.optionalKey(Json.JsonValue) }),
  Schema.Struct({ type: Schema.Literal("reject"), reason: Schema.optionalKey(Schema.String) }),
  Schema.Struct({ type: Schema.Literal("reply"), value: Json.JsonValue })
]).annotate({ identifier: "Answer" })

/**
 * @since 0.2.0
 * @category models
 */
export type Answer = typeof Answer.Type

/**
 * What the endpoint reads of AG-UI's `RunAgentInput`: the thread (the run's conversation id),
 * the request's run id (echoed in `RUN_STARTED` and `RUN_FINISHED`), and either `resume` — the
 * answers to a paused run's interrupts — or `messages`, of which only the last is read, a user
 * message (the thread's history is in the server's `ChatMemory`). `state`, `tools`, `context`
 * and `forwardedProps` are not read: the agent's state is its slots, its tools are its own.
 *
 * @example
 * ```ts
 * import { AgUiApi } from "@agentfx/ui-stream"
 *
 * const input: typeof AgUiApi.RunAgentInput.Encoded = {
 *   threadId: "thread-1",
 *   runId: "run-a",
 *   messages: [{ id: "m1", role: "user", content: "Send 250 to Ada" }],
 *   tools: [],
 *   context: [],
 *   state: {}
 * }
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const RunAgentInput = Schema.Struct({
  threadId: Schema.String.check(Schema.isNonEmpty()),
  runId: Schema.String.check(Schema.isNonEmpty()),
  parentRunId: Schema.optionalKey(Schema.String),
  protocolVersion: Schema.optionalKey(Schema.String),
  messages: Schema.Array(Schema.Unknown),
  state: Schema.optionalKey(Schema.Unknown),
  tools: Schema.optionalKey(Schema.Array(Schema.Unknown)),
  context: Schema.optionalKey(Schema.Array(Schema.Unknown)),
  forwardedProps: Schema.optionalKey(Schema.Unknown),
  resume: Schema.optionalKey(Schema.Array(ResumeEntry))
}).annotate({ identifier: "RunAgentInput" })

const stream = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/event-stream" }))

/**
 * A page of a thread's messages (`GET /api/agui/:threadId/messages`), for `HttpAgent`'s `messages`:
 * `messages` oldest first — the newest of the thread's, or those before the cursor asked with —;
 * `interrupts`, the thread's pending interrupts when its last run waits for a person (on every
 * page: they are the thread's, not a message's), as its `RUN_FINISHED` gave them — give them to
 * the agent's `pendingInterrupts`, and answer them with `resume` as live; and `before`, the cursor
 * of the page before (older messages), absent on the thread's first page. A thread without
 * messages (not begun, or unknown: the same to its memory) is a page of none.
 *
 * @example
 * ```ts
 * import { AgUiApi } from "@agentfx/ui-stream"
 *
 * const page: typeof AgUiApi.MessagesPage.Type = {
 *   messages: [{ id: "msg-0", role: "user", content: "Send 250 to Ada" }],
 *   interrupts: []
 * }
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const MessagesPage = Schema.Struct({
  messages: Schema.Array(Message),
  interrupts: Schema.Array(Interrupt),
  before: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "MessagesPage" })

/**
 * The endpoint's requests. Each passes the authorization hook (`AgUi.Options`'
 * `authorize`) once it has been read, before anything is looked up or run: `Unauthorized`
 * (401) and `Forbidden` (403) are its refusals.
 *
 * @example
 * ```ts
 * import { AgUiApi } from "@agentfx/ui-stream"
 *
 * const endpoints = Object.keys(AgUiApi.AgUiGroup.endpoints) // ["run", "reattach", "messages"]
 * ```
 *
 * @since 0.2.0
 * @category groups
 */
export class AgUiGroup extends HttpApiGroup.make("agui").add(
  HttpApiEndpoint.post("run", "/api/agui", {
    payload: RunAgentInput,
    success: stream,
    error: [InvalidRequest, Unauthorized, Forbidden, RunNotFound, AlreadyDecided, ConversationBusy, SteerRefused, DecisionRefused, Unavailable]
  }),
  HttpApiEndpoint.get("reattach", "/api/agui/:threadId/stream", {
    params: { threadId: Schema.String },
    success: stream,
    error: [Unauthorized, Forbidden, ReplayDropped, Unavailable]
  }),
  HttpApiEndpoint.get("messages", "/api/agui/:threadId/messages", {
    params: { threadId: Schema.String },
    query: PageQuery.fields,
    success: MessagesPage,
    error: [InvalidRequest, Unauthorized, Forbidden, Unavailable]
  })
) {}

/**
 * The whole API. Serve it with `AgUi.layer`'s handlers, or add it to a router of your own
 * (`HttpApiBuilder.layer(AgUiApi.Api)`; `AgUi.routes` does both).
 *
 * @example
 * ```ts
 * import { OpenApi } from "effect/http-api"
 * import { AgUiApi } from "@agentfx/ui-stream"
 *
 * const spec = OpenApi.fromApi(AgUiApi.Api)
 * ```
 *
 * @since 0.2.0
 * @category api
 */
export class Api extends HttpApi.make("agentfx-ag-ui").add(AgUiGroup) {}
