/**
 * An inbox whose decided runs are driven elsewhere (a cluster's runner, here another "process":
 * its own model and services over the same stores): the decision goes to the driver, the
 * inbox needs no model, the page is told where the run is driven, and a driver's refusal is
 * the inbox's usual 409. A run decided elsewhere is followed through the driver's `watch`
 * (`GET …/events?revision=`), and refused with typed errors where it cannot be.
 */
import { Agent, type AgentError, ChatMemory, Decision, RunStore } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Stream } from "effect"
import { LiveEvent, type RunDriver } from "../src/index.js"
import { bank, decide, events, model, request, serve } from "./fixtures.js"

/** A driver over `context`'s stores that runs decisions with its own model, and watches runs as `watched` says (its calls recorded). */
const watching = (context: Layer.Layer<never>, watched: Array<string>): RunDriver.RunDriver => ({
  resume: (agent, paused, decision, decidedBy) =>
    Agent.streamResume(agent, paused.runId, decision, { decidedBy, revision: paused.version }).pipe(
      Stream.map((event) => LiveEvent.fromAgentEvent(event, decidedBy)),
      Stream.provide(model),
      Stream.provide(context)
    ) as Stream.Stream<LiveEvent.LiveEvent, AgentError.ResumeError>,
  location: () => Effect.succeed(Option.none()),
  watch: (agent, record, { after, revision }) => {
    watched.push(`${agent.name} ${record.runId} ${revision} ${after ?? "-"}`)
    const meta = { runId: record.runId, conversationId: record.conversationId, timestamp: 1 }
    return Stream.make(
      { id: "d1:0", event: { _tag: "RunResumed", ...meta, agent: agent.name, decision: "ApproveAll", decidedBy: "bob" } },
      { id: "d1:1", event: { _tag: "EventsLost", ...meta, message: "lost with its runner" } },
      { id: "d1:2", event: { _tag: "RunCompleted", ...meta, text: "done elsewhere" } }
    ).pipe(Stream.filter(({ id }) => after === undefined || id > after)) as Stream.Stream<{ readonly id: string; readonly event: LiveEvent.LiveEvent }>
  }
})

describe("an inbox with a RunDriver", () => {
  it.live("sends the decision to the driver, which runs it with its own model; the page names the runner; a second decision is refused", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const sent: Array<string> = []
      const stores = Layer.mergeAll(RunStore.layerMemory(), ChatMemory.layerMemory)
      const context = yield* Layer.build(stores)
      const elsewhere: RunDriver.RunDriver = {
        resume: (agent, paused, decision, decidedBy) => {
          sent.push(`${paused.runId} ${Decision.match({ ApproveAll: () => "ApproveAll", RejectAll: () => "RejectAll", ByCall: () => "ByCall", Retry: () => "Retry", Report: () => "Report", Continue: () => "Continue" })(decision)} ${decidedBy}`)
          return Agent.streamResume(agent, paused.runId, decision, { decidedBy, revision: paused.version }).pipe(
            Stream.map((event) => LiveEvent.fromAgentEvent(event, decidedBy)),
            Stream.provide(model),
            Stream.provideContext(context)
          ) as Stream.Stream<LiveEvent.LiveEvent, AgentError.ResumeError>
        },
        location: (record) => Effect.succeed(Option.some(`runner-of-${record.conversationId}:34431`))
      }
      const inbox = yield* serve([agent], { driver: elsewhere, stores: Layer.succeedContext(context) })
      const runId = yield* inbox.pause(agent, "pay Ada 250", "c-9")
      const shown = yield* request(`${inbox.origin}/inbox/api/runs/${runId}`)
      expect(shown.body.runner).toBe("runner-of-c-9:34431")
      const accepted = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" }, "Ada")
      expect(accepted.status).toBe(202)
      const followed = yield* events(`${inbox.origin}${accepted.body.events}`)
      expect([followed.events[0]?.data._tag, followed.events[0]?.data.decidedBy]).toEqual(["RunResumed", "Ada"])
      expect(followed.events.map((e) => e.data._tag)).toContain("ToolSucceeded")
      expect(followed.events.at(-1)?.data).toMatchObject({ _tag: "RunCompleted", text: `Done: "sent 250 to Ada"` })
      expect(sent).toEqual([`${runId} ApproveAll Ada`])
      expect(executed).toEqual(["t1 Ada 250"])
      const late = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" }, "Bob")
      expect([late.status, late.body._tag, late.body.decidedBy]).toEqual([409, "AlreadyDecided", "Ada"])
      expect(executed).toEqual(["t1 Ada 250"])
    }))

  it.live("GET …/events?revision=: a run this inbox did not decide is followed through the driver's watch (Last-Event-ID continues after); refused where it cannot be, with typed errors", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const stores = yield* Layer.build(Layer.mergeAll(RunStore.layerMemory(), ChatMemory.layerMemory))
      const watched: Array<string> = []
      const inbox = yield* serve([agent], { driver: watching(Layer.succeedContext(stores), watched), stores: Layer.succeedContext(stores) })
      const url = (runId: string, query: string) => `${inbox.origin}/inbox/api/runs/${encodeURIComponent(runId)}/events${query}`
      const runId = yield* inbox.pause(agent, "pay Ada 250", "c-w")
      const { version } = Option.getOrThrow(yield* inbox.store.get(runId))
      // the run's panel says where a decision on this pause streams, whoever makes it
      expect((yield* request(`${inbox.origin}/inbox/api/runs/${runId}`)).body.events).toBe(`/inbox/api/runs/${runId}/events?revision=${version}`)

      // decided elsewhere (this inbox did not resume it): the driver's watch, from that pause, its ids the watch's
      const followed = yield* events(url(runId, `?revision=${version}`))
      expect([followed.status, followed.contentType]).toEqual([200, "text/event-stream"])
      expect(followed.events.map((e) => [e.id, e.data._tag])).toEqual([["d1:0", "RunResumed"], ["d1:1", "EventsLost"], ["d1:2", "RunCompleted"]])
      expect(followed.events[0]!.data).toMatchObject({ decidedBy: "bob" })
      const rest = yield* events(url(runId, `?revision=${version}`), { headers: { "last-event-id": "d1:0" } })
      expect(rest.events.map((e) => e.id)).toEqual(["d1:1", "d1:2"])
      expect(watched).toEqual([`bank ${runId} ${version} -`, `bank ${runId} ${version} d1:0`])

      // refused, each typed: without a revision; an unknown run; a revision past the record's; the record's own while it runs; another agent's run
      const refused = (runId: string, query: string) => Effect.map(request(url(runId, query)), (reply) => [reply.status, reply.body])
      expect(yield* refused(runId, "")).toEqual([404, {
        _tag: "NoLiveEvents",
        runId,
        message: `This inbox has not resumed run ${runId}: it has no events of it (give ?revision=<the revision of its pause> to follow a run decided elsewhere)`
      }])
      expect(yield* refused("nope", "?revision=0")).toEqual([404, { _tag: "RunNotFound", runId: "nope", message: "No record of run nope in the run store" }])
      expect(yield* refused(runId, `?revision=${version + 1}`)).toEqual([404, {
        _tag: "NoLiveEvents",
        runId,
        message: `Run ${runId} was never paused at revision ${version + 1} (its record is paused at revision ${version}): no decision on it to follow`
      }])
      const now = Date.now()
      yield* inbox.store.insert({ runId: "r-running", agent: "bank", conversationId: "c-r", ephemeral: false, status: "running", version: 4, createdAt: now, updatedAt: now })
      expect(yield* refused("r-running", "?revision=4")).toEqual([404, {
        _tag: "NoLiveEvents",
        runId: "r-running",
        message: "Run r-running was never paused at revision 4 (its record is running at revision 4): no decision on it to follow"
      }])
      expect((yield* events(url("r-running", "?revision=3"))).events.at(-1)!.data._tag).toBe("RunCompleted")
      const other = yield* inbox.pause(bank("billing").agent, "pay Ada 5")
      expect(yield* refused(other, "?revision=1")).toMatchObject([422, { _tag: "UnknownAgent", agent: "billing" }])
      expect(watched).toHaveLength(3)

      // bad values of revision: a typed 400 naming it
      for (const bad of ["abc", "1.5", "-1"]) {
        const [status, body] = yield* refused(runId, `?revision=${bad}`)
        expect([status, (body as any)._tag]).toEqual([400, "InvalidQuery"])
        expect((body as any).message).toMatch(/^The query is not valid: revision: /)
      }

      // decided by this inbox: its own events at that pause's revision; another revision of the run is the driver's watch
      const accepted = yield* decide(inbox.origin, runId, { _tag: "ApproveAll" }, "Ada")
      expect(accepted.body.events).toBe(`/inbox/api/runs/${runId}/events?revision=${version}`)
      const mine = yield* events(`${inbox.origin}${accepted.body.events}`)
      expect([mine.events[0]!.data.decidedBy, mine.events.at(-1)!.data.text]).toEqual(["Ada", `Done: "sent 250 to Ada"`])
      expect(watched).toHaveLength(3)
      // completed: the in-memory store keeps no record of it, only how it ended
      expect(yield* refused(runId, `?revision=${version - 1}`)).toEqual([404, {
        _tag: "NoLiveEvents",
        runId,
        message: `Run ${runId} has completed, and the run store keeps no record of it to follow`
      }])
    }))

  it.live("an inbox whose driver has no watch (the default, this process): its runs' panels name no events to follow, and GET …/events?revision= is NoLiveEvents, saying why", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const inbox = yield* serve([agent])
      const runId = yield* inbox.pause(agent, "pay Ada 250")
      expect((yield* request(`${inbox.origin}/inbox/api/runs/${runId}`)).body).not.toHaveProperty("events")
      const reply = yield* request(`${inbox.origin}/inbox/api/runs/${runId}/events?revision=1`)
      expect([reply.status, reply.body]).toEqual([404, {
        _tag: "NoLiveEvents",
        runId,
        message: `This inbox has not resumed run ${runId} from its pause at revision 1, and its driver cannot follow runs driven elsewhere (it has no watch): it has no events of it`
      }])
    }))
})
