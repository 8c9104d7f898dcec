/**
 * The handlers of the runs group: list and show paused runs from the run store, decide one
 * (the body decoded with the `Decision` Schema, the run resumed by id in the background once
 * its claim is won), and stream a resumed run's events.
 */
import type { Agent } from "@agentfx/core"
import { AgentError, Decision, RunStore } from "@agentfx/core"
import { ByteSize, Clock, Effect, Option, Schema, Stream } from "effect"
import { HttpIncomingMessage, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Decider } from "../Authorization.js"
import type { RunSummary } from "../InboxApi.js"
import { Api, DecisionAccepted, InvalidDecision, NoLiveEvents, RunNotFound, Unavailable, UnknownAgent } from "../InboxApi.js"
import { LiveEvent } from "../LiveEvent.js"
import type { RunDriver } from "../RunDriver.js"
import type { LiveRuns } from "./live.js"
import { alreadyDecided, refusal } from "./refusals.js"
import * as Views from "./views.js"

const unavailable = (error: { readonly message: string }) => new Unavailable({ message: error.message })

const decodeDecision = Schema.decodeUnknownEffect(Decision.Decision)
const encodeAccepted = Schema.encodeEffect(DecisionAccepted)
const encodeEvent = Schema.encodeEffect(LiveEvent)

/** The largest decision body read: edited arguments of many calls (a call's arguments are at most 1 MiB by default). */
export const maxBodyBytes = 4 * 1024 * 1024

const tooLarge = new InvalidDecision({ message: `The body could not be read: larger than ${maxBodyBytes} bytes, or cut off` })

/**
 * How deeply a body may nest objects and arrays outside its edited arguments and replies (a
 * decision has three levels: the body, `decisions`, a call's decision). Those values are JSON
 * values, checked without recursion and then against the agent's limits (a 422); anywhere
 * else, Effect's decoding and its error messages recurse into a value, and a few thousand
 * levels exhausted the stack (a 500).
 */
export const maxBodyDepth = 16

/**
 * Whether a content type is JSON's: `application/json`, with parameters or not
 * (`application/json; charset=utf-8`); not another type that starts alike (`application/json-seq`).
 */
const isJsonContentType = (contentType: string): boolean => /^application\/json[\t ]*(;|$)/i.test(contentType)

const isRecord = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The body without the edited arguments and replies of a `ByCall`: what the Schema reads by recursion. */
const withoutValues = (body: unknown): unknown => {
  if (!isRecord(body) || body._tag !== "ByCall" || !isRecord(body.decisions)) return body
  const decisions = Object.entries(body.decisions).map(([id, decision]) => {
    if (!isRecord(decision) || (decision._tag !== "Approve" && decision._tag !== "Reply")) return [id, decision]
    const { [decision._tag === "Approve" ? "args" : "value"]: _, ...rest } = decision
    return [id, rest]
  })
  return { ...body, decisions: Object.fromEntries(decisions) }
}

/** Whether `value` nests objects and arrays deeper than `limit`; iterative, so any depth is measured. */
const deeperThan = (value: unknown, limit: number): boolean => {
  const pending: Array<readonly [unknown, number]> = [[value, 0]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next
    if (typeof item !== "object" || item === null) continue
    if (depth === limit) return true
    for (const child of Object.values(item)) pending.push([child, depth + 1])
  }
  return false
}

/** The kinds of decision, as a body of another kind is told them: `"ApproveAll" | "RejectAll" | …`. */
const decisionTags = Decision.Decision.members.map((member) => JSON.stringify(member.fields._tag.schema.literal)).join(" | ")

/**
 * Why the body is not a Decision: a `_tag` that no decision has is named with the ones there
 * are (the Schema's own message names only "Decision"); anything else as the Schema says.
 */
const notADecision = (body: unknown, error: Schema.SchemaError): InvalidDecision =>
  new InvalidDecision({
    message: `The body is not a Decision: ${
      isRecord(body) && error.issue._tag === "AnyOf" && error.issue.issues.length === 0
        ? `Expected ${decisionTags}, got ${JSON.stringify(body._tag)}\n  at ["_tag"]`
        : error.message
    }`
  })

const tooDeep = new InvalidDecision({
  message: `The body nests deeper than ${maxBodyDepth} levels outside edited arguments and replies (a decision has 3)`
})

const sseHeaders = { "cache-control": "no-cache", "x-accel-buffering": "no" }

/** Where the events of the decision on the pause of `record` stream. */
const eventsOf = (record: RunStore.RunRecord) => `/inbox/api/runs/${encodeURIComponent(record.runId)}/events?revision=${record.version}`

/** No driver names where runs are driven: they run in the inbox's own process. */
const here: RunDriver["location"] = () => Effect.succeed(Option.none())

/** The handlers of the runs group, over the given agents (by name) and live runs, with `driver`'s location and watch when given. */
export const layer = (agents: ReadonlyMap<string, Agent.Any>, live: LiveRuns, driver?: RunDriver) =>
  HttpApiBuilder.group(Api, "inboxRuns", (handlers) => {
    const agentOf = (name: string) => {
      const agent = agents.get(name)
      return agent === undefined
        ? Effect.fail(new UnknownAgent({ agent: name, message: `Run of agent "${name}", which this inbox was not given (it has ${[...agents.keys()].join(", ")})` }))
        : Effect.succeed(agent)
    }

    /** The run's record if it is paused; else the refusal a decision on it would get. */
    const pausedRecord = (runId: string) =>
      Effect.gen(function*() {
        const store = yield* RunStore.RunStore
        const record = yield* store.get(runId).pipe(Effect.mapError(unavailable))
        if (Option.isSome(record) && record.value.status === "paused") return record.value
        const status = Option.isSome(record)
          ? record.value.status
          : Option.getOrUndefined(yield* store.finished(runId).pipe(Effect.mapError(unavailable)))?.status
        if (status === undefined) return yield* new RunNotFound({ runId, message: `No record of run ${runId} in the run store` })
        const decidedBy = Option.isSome(record) ? record.value.decidedBy : undefined
        return yield* Effect.flip(alreadyDecided(new AgentError.RunAlreadyResumed({ runId, status, decidedBy })))
      })

    /**
     * A run this inbox did not resume (or not from its pause at `revision`), followed through the
     * driver from the decision on that pause; refused when it cannot be: no `revision` or no
     * driver's `watch` (`NoLiveEvents`), a run the store has no record of (`RunNotFound`; one that
     * ended and is gone: `NoLiveEvents`), another agent's (`UnknownAgent`), a revision the run
     * was never paused at: past its record's, or its record's while it is not paused (`NoLiveEvents`).
     */
    const watched = (runId: string, revision: number | undefined, after: string | undefined) =>
      Effect.gen(function*() {
        const watch = driver?.watch
        if (revision === undefined) {
          return yield* new NoLiveEvents({
            runId,
            message: `This inbox has not resumed run ${runId}: it has no events of it${
              watch === undefined ? "" : " (give ?revision=<the revision of its pause> to follow a run decided elsewhere)"
            }`
          })
        }
        if (watch === undefined) {
          return yield* new NoLiveEvents({
            runId,
            message: `This inbox has not resumed run ${runId} from its pause at revision ${revision}, and its driver cannot follow runs driven elsewhere (it has no watch): it has no events of it`
          })
        }
        const store = yield* RunStore.RunStore
        const record = yield* store.get(runId).pipe(Effect.mapError(unavailable))
        if (Option.isNone(record)) {
          const finished = yield* store.finished(runId).pipe(Effect.mapError(unavailable))
          return yield* Option.isNone(finished)
            ? new RunNotFound({ runId, message: `No record of run ${runId} in the run store` })
            : new NoLiveEvents({ runId, message: `Run ${runId} has ${finished.value.status}, and the run store keeps no record of it to follow` })
        }
        const agent = yield* agentOf(record.value.agent)
        const { status, version } = record.value
        if (revision > version || (revision === version && status !== "paused")) {
          return yield* new NoLiveEvents({
            runId,
            message: `Run ${runId} was never paused at revision ${revision} (its record is ${status} at revision ${version}): no decision on it to follow`
          })
        }
        return watch(agent, record.value, { revision, after })
      })

    return handlers
      .handle("listRuns", ({ query }) =>
        Effect.gen(function*() {
          const store = yield* RunStore.RunStore
          const limit = query.limit ?? 100
          // asked per agent, so that a store full of other agents' runs is not read
          const records = yield* Effect.forEach(agents.keys(), (agent) => store.list({ status: "paused", agent, limit })).pipe(
            Effect.mapError(unavailable)
          )
          const now = yield* Clock.currentTimeMillis
          const runs: Array<RunSummary> = []
          for (const record of records.flat()) {
            // a record that cannot be read is left out of the list (and logged); asked for alone, it is a 503
            const cp = yield* Views.checkpointOf(record).pipe(Effect.tapError((e) => Effect.logWarning(e.message)), Effect.option)
            if (Option.isSome(cp)) runs.push(Views.summary(record, cp.value, now))
          }
          return runs.sort((a, b) => b.pausedAt - a.pausedAt).slice(0, limit)
        }))
      .handle("getRun", ({ params }) =>
        Effect.gen(function*() {
          const record = yield* pausedRecord(params.runId)
          const agent = yield* agentOf(record.agent)
          const detail = Views.detail(agent, record, yield* Views.checkpointOf(record), yield* Clock.currentTimeMillis)
          const runner = Option.getOrUndefined(yield* (driver?.location ?? here)(record))
          return {
            ...detail,
            ...(runner === undefined ? {} : { runner }),
            ...(driver?.watch === undefined ? {} : { events: eventsOf(record) })
          }
        }))
      .handleRaw("decide", ({ params, query, request }) =>
        Effect.gen(function*() {
          const contentType = request.headers["content-type"] ?? ""
          if (!isJsonContentType(contentType)) {
            return yield* new InvalidDecision({ message: `Send the decision as application/json (the request's content type is ${JSON.stringify(contentType)})` })
          }
          // a declared length over the limit is refused before reading; a chunked body stops being read at the limit
          if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) return yield* tooLarge
          const text = yield* request.text.pipe(
            Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBodyBytes)),
            Effect.mapError(() => tooLarge)
          )
          const body = yield* Effect.try({
            try: (): unknown => JSON.parse(text),
            catch: (error) => new InvalidDecision({ message: `The body is not JSON: ${error instanceof Error ? error.message : String(error)}` })
          })
          if (deeperThan(withoutValues(body), maxBodyDepth)) return yield* tooDeep
          // the values refused are quoted back: they are the sender's own
          const decision = yield* decodeDecision(body, { onExcessProperty: "error", reportInput: true }).pipe(
            Effect.mapError((error) => notADecision(body, error))
          )
          const record = yield* pausedRecord(params.runId)
          if (query.revision !== undefined && query.revision !== record.version) {
            // decided and paused again since the person saw it: what they decided is not what is pending now
            return yield* Effect.flip(alreadyDecided(new AgentError.RunAlreadyResumed({ runId: params.runId, status: record.status, decidedBy: record.decidedBy })))
          }
          const agent = yield* agentOf(record.agent)
          const decidedBy = yield* Decider
          const decidedAt = yield* live.resume(agent, record, decision, decidedBy).pipe(
            Effect.catch((error) => Effect.flatMap(refusal(error), Effect.fail))
          )
          // the pause decided: another replica of the inbox, reached by a reconnecting client, follows it from there
          const accepted = yield* encodeAccepted({ runId: params.runId, decidedBy, decidedAt, events: eventsOf(record) }).pipe(Effect.orDie)
          return HttpServerResponse.jsonUnsafe(accepted, { status: 202 })
        }))
      .handle("events", ({ params, query, request }) =>
        Effect.gen(function*() {
          const lastEventId = request.headers["last-event-id"]
          const mine = yield* live.subscribe(params.runId, lastEventId, query.revision)
          const events = Option.isSome(mine) ? mine.value : yield* watched(params.runId, query.revision, lastEventId)
          const encoder = new TextEncoder()
          const body = events.pipe(
            Stream.mapEffect(({ event, id }) => Effect.map(Effect.orDie(encodeEvent(event)), (json) => encoder.encode(`id: ${id}\ndata: ${JSON.stringify(json)}\n\n`)))
          )
          return HttpServerResponse.stream(body, { contentType: "text/event-stream", headers: sseHeaders })
        }))
  })
