/**
 * A process of the cluster process tests (`Processes.test.ts` spawns it with node, never a
 * wrapper). Prints JSON lines. Modes:
 * - `runner <pg url> <port>`: a cluster runner serving `proofAgent` (failover settings 6 s / 2 s,
 *   poll 1 s; its cluster connections' `application_name` is `runner-<pid>`); prints `{"ready":pid}`
 *   once its Layer is built, then runs until killed.
 * - `client <pg url>`: a client-only member; reads commands on stdin, one JSON object a line, runs
 *   each at once, and prints `{"id", "ok"}` or `{"id", "error": <tag>, "message"}`:
 *   `{"id","op":"start","input","runId"?}` → the run id once the Start is stored;
 *   `{"id","op":"run","input"}` → the run's outcome;
 *   `{"id","op":"decide","runId","decidedBy"}` → approve all: the outcome, or the refusal;
 *   `{"id","op":"runMany","count"}` → runs `work i` / `pay i` (every third) for i < count, 32 at
 *   a time; prints `{"progress": started}` every 50 starts, then counts of the outcomes' tags;
 *   `{"id","op":"stream","input","runId"?}` → starts the run and watches it (`AgentCluster.stream`):
 *   prints `{"id","watched":{"tag","cursor","at","text"?}}` for each element as it comes, then the
 *   number of elements.
 */
import { AgentCluster } from "@agentfx/cluster"
import * as ClusterPg from "@agentfx/cluster/ClusterPg"
import { Decision } from "@agentfx/core"
import { PgClient } from "@effect/sql-pg"
import type { Sharding } from "effect/cluster/Sharding"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, ManagedRuntime, Redacted, Stream } from "effect"
import { createInterface } from "node:readline"
import { proofAgent, proofManager, proofModel } from "./agents.js"

const [mode, url, port] = process.argv.slice(2)
const say = (value: unknown) => Effect.sync(() => process.stdout.write(`${JSON.stringify(value)}\n`))

export const Proof = AgentCluster.make(proofAgent)

const failover = { lockExpiration: "6 seconds", lockRefresh: "2 seconds" } as const

const runner = () =>
  Layer.launch(
  Layer.effectDiscard(say({ ready: process.pid })).pipe(
    Layer.provideMerge(AgentCluster.runner(Proof)),
    Layer.provide([proofModel, proofManager, PgClient.layer({ url: Redacted.make(url!) })]),
    // the cluster's connections name this process (pg_stat_activity, the tests' statement triggers)
    Layer.provide(ClusterPg.layer({
      url: Redacted.make(url!),
      applicationName: `runner-${process.pid}`,
      runnerAddress: { host: "127.0.0.1", port: Number(port) },
      failover,
      pollInterval: "1 second"
    }))
  )
)

interface Command {
  readonly id: string
  readonly op: "start" | "run" | "decide" | "runMany" | "stream"
  readonly input?: string
  readonly runId?: string
  readonly decidedBy?: string
  readonly count?: number
}

const tagOf = (outcome: { readonly _tag: string }) => outcome._tag

const runMany = (count: number) =>
  Effect.gen(function*() {
    const tags = new Map<string, number>()
    let started = 0
    yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
      AgentCluster.run(Proof, { input: i % 3 === 0 ? `pay ${i}` : `work ${i}` }).pipe(
        Effect.map(tagOf),
        Effect.catch((error) => Effect.succeed(`error:${(error as { _tag?: string })._tag ?? String(error)}`)),
        Effect.tap(() => ++started % 50 === 0 ? say({ progress: started }) : Effect.void),
        Effect.map((tag) => void tags.set(tag, (tags.get(tag) ?? 0) + 1))
      ), { concurrency: 32, discard: true })
    return Object.fromEntries(tags)
  })

const perform = (command: Command) => {
  switch (command.op) {
    case "start":
      return AgentCluster.start(Proof, { input: command.input!, ...(command.runId === undefined ? {} : { runId: command.runId }) })
    case "run":
      return AgentCluster.run(Proof, { input: command.input! })
    case "decide":
      return AgentCluster.decide(Proof, command.runId!, Decision.approveAll(), { decidedBy: command.decidedBy! })
    case "runMany":
      return runMany(command.count!)
    case "stream":
      return AgentCluster.stream(Proof, { input: command.input!, ...(command.runId === undefined ? {} : { runId: command.runId }) }).pipe(
        Stream.tap((watched) =>
          say({
            id: command.id,
            watched: watched._tag === "Event"
              ? { tag: watched.event._tag, cursor: watched.cursor, at: Date.now(), ...(watched.event._tag === "RunCompleted" ? { text: watched.event.exit.text } : {}) }
              : { tag: watched._tag, cursor: watched.cursor, at: Date.now(), ...(watched._tag === "Gap" ? { text: watched.message } : {}) }
          })
        ),
        Stream.runCount
      )
  }
}

const run = (command: Command) =>
  (perform(command) as Effect.Effect<unknown, { readonly _tag?: string; readonly message?: string }, Sharding>).pipe(
    Effect.matchEffect({
      onFailure: (error) => say({ id: command.id, error: error._tag ?? "unknown", message: error.message ?? String(error) }),
      onSuccess: (ok) => say({ id: command.id, ok })
    })
  )

/** Builds the client-only member, says ready, then runs each command of stdin as it comes. */
const client = Effect.gen(function*() {
  const runtime = yield* Effect.acquireRelease(
    Effect.sync(() => ManagedRuntime.make(ClusterPg.layerClient({ url: Redacted.make(url!), failover }))),
    (runtime) => runtime.disposeEffect
  )
  yield* Effect.promise(() => runtime.runPromise(Effect.void))
  yield* say({ ready: process.pid })
  yield* Effect.callback<void>((resume) => {
    const lines = createInterface({ input: process.stdin })
    lines.on("line", (line) => void runtime.runFork(run(JSON.parse(line) as Command)))
    lines.on("close", () => resume(Effect.void))
  })
}).pipe(Effect.scoped)

// runMain: a SIGTERM interrupts the program, whose Layers then shut down
NodeRuntime.runMain(mode === "runner" ? runner() : client)
