/**
 * The inbox's HTTP API, as an `HttpApi` of `effect/http-api`: what it serves, the JSON it
 * speaks, and its typed errors (each a JSON body `{ _tag, message, … }` with its status).
 * Everything lives under `/inbox`, so that it mounts beside a server's own routes.
 *
 * | endpoint | what |
 * | --- | --- |
 * | `GET /inbox` | the page (`?token=…` sets the token cookie and redirects, once the authorization hook admits the token) |
 * | `GET /inbox/assets/:file` | its scripts, style and icon |
 * | `GET /inbox/assets/json-schema/:file` | the modules of `@cfworker/json-schema`, which its script checks edited arguments with |
 * | `GET /inbox/api/runs` | the paused runs of the inbox's agents, most recently paused first |
 * | `GET /inbox/api/runs/:runId` | one paused run: pending calls with their tools' description and JSON Schema, the conversation |
 * | `POST /inbox/api/runs/:runId/decision?revision=` | a `Decision` (JSON): resumes the run (at that revision, when named), 202 once its claim is won |
 * | `GET /inbox/api/runs/:runId/events?revision=` | the resumed run's events, as Server-Sent Events, until it completes, pauses or fails; with `revision`, a run decided elsewhere on its pause at that revision, through the driver's `watch` |
 *
 * @since 0.1.0
 */
import { Checkpoint, Decision, Json, Message } from "@agentfx/core"
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiError, HttpApiGroup, HttpApiMiddleware, HttpApiSchema } from "effect/http-api"
import { Authorization, Forbidden, Unauthorized } from "./Authorization.js"

/**
 * A pending call as the list shows it.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * const line = (p: typeof InboxApi.PendingSummary.Type) => `${p.toolName}(${JSON.stringify(p.args)})`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PendingSummary = Schema.Struct({ callId: Schema.String, toolName: Schema.String, args: Json.JsonValue })

/**
 * A paused run in the list. `ageMillis`: how long it has been paused, by the server's clock.
 * `revision`: the record's version at this pause; a decision that names it (`?revision=`)
 * applies to this pause only — decided and paused again since, it is `AlreadyDecided`.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * const line = (run: InboxApi.RunSummary) => `${run.agent} · ${run.kind} · ${run.pending.length} call(s)`
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunSummary = Schema.Struct({
  runId: Schema.String,
  agent: Schema.String,
  conversationId: Schema.String,
  ephemeral: Schema.Boolean,
  revision: Schema.Int,
  kind: Checkpoint.Kind,
  pausedAt: Schema.Number,
  ageMillis: Schema.Number,
  pending: Schema.Array(PendingSummary)
}).annotate({ identifier: "RunSummary" })

/**
 * @since 0.1.0
 * @category models
 */
export interface RunSummary extends Schema.Schema.Type<typeof RunSummary> {}

/**
 * A pending call with what a person needs to decide it: the tool's description and the JSON
 * Schema of its parameters (`null` for a sub-agent's tool, which the inbox cannot see: the
 * server still checks edited arguments), the arguments as JSON, `why` it waits for a person
 * (what its gate recorded — `Gate.pause({ why })`; the default gate names the tool's
 * `needsApproval` — or its environment failure), and for an environment pause the failure.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * const checked = (call: InboxApi.PendingCall) => call.parameters !== null // a schema to check edits against
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const PendingCall = Schema.Struct({
  callId: Schema.String,
  toolName: Schema.String,
  description: Schema.NullOr(Schema.String),
  parameters: Schema.NullOr(Schema.Unknown),
  args: Json.JsonValue,
  why: Schema.String,
  error: Schema.optional(Schema.Struct({ reason: Schema.String, message: Schema.String }))
}).annotate({ identifier: "PendingCall" })

/**
 * @since 0.1.0
 * @category models
 */
export interface PendingCall extends Schema.Schema.Type<typeof PendingCall> {}

/**
 * One paused run: `why` it waits (a sentence), its pending calls, the conversation so far,
 * where it is driven (`runner`, when the inbox's driver says: a cluster runner), and the kinds
 * of decision that fit its pause (`ApproveAll`, `RejectAll`, `ByCall` for approval;
 * `Retry`, `Report` for an environment failure; `Continue` after `MaxIterationsReached` or
 * `BudgetExceeded`).
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * const canApprove = (run: InboxApi.RunDetail) => run.accepts.includes("ByCall")
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunDetail = Schema.Struct({
  ...RunSummary.fields,
  why: Schema.String,
  pending: Schema.Array(PendingCall),
  messages: Schema.Array(Message.Message),
  accepts: Schema.Array(Schema.String),
  /** Where the run is driven, when the inbox's driver says (a cluster runner's address). */
  runner: Schema.optional(Schema.String),
  /**
   * Where the decision on this pause streams its events, whoever makes it (`…/events?revision=`),
   * when the inbox can follow a run it did not decide (its driver's `watch`): a page refused
   * because someone else decided follows the run there.
   */
  events: Schema.optional(Schema.String)
}).annotate({ identifier: "RunDetail" })

/**
 * @since 0.1.0
 * @category models
 */
export interface RunDetail extends Schema.Schema.Type<typeof RunDetail> {}

/**
 * The answer to a decision whose resume won the run's claim (202): who decided and when
 * (`Clock` milliseconds), and where its events stream.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * const follow = (accepted: InboxApi.DecisionAccepted) => new EventSource(accepted.events)
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const DecisionAccepted = Schema.Struct({
  runId: Schema.String,
  decidedBy: Schema.String,
  decidedAt: Schema.Number,
  events: Schema.String
}).annotate({ identifier: "DecisionAccepted" })

/**
 * @since 0.1.0
 * @category models
 */
export interface DecisionAccepted extends Schema.Schema.Type<typeof DecisionAccepted> {}

/**
 * The body is not a decision: not JSON, not sent as `application/json`, or not of the
 * `Decision` Schema (`message` says what is wrong). 400.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * new InboxApi.InvalidDecision({ message: "The body is not JSON: Unexpected end of JSON input" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidDecision extends Schema.TaggedError<InvalidDecision>("@agentfx/inbox/InvalidDecision")(
  "InvalidDecision",
  { message: Schema.String },
  { httpApiStatus: 400 }
) {}

/**
 * A query parameter the endpoint refuses: `limit` not an integer from 1 to 500, `revision` not
 * an integer from 0, `token` given twice (`message` names the parameter and what is wrong). 400.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * new InboxApi.InvalidQuery({ message: "The query is not valid: limit: Expected a value between 1 and 500" })
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class InvalidQuery extends Schema.TaggedError<InvalidQuery>("@agentfx/inbox/InvalidQuery")(
  "InvalidQuery",
  { message: Schema.String },
  { httpApiStatus: 400 }
) {}

/**
 * The middleware of the inbox's endpoints that answers a query their Schemas refuse with
 * {@link InvalidQuery}, in the JSON of every other refusal (Effect's own answer is an empty 400).
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * const errors = [...InboxApi.QueryCheck.error] // [InboxApi.InvalidQuery]
 * ```
 *
 * @since 0.2.0
 * @category middleware
 */
export class QueryCheck extends HttpApiMiddleware.Service<QueryCheck>()("@agentfx/inbox/QueryCheck", {
  error: InvalidQuery
}) {}

/**
 * The run store has no record of the run. 404.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * new InboxApi.RunNotFound({ runId: "r1", message: "No record of run r1 in the run store" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class RunNotFound extends Schema.TaggedError<RunNotFound>("@agentfx/inbox/RunNotFound")(
  "RunNotFound",
  { runId: Schema.String, message: Schema.String },
  { httpApiStatus: 404 }
) {}

/**
 * This inbox has not resumed the run, so it has no events of it; or, asked for a run decided
 * elsewhere (`?revision=`), its driver cannot follow one (it has no `watch`), the run was never
 * paused at that revision, or it ended and its record is gone (`message` says which). 404.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * new InboxApi.NoLiveEvents({ runId: "r1", message: "This inbox has not resumed run r1: it has no events of it" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class NoLiveEvents extends Schema.TaggedError<NoLiveEvents>("@agentfx/inbox/NoLiveEvents")(
  "NoLiveEvents",
  { runId: Schema.String, message: Schema.String },
  { httpApiStatus: 404 }
) {}

/**
 * Someone else decided first (`RunAlreadyResumed`), or decided the revision the decision
 * names and the run paused again: `status` is where the run is now, `decidedBy` who decided,
 * `decidedAt` when, when known. Nothing ran for this decision. 409.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * new InboxApi.AlreadyDecided({ runId: "r1", status: "completed", decidedBy: "ada", message: "Run r1 was already decided by ada: it is completed now" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class AlreadyDecided extends Schema.TaggedError<AlreadyDecided>("@agentfx/inbox/AlreadyDecided")(
  "AlreadyDecided",
  {
    runId: Schema.String,
    status: Schema.String,
    decidedBy: Schema.optional(Schema.String),
    decidedAt: Schema.optional(Schema.Number),
    message: Schema.String
  },
  { httpApiStatus: 409 }
) {}

/**
 * Another turn or resume holds the run's conversation. Nothing was consumed: try again later. 409.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * new InboxApi.ConversationBusy({ conversationId: "c1", message: "Conversation \"c1\" is busy" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class ConversationBusy extends Schema.TaggedError<ConversationBusy>("@agentfx/inbox/ConversationBusy")(
  "ConversationBusy",
  { conversationId: Schema.String, message: Schema.String },
  { httpApiStatus: 409 }
) {}

/**
 * The resume refused the decision; the run stays paused and resumable. `error` names the
 * core error: `UnknownDecision`, `IncompleteDecisions` (`callIds`), `InvalidEditedArguments`
 * (`problems`, one per call), `DecisionMismatch`, `InvalidCheckpoint`, `ConversationDiverged`, `InvalidRunInput` (a `raise` the run refuses). 422.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * new InboxApi.DecisionRefused({ error: "IncompleteDecisions", message: "No decision for pending 1 call: t1", callIds: ["t1"] })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class DecisionRefused extends Schema.TaggedError<DecisionRefused>("@agentfx/inbox/DecisionRefused")(
  "DecisionRefused",
  {
    error: Schema.String,
    message: Schema.String,
    callIds: Schema.optional(Schema.Array(Schema.String)),
    problems: Schema.optional(Schema.Array(Schema.Struct({ callId: Schema.String, toolName: Schema.String, message: Schema.String })))
  },
  { httpApiStatus: 422 }
) {}

/**
 * The run belongs to an agent this inbox was not given, so it cannot show or resume it. 422.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * new InboxApi.UnknownAgent({ agent: "billing", message: "Run of agent \"billing\", which this inbox was not given" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownAgent extends Schema.TaggedError<UnknownAgent>("@agentfx/inbox/UnknownAgent")(
  "UnknownAgent",
  { agent: Schema.String, message: Schema.String },
  { httpApiStatus: 422 }
) {}

/**
 * The run store or the chat memory failed, or holds a record that cannot be read. 503.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * new InboxApi.Unavailable({ message: "database is locked" })
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class Unavailable extends Schema.TaggedError<Unavailable>("@agentfx/inbox/Unavailable")(
  "Unavailable",
  { message: Schema.String },
  { httpApiStatus: 503 }
) {}

const runId = { runId: Schema.String }

/** A body of text of the given type: the page, its assets, an event stream. */
const text = (contentType: string) => Schema.String.pipe(HttpApiSchema.asText({ contentType }))

/**
 * The page and its assets: public (they hold no data; the API behind them is authorized). A
 * `?token=` link is checked by the authorization hook: a token it refuses is answered with
 * its refusal (401), and no cookie is set. A malformed query is {@link InvalidQuery}.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * const endpoints = Object.keys(InboxApi.PageGroup.endpoints) // ["page", "asset", "jsonSchema"]
 * ```
 *
 * @since 0.1.0
 * @category groups
 */
export class PageGroup extends HttpApiGroup.make("inboxPage").add(
  HttpApiEndpoint.get("page", "/inbox", {
    query: { token: Schema.optional(Schema.String) },
    success: text("text/html"),
    error: [Unauthorized, Forbidden]
  }),
  HttpApiEndpoint.get("asset", "/inbox/assets/:file", {
    params: { file: Schema.String },
    success: text("text/javascript"),
    error: HttpApiError.NotFound
  }),
  HttpApiEndpoint.get("jsonSchema", "/inbox/assets/json-schema/:file", {
    params: { file: Schema.String },
    success: text("text/javascript"),
    error: HttpApiError.NotFound
  })
).middleware(QueryCheck) {}

/** A pause's revision, in a query: the record's version, an integer from 0. */
const revision = Schema.optional(Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)))

/**
 * The runs: listed, shown, decided, followed. Every endpoint passes the `Authorization` hook;
 * a query its Schema refuses is {@link InvalidQuery}.
 *
 * @example
 * ```ts
 * import { InboxApi } from "@agentfx/inbox"
 *
 * const endpoints = Object.keys(InboxApi.RunsGroup.endpoints) // ["listRuns", "getRun", "decide", "events"]
 * ```
 *
 * @since 0.1.0
 * @category groups
 */
export class RunsGroup extends HttpApiGroup.make("inboxRuns").add(
  HttpApiEndpoint.get("listRuns", "/inbox/api/runs", {
    query: { limit: Schema.optional(Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 500 }))) },
    success: Schema.Array(RunSummary),
    error: Unavailable
  }),
  HttpApiEndpoint.get("getRun", "/inbox/api/runs/:runId", {
    params: runId,
    success: RunDetail,
    error: [RunNotFound, AlreadyDecided, UnknownAgent, Unavailable]
  }),
  HttpApiEndpoint.post("decide", "/inbox/api/runs/:runId/decision", {
    params: runId,
    query: { revision },
    payload: Decision.Decision,
    success: DecisionAccepted.pipe(HttpApiSchema.status(202)),
    error: [InvalidDecision, RunNotFound, AlreadyDecided, ConversationBusy, DecisionRefused, UnknownAgent, Unavailable]
  }),
  HttpApiEndpoint.get("events", "/inbox/api/runs/:runId/events", {
    params: runId,
    query: { revision },
    success: text("text/event-stream"),
    error: [NoLiveEvents, RunNotFound, UnknownAgent, Unavailable]
  })
).middleware(Authorization).middleware(QueryCheck) {}

/**
 * The whole API. Serve it with {@link Inbox.layer}'s handlers, or add it to a router of your
 * own (`HttpApiBuilder.layer(InboxApi.Api)`; `Inbox.routes` does both).
 *
 * @example
 * ```ts
 * import { OpenApi } from "effect/http-api"
 * import { InboxApi } from "@agentfx/inbox"
 *
 * const spec = OpenApi.fromApi(InboxApi.Api)
 * ```
 *
 * @since 0.1.0
 * @category api
 */
export class Api extends HttpApi.make("agentfx-inbox").add(PageGroup).add(RunsGroup) {}
