/**
 * An inbox whose decided runs are driven elsewhere (a cluster's runner, here another "process":
 * its own model and services over the same stores): the decision goes to the driver, the
 * inbox needs no model, the page is told where the run is driven, and a driver's refusal is
 * the inbox's usual 409.
 */
import { Agent, type AgentError, ChatMemory, Decision, RunStore } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Stream } from "effect"
import { LiveEvent, type RunDriver } from "../src/index.js"
import { bank, decide, events, model, request, serve } from "./fixtures.js"

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
})
