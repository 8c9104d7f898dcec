/**
 * The inbox page in headless Chromium (playwright-core, `launchChromium` of @agentfx/testing)
 * following cluster runs it did not decide, on the embedded cluster (real time: the engine polls
 * its file). Two inbox replicas (`ClusterInbox.driver()`) stand behind a small load balancer,
 * which can cut an event stream and send the browser's reconnection to the other replica. A run
 * decided by a program while the page shows it: the page's approval is refused naming who
 * decided, and the page follows the run's steps from the runner to its answer; its stream cut,
 * the browser reconnects with `Last-Event-ID` to the other replica and continues, nothing twice.
 * The page's own decision reconnected to the other replica starts over there: shown once.
 * A run whose decided segment the runner no longer keeps (decided, then the runner restarted):
 * the page shows the gap (`EventsLost`) and the run's state from its record.
 * Screenshots: packages/cluster/test-artifacts/ (git-ignored).
 */
import { Decision, RunStore } from "@agentfx/core"
import { Inbox } from "@agentfx/inbox"
import { launchChromium } from "@agentfx/testing/Chromium"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Layer, Option, Schedule, Scope } from "effect"
import { HttpServer } from "effect/http"
import { mkdirSync } from "node:fs"
import { createServer, request as forward, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as ClusterInbox from "../src/ClusterInbox.js"
import { AgentCluster } from "../src/index.js"
import { Bank, bankAgent, bankRunnerOn, executions, gate, tempDir } from "./fixtures.js"

const artifacts = fileURLToPath(new URL("../test-artifacts/", import.meta.url))

let browser: Awaited<ReturnType<typeof launchChromium>>
beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true })
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
})

/** An inbox replica on the cluster member of `cluster` (its driver `ClusterInbox.driver()`), for `scope`: its port. */
const replica = (cluster: Context.Context<any>, scope: Scope.Scope) =>
  Effect.runPromise(Effect.gen(function*() {
    const driver = yield* ClusterInbox.driver()
    const server = yield* Layer.build(Inbox.serve({ agents: [bankAgent], driver }))
    return (Context.get(server, HttpServer.HttpServer).address as { readonly port: number }).port
  }).pipe(Effect.provideContext(cluster), Scope.provide(scope)))

/** A runner on `file` and an inbox replica in its process (on ClusterSqlite, watches are served there), for `scope`. */
const member = async (file: string, scope: Scope.Scope) => {
  const cluster = await Effect.runPromise(Scope.provide(Layer.build(bankRunnerOn(file)), scope))
  const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.runPromise(Effect.provideContext(effect, cluster) as Effect.Effect<A, E>)
  return { cluster, run, port: await replica(cluster, scope) }
}

/**
 * A load balancer in front of inbox replicas: each request goes to the port `to` names now; an
 * event stream is cut after `cutAfter` events when set (once; the ids it let through: `cutIds`).
 * Records each event stream asked for: its path and `Last-Event-ID`.
 */
const balancer = async () => {
  const state = { to: 0, cutAfter: undefined as number | undefined, streams: [] as Array<{ path: string; lastEventId: string | undefined }>, cutIds: [] as Array<string> }
  const server: Server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = { ...req.headers }
    if (req.url?.includes("/events")) {
      state.streams.push({ path: req.url, lastEventId: req.headers["last-event-id"] as string | undefined })
    }
    const upstream = forward({ host: "127.0.0.1", port: state.to, method: req.method, path: req.url, headers }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers)
      const cut = (reply.headers["content-type"] ?? "").startsWith("text/event-stream") ? state.cutAfter : undefined
      if (cut === undefined) return void reply.pipe(res)
      state.cutAfter = undefined
      let buffered = ""
      let sent = 0
      reply.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8")
        for (let end = buffered.indexOf("\n\n"); end >= 0 && sent < cut; end = buffered.indexOf("\n\n")) {
          const event = buffered.slice(0, end + 2)
          state.cutIds.push(/^id: (.*)$/m.exec(event)?.[1] ?? "")
          res.write(event)
          buffered = buffered.slice(end + 2)
          sent++
        }
        if (sent === cut) {
          // the stream ends mid-run (what was written is flushed first): the browser reconnects
          upstream.destroy()
          res.end()
        }
      })
    })
    upstream.on("error", () => res.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { state, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

/** A person with the inbox page open on `origin`, their name typed in. */
const person = async (origin: string, name: string) => {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } })
  const page = await context.newPage()
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(error.message))
  await page.goto(`${origin}/inbox`)
  await page.fill("#reviewer", name)
  await page.press("#reviewer", "Tab")
  return { page, errors }
}

const lines = (page: Awaited<ReturnType<typeof person>>["page"]) => page.$$eval("#events li", (items) => items.map((item) => item.textContent))

/** The run's record once `done` says so (polled every 50 ms, for up to 30 s). */
const recordWhen = (runId: string, done: (record: RunStore.RunRecord) => boolean) =>
  AgentCluster.get(runId).pipe(
    Effect.flatMap((record) => Option.isSome(record) && done(record.value) ? Effect.succeed(record.value) : Effect.fail("not yet" as const)),
    Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 600 }),
    Effect.orDie
  )

describe("the inbox page on a cluster", () => {
  it("a run decided by a program while the page shows it: the page's approval is refused naming who, then it follows the run's steps from the runner; cut off, it reconnects with Last-Event-ID to another replica and continues there, nothing twice", async () => {
    const scope = Effect.runSync(Scope.make())
    const lb = await balancer()
    try {
      const dir = await Effect.runPromise(Scope.provide(tempDir, scope))
      const release = Effect.runSync(Deferred.make<void>())
      gate.wait = Deferred.await(release)
      const a = await member(join(dir, "cluster.db"), scope)
      const b = await replica(a.cluster, scope)
      lb.state.to = a.port

      const paused = await a.run(AgentCluster.run(Bank, { input: "guard 41", conversationId: "c-page" }))
      expect(paused._tag).toBe("Paused")
      const ada = await person(lb.origin, "Ada")
      await ada.page.click(`#runs button[data-run-id="${paused.runId}"]`)
      await ada.page.waitForSelector(`fieldset[data-call-id="guarded-41"]`)
      const revision = (await a.run(recordWhen(paused.runId, () => true))).version

      // a program decides it (a chat endpoint, another inbox would too); the call holds on the gate
      const decided = a.run(AgentCluster.decide(Bank, paused.runId, Decision.approveAll(), { decidedBy: "bob", revision }))
      decided.catch(() => undefined) // awaited below; a test failing first closes the cluster under it
      await a.run(recordWhen(paused.runId, (record) => record.status === "running"))
      lb.state.cutAfter = 2

      await ada.page.click("#approve-all")
      await ada.page.waitForFunction(() => (globalThis as any).document.querySelectorAll("#events li").length === 2)
      expect(await ada.page.textContent("#status")).toMatch(new RegExp(`^Run ${paused.runId} was already decided by bob: it is running now \\(at .+\\)$`))
      expect(await lines(ada.page)).toEqual(["resumed: ApproveAll by bob", "→ guarded({})"])
      expect(await ada.page.textContent("#run-heading")).toMatch(/^bank — decided by bob \(at .+\)$/)
      await ada.page.screenshot({ path: `${artifacts}inbox-followed-decided-elsewhere.png` })

      // cut after those two: the browser reconnects, and the balancer sends it to the other replica
      lb.state.to = b
      await Effect.runPromise(Effect.retry(
        Effect.suspend(() => lb.state.streams.length >= 2 ? Effect.void : Effect.fail("not yet")),
        { schedule: Schedule.spaced("50 millis"), times: 200 }
      ))
      await Effect.runPromise(Deferred.succeed(release, undefined))
      await ada.page.waitForSelector("#events li.final")
      expect(lb.state.streams.map(({ path }) => path)).toEqual([
        `/inbox/api/runs/${paused.runId}/events?revision=${revision}`,
        `/inbox/api/runs/${paused.runId}/events?revision=${revision}`
      ])
      expect(lb.state.streams[0]!.lastEventId).toBeUndefined()
      // the browser's reconnection names the last event it got: the other replica continues after it
      expect(lb.state.cutIds).toHaveLength(2)
      expect(lb.state.streams[1]!.lastEventId).toBe(lb.state.cutIds[1])
      expect(await lines(ada.page)).toEqual([
        "resumed: ApproveAll by bob",
        "→ guarded({})",
        `✓ guarded: "guarded done"`,
        "model call #2",
        "model answered: guarded 41",
        "completed: guarded 41"
      ])
      expect(await ada.page.textContent("#run-heading")).toMatch(/^bank — decided by bob \(at .+\) · completed$/)
      expect(await ada.page.textContent("#status")).toBe("completed: guarded 41")
      await ada.page.screenshot({ path: `${artifacts}inbox-followed-to-its-answer.png` })
      expect((await decided)._tag).toBe("Completed")
      expect(executions.get("guarded-41")).toBe(1)
      expect(ada.errors).toEqual([])
    } finally {
      gate.wait = Effect.void
      await lb.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 120_000)

  it("the page's own decision, cut off and reconnected to another replica (which numbers events otherwise, so starts over from the decision): what was shown is replaced, nothing twice", async () => {
    const scope = Effect.runSync(Scope.make())
    const lb = await balancer()
    try {
      const dir = await Effect.runPromise(Scope.provide(tempDir, scope))
      const release = Effect.runSync(Deferred.make<void>())
      gate.wait = Deferred.await(release)
      const a = await member(join(dir, "cluster.db"), scope)
      const b = await replica(a.cluster, scope)
      lb.state.to = a.port
      const paused = await a.run(AgentCluster.run(Bank, { input: "guard 43", conversationId: "c-own" }))
      const ada = await person(lb.origin, "Ada")
      await ada.page.click(`#runs button[data-run-id="${paused.runId}"]`)
      await ada.page.waitForSelector(`fieldset[data-call-id="guarded-43"]`)
      lb.state.cutAfter = 2
      await ada.page.click("#approve-all")
      await ada.page.waitForFunction(() => (globalThis as any).document.querySelectorAll("#events li").length === 2)
      lb.state.to = b
      await Effect.runPromise(Effect.retry(
        Effect.suspend(() => lb.state.streams.length >= 2 ? Effect.void : Effect.fail("not yet")),
        { schedule: Schedule.spaced("50 millis"), times: 200 }
      ))
      // replica A's ids are its own: B follows the pause's revision from the runner, from the decision
      expect(lb.state.streams[1]!.lastEventId).toBe(lb.state.cutIds[1])
      expect(lb.state.streams[1]!.path).toMatch(new RegExp(`/events\\?revision=\\d+$`))
      await Effect.runPromise(Deferred.succeed(release, undefined))
      await ada.page.waitForSelector("#events li.final")
      expect(await lines(ada.page)).toEqual([
        "resumed: ApproveAll by Ada",
        "→ guarded({})",
        `✓ guarded: "guarded done"`,
        "model call #2",
        "model answered: guarded 43",
        "completed: guarded 43"
      ])
      expect(await ada.page.textContent("#run-heading")).toMatch(/^bank — decided by Ada \(at .+\) · completed$/)
      expect(executions.get("guarded-43")).toBe(1)
      expect(ada.errors).toEqual([])
    } finally {
      gate.wait = Effect.void
      await lb.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 120_000)

  it("a run decided, then its runner restarted: the decided segment is no longer kept; the page shows the gap, then the run's state from its record (paused again)", async () => {
    const outer = Effect.runSync(Scope.make())
    const first = Effect.runSync(Scope.make())
    const lb = await balancer()
    try {
      const dir = await Effect.runPromise(Scope.provide(tempDir, outer))
      const file = join(dir, "cluster.db")
      const a = await member(file, first)
      lb.state.to = a.port
      const paused = await a.run(AgentCluster.run(Bank, { input: "twice 42", conversationId: "c-restart" }))
      const ada = await person(lb.origin, "Ada")
      await ada.page.click(`#runs button[data-run-id="${paused.runId}"]`)
      await ada.page.waitForSelector(`fieldset[data-call-id="first-42"]`)
      const revision = (await a.run(recordWhen(paused.runId, () => true))).version
      // decided by a program: the run pauses again on its second transfer
      expect((await a.run(AgentCluster.decide(Bank, paused.runId, Decision.approveAll(), { decidedBy: "bob", revision })))._tag).toBe("Paused")

      // the runner restarts (and its inbox with it): what it kept of the decided segment is gone
      await Effect.runPromise(Scope.close(first, Exit.void))
      const c = await member(file, outer)
      lb.state.to = c.port

      await ada.page.click("#approve-all")
      await ada.page.waitForSelector("#events li.final")
      expect(await lines(ada.page)).toEqual([
        `⚠ events lost: The events of this segment of run ${paused.runId} are not kept by the runner that drives it now; the run's state is read from its record`,
        "paused again (approval): transfer"
      ])
      expect(await ada.page.getAttribute("#events li.final", "data-tag")).toBe("RunPaused")
      expect(await ada.page.textContent("#run-heading")).toBe("bank — decided by someone else · paused again for approval")
      await ada.page.screenshot({ path: `${artifacts}inbox-followed-a-gap.png` })
      expect([executions.get("first-42"), executions.get("second-42")]).toEqual([1, undefined])
      expect(ada.errors).toEqual([])
    } finally {
      await lb.close()
      await Effect.runPromise(Scope.close(first, Exit.void))
      await Effect.runPromise(Scope.close(outer, Exit.void))
    }
  }, 120_000)
})
