/**
 * `pnpm bench:cluster --failover[=kill,paused,cold,sigterm,defaults]`: what each failure costs a run, in real time, on 2 runner
 * processes (a database each). Times are taken from the processes' own clocks (one machine).
 *
 * - SIGKILL mid-tool (`render`, idempotent, 4 s): kill → the call starts again on the other
 *   runner, and → the client's reply; with the fast settings (6 s / 2 s) and the defaults (35 s / 10 s).
 * - SIGTERM mid-tool (a deploy), fast settings: → the old process exits, → the reply; whether
 *   the call ran again.
 * - SIGKILL while paused, the decision sent at once from a new (cold) client-only process:
 *   → the approved call runs on the survivor, → the reply.
 * - Cold client-only processes (nothing killed): a new process's `run` sent → its first tool
 *   starts; a new process's `decide` sent → the approved call starts.
 */
import { AgentCluster } from "@agentfx/cluster"
import { Effect, Fiber } from "effect"
import type { Check } from "../measure.js"
import { benchAgent } from "./agent.js"
import { type Child, client, coldClient, firstEvent, freshDatabase, runners } from "./processes.js"

const Bench = AgentCluster.make(benchAgent)

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`

/** The runners of a scenario, and a run of `render` started from this process; resolves once it started somewhere. */
const renderRun = (serverUrl: string, settings: "fast" | "default") =>
  Effect.gen(function*() {
    const { sql, url } = yield* freshDatabase(serverUrl)
    const children = yield* runners(url, sql, 2, settings)
    const inClient = yield* client(url)
    const reply = yield* Effect.forkChild(Effect.timed(inClient(AgentCluster.run(Bench, { input: "render 1" }))))
    const started = yield* firstEvent(children, "started", "r-1-render")
    const survivor = children.find((child) => child !== started.child)!
    return { holder: started.child, survivor, reply }
  })

const sigkill = (settings: "fast" | "default") => (serverUrl: string, rows: Array<readonly [string, string]>, checks: Array<Check>) =>
  Effect.gen(function*() {
    const { holder, reply, survivor } = yield* renderRun(serverUrl, settings)
    const killedAt = Date.now()
    yield* holder.kill()
    const again = yield* firstEvent([survivor], "started", "r-1-render")
    const outcome = yield* Fiber.join(reply)
    const repliedAt = Date.now()
    checks.push({ name: `SIGKILL mid-tool (${settings}): the run completed`, ok: outcome[1]._tag === "Completed", detail: outcome[1]._tag })
    rows.push([`SIGKILL mid-tool, ${settings} settings: → the idempotent call starts again on the other runner; → the client's reply`,
      `${seconds(again.at - killedAt)}; ${seconds(repliedAt - killedAt)}`])
  }).pipe(Effect.scoped)

const sigterm = (serverUrl: string, rows: Array<readonly [string, string]>, checks: Array<Check>) =>
  Effect.gen(function*() {
    const { holder, reply, survivor } = yield* renderRun(serverUrl, "fast")
    const stoppedAt = Date.now()
    yield* Effect.forkChild(holder.kill("SIGTERM"))
    const exitedAt = yield* Effect.map(holder.exited, () => Date.now())
    const outcome = yield* Fiber.join(reply)
    const repliedAt = Date.now()
    const endedOnHolder = holder.messages().some((m) => (m as { ended?: string }).ended === "r-1-render")
    const rerun = survivor.messages().some((m) => (m as { started?: string }).started === "r-1-render")
    checks.push({ name: "SIGTERM mid-tool: the run completed", ok: outcome[1]._tag === "Completed", detail: outcome[1]._tag })
    rows.push(["SIGTERM mid-tool (a deploy), fast settings: → the old runner exits; → the client's reply; the call",
      `${seconds(exitedAt - stoppedAt)}; ${seconds(repliedAt - stoppedAt)}; ${endedOnHolder ? "finished on the old runner" : "cut off"}${rerun ? ", ran again on the other" : ", not run again"}`])
  }).pipe(Effect.scoped)

/** Runs a cold client process to its reply: its times. */
const cold = (url: string, ...args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const child: Child = yield* coldClient(url, ...args)
    const sent = yield* child.waitFor("sent", (m) => (m as { sent?: number }).sent, 60_000)
    const reply = yield* child.waitFor("reply", (m) => (m as { reply?: unknown }).reply === undefined ? undefined : m as { reply: { _tag: string; runId: string }; at: number }, 120_000)
    return { sent, reply: reply.reply, repliedAt: reply.at }
  }).pipe(Effect.scoped)

const pausedKill = (serverUrl: string, rows: Array<readonly [string, string]>, checks: Array<Check>) =>
  Effect.gen(function*() {
    const { sql, url } = yield* freshDatabase(serverUrl)
    const children = yield* runners(url, sql, 2, "fast")
    const inClient = yield* client(url)
    const paused = yield* inClient(AgentCluster.run(Bench, { input: "r-2" }))
    const holder = (yield* firstEvent(children, "started", "r-2-lookup")).child
    const survivor = children.find((child) => child !== holder)!
    const killedAt = Date.now()
    yield* holder.kill()
    const decided = yield* Effect.forkChild(cold(url, "decide", (paused as { runId: string }).runId))
    const transfer = yield* firstEvent([survivor], "started", "r-2-transfer")
    const { reply, repliedAt } = yield* Fiber.join(decided)
    checks.push({ name: "SIGKILL while paused: the decision completed the run", ok: reply._tag === "Completed", detail: reply._tag })
    rows.push(["SIGKILL of the runner holding a paused run, fast settings, decision sent at once from a new process: → the approved call runs on the survivor; → the reply",
      `${seconds(transfer.at - killedAt)}; ${seconds(repliedAt - killedAt)}`])
  }).pipe(Effect.scoped)

const coldClients = (serverUrl: string, rows: Array<readonly [string, string]>, checks: Array<Check>) =>
  Effect.gen(function*() {
    const { sql, url } = yield* freshDatabase(serverUrl)
    const children = yield* runners(url, sql, 2, "fast")
    const starts: Array<number> = []
    const decides: Array<number> = []
    for (let i = 0; i < 3; i++) {
      const run = yield* Effect.forkChild(cold(url, "run", `r-c${i}`))
      const lookup = yield* firstEvent(children, "started", `r-c${i}-lookup`)
      const { reply, sent } = yield* Fiber.join(run)
      starts.push(lookup.at - sent)
      const decide = yield* Effect.forkChild(cold(url, "decide", reply.runId))
      const transfer = yield* firstEvent(children, "started", `r-c${i}-transfer`)
      const decided = yield* Fiber.join(decide)
      decides.push(transfer.at - decided.sent)
      checks.push({ name: `cold client ${i}: paused, then completed`, ok: reply._tag === "Paused" && decided.reply._tag === "Completed", detail: `${reply._tag}, ${decided.reply._tag}` })
    }
    rows.push(["cold client-only process (poll 1 s), 3 times: run sent → its first tool starts", starts.map(seconds).join(", ")])
    rows.push(["cold client-only process, 3 times: decide sent → the approved call starts", decides.map(seconds).join(", ")])
  }).pipe(Effect.scoped)

/** The failover scenarios, by name. */
const scenarios = {
  kill: sigkill("fast"),
  paused: pausedKill,
  cold: coldClients,
  sigterm,
  defaults: sigkill("default")
}

/** The scenarios named in `only` (all when empty), in turn. */
export const failover = (serverUrl: string, rows: Array<readonly [string, string]>, checks: Array<Check>, only: ReadonlyArray<string>) =>
  Effect.forEach(
    Object.entries(scenarios).filter(([name]) => only.length === 0 || only.includes(name)),
    ([, scenario]) => scenario(serverUrl, rows, checks),
    { discard: true }
  )
