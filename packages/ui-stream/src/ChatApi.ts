/**
 * The chat endpoint's HTTP API, as an `HttpApi` of `effect/http-api`: the two requests
 * `useChat` makes with its `DefaultChatTransport` (at its default address, `/api/chat`), and
 * the typed refusals, each with its status. A refusal's body is its `message`, a sentence, as
 * `text/plain` — what `useChat` shows as its `error` (its transport throws the body's text) —
 * or, to a client that asks for `application/json` (`Accept`), the JSON `{ _tag, message, … }`
 * declared here. The AG-UI endpoint (`AgUiApi`) refuses with the same errors: there, a
 * `chatId` is the AG-UI thread's id.
 *
 * | endpoint | what |
 * | --- | --- |
 * | `POST /api/chat` | a user message starts a run; approval responses resume the paused run — answered with the run's assistant message as a UI message stream |
 * | `GET /api/chat/:chatId/stream` | reattach: the chat's last assistant message from its start, then live until it ends (204 when there is none) |
 * | `GET /api/chat/:chatId/messages` | the chat's messages as `useChat` holds them (`UiMessage`), its pending approvals included: the newest page, or the page `?before=` a cursor; `?limit=` (default 50, at most 200) |
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Forbidden, Unauthorized } from "./ChatAuthorization.js"
import { UiMessage } from "./UiMessage.js"

/**
 * What the endpoint reads of `useChat`'s request body: the chat's id (the run's conversation
 * id) and its messages, of which only the last is read (the conversation so far is in the
 * server's `ChatMemory`); other fields (`useChat`'s `body` option) are ignored. The last
 * message is a user message (its text parts are the input) or the assistant message whose tool
 * parts hold approval responses (`state: "approval-responded"`).
 *
 * @example
 * ```ts
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * const body: typeof ChatApi.ChatRequest.Encoded = {
 *   id: "chat-1",
 *   messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "Send 250 to Ada" }] }],
 *   trigger: "submit-message"
 * }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatRequest = Schema.Struct({
  id: Schema.Trimmed.check(Schema.isNonEmpty()),
  messages: Schema.NonEmptyArray(Schema.Unknown),
  trigger: Schema.optional(Schema.Literals(["submit-message", "regenerate-message"])),
  messageId: Schema.optional(Schema.String)
}).annotate({ identifier: "ChatRequest" })

/**
 * The request is not one the endpoint can act on: not JSON, not sent as `application/json`,
 * too large, not of `ChatRequest`'s shape, or its last message neither a user's text nor
 * approval responses (`message` says which, and where). Nothing ran. 400.
 *
 * @example
 * ```ts
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * new ChatApi.InvalidRequest({ message: "The last message (messages[0]) has no text" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>("@agentfx/ui-stream/InvalidRequest")(
  "InvalidRequest",
  { message: Schema.String },
  { httpApiStatus: 400 }
) {}

/**
 * The run an approval names is not in the run store, or is not a run of this chat. 404.
 *
 * @example
 * ```ts
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * new ChatApi.RunNotFound({ runId: "r1", message: "No record of run r1 in the run store" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunNotFound extends Schema.TaggedError<RunNotFound>("@agentfx/ui-stream/RunNotFound")(
  "RunNotFound",
  { runId: Schema.String, message: Schema.String },
  { httpApiStatus: 404 }
) {}

/**
 * The pause the approvals answer was already decided (another tab, a retry, another
 * process): `status` is where the run is now (`paused` when it paused again since), and
 * `decidedBy` who decided, when the store knows. Nothing ran for these approvals. 409.
 *
 * @example
 * ```ts
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * new ChatApi.AlreadyDecided({ runId: "r1", status: "completed", message: "Run r1 was already resumed: it is completed now" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class AlreadyDecided extends Schema.TaggedError<AlreadyDecided>("@agentfx/ui-stream/AlreadyDecided")(
  "AlreadyDecided",
  { runId: Schema.String, status: Schema.String, decidedBy: Schema.optional(Schema.String), message: Schema.String },
  { httpApiStatus: 409 }
) {}

/**
 * A run or resume of this chat's conversation is in progress (one at a time per
 * conversation): nothing ran; send again once it ended. 409.
 *
 * @example
 * ```ts
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * new ChatApi.ConversationBusy({ chatId: "chat-1", message: "Conversation \"chat-1\" is busy" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ConversationBusy extends Schema.TaggedError<ConversationBusy>("@agentfx/ui-stream/ConversationBusy")(
  "ConversationBusy",
  { chatId: Schema.String, message: Schema.String },
  { httpApiStatus: 409 }
) {}

/**
 * A second message, sent while the chat's message was running to an agent that steers
 * (`onConversationBusy: "steer"`), that its running run did not take: run `runId` paused for a
 * person first. Nothing was written — the message is not in the conversation, and the pause
 * stands: answer its approval requests, then send the message again. 409.
 *
 * @example
 * ```ts
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * new ChatApi.SteerRefused({ chatId: "chat-1", runId: "run-1", message: "Chat \"chat-1\" waits for approval: …" })
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class SteerRefused extends Schema.TaggedError<SteerRefused>("@agentfx/ui-stream/SteerRefused")(
  "SteerRefused",
  { chatId: Schema.String, runId: Schema.String, message: Schema.String },
  { httpApiStatus: 409 }
) {}

/**
 * The resume refused the approvals (`error` names the core error: `IncompleteDecisions` when a
 * pending call has no answer, `UnknownDecision`, `DecisionMismatch`, `InvalidCheckpoint`, …);
 * the run stays paused, its approvals can be sent again. 422.
 *
 * @example
 * ```ts
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * new ChatApi.DecisionRefused({ error: "IncompleteDecisions", message: "No decision for pending 1 call: t2" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class DecisionRefused extends Schema.TaggedError<DecisionRefused>("@agentfx/ui-stream/DecisionRefused")(
  "DecisionRefused",
  { error: Schema.String, message: Schema.String },
  { httpApiStatus: 422 }
) {}

/**
 * The chat's message is still streaming, but its replay was dropped: it grew past the replay
 * buffer's bound (`Chat.replayMaxBytes`). The run goes on; its answer is in the conversation's
 * memory. 410.
 *
 * @example
 * ```ts
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * new ChatApi.ReplayDropped({ chatId: "chat-1", message: "The replay of chat chat-1 was dropped" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ReplayDropped extends Schema.TaggedError<ReplayDropped>("@agentfx/ui-stream/ReplayDropped")(
  "ReplayDropped",
  { chatId: Schema.String, message: Schema.String },
  { httpApiStatus: 410 }
) {}

/**
 * The run store or the chat memory failed. Nothing ran. 503.
 *
 * @example
 * ```ts
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * new ChatApi.Unavailable({ message: "database is locked" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Unavailable extends Schema.TaggedError<Unavailable>("@agentfx/ui-stream/Unavailable")(
  "Unavailable",
  { message: Schema.String },
  { httpApiStatus: 503 }
) {}

const stream = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/event-stream" }))

/**
 * A page of a chat's messages (`GET /api/chat/:chatId/messages`), for `useChat`'s `messages`:
 * `messages` oldest first — the newest of the chat's, or those before the cursor asked with — and
 * `before`, the cursor of the page before (older messages), absent on the chat's first page. A
 * chat that has no messages (one not begun, or unknown: they are the same to its memory) is a page
 * of none.
 *
 * @example
 * ```ts
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * const page: typeof ChatApi.MessagesPage.Type = {
 *   messages: [{ id: "msg-0", role: "user", parts: [{ type: "text", text: "Send 250 to Ada" }] }]
 * }
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const MessagesPage = Schema.Struct({
  messages: Schema.Array(UiMessage),
  before: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "MessagesPage" })

/**
 * The query of a page read: `before`, the cursor of the page asked (a page's own `before`); `limit`,
 * how many messages (default `Chat.pageLimit`, at most `Chat.pageMaxLimit`). Checked by the
 * endpoint, which refuses a bad one with `InvalidRequest` (400), saying what is wrong.
 *
 * @example
 * ```ts
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * const query: typeof ChatApi.PageQuery.Type = { limit: "20" }
 * ```
 *
 * @since 0.2.0
 * @category schemas
 */
export const PageQuery = Schema.Struct({
  before: Schema.optional(Schema.String),
  limit: Schema.optional(Schema.String)
}).annotate({ identifier: "PageQuery" })

/**
 * The chat's endpoints. Each request passes the authorization hook (`Chat.Options`'
 * `authorize`) once it has been read, before anything is looked up or run: `Unauthorized`
 * (401) and `Forbidden` (403) are its refusals.
 *
 * @example
 * ```ts
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * const endpoints = Object.keys(ChatApi.ChatGroup.endpoints) // ["send", "reattach", "messages"]
 * ```
 *
 * @since 0.1.0
 * @category groups
 */
export class ChatGroup extends HttpApiGroup.make("chat").add(
  HttpApiEndpoint.post("send", "/api/chat", {
    payload: ChatRequest,
    success: stream,
    error: [InvalidRequest, Unauthorized, Forbidden, RunNotFound, AlreadyDecided, ConversationBusy, SteerRefused, DecisionRefused, Unavailable]
  }),
  HttpApiEndpoint.get("reattach", "/api/chat/:chatId/stream", {
    params: { chatId: Schema.String },
    success: [stream, HttpApiSchema.NoContent],
    error: [Unauthorized, Forbidden, ReplayDropped, Unavailable]
  }),
  HttpApiEndpoint.get("messages", "/api/chat/:chatId/messages", {
    params: { chatId: Schema.String },
    query: PageQuery.fields,
    success: MessagesPage,
    error: [InvalidRequest, Unauthorized, Forbidden, Unavailable]
  })
) {}

/**
 * The whole API. Serve it with `Chat.layer`'s handlers, or add it to a router of your own
 * (`HttpApiBuilder.layer(ChatApi.Api)`; `Chat.routes` does both).
 *
 * @example
 * ```ts
 * import { OpenApi } from "effect/http-api"
 * import { ChatApi } from "@agentfx/ui-stream"
 *
 * const spec = OpenApi.fromApi(ChatApi.Api)
 * ```
 *
 * @since 0.1.0
 * @category api
 */
export class Api extends HttpApi.make("agentfx-chat").add(ChatGroup) {}
