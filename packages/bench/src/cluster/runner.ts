/**
 * A runner process of `pnpm bench:cluster` (built JS, `node --expose-gc`):
 * `runner.js <pg url> <port> [fast]`. Serves the bench agent and the floor entity (with `fast`,
 * shard locks expire after 6 s, refreshed every 2 s; else the engine's defaults, 35 s / 10 s); prints `{"ready":pid}` once its Layer is
 * built. On stdin, `heap <id>` → `{"id", "heap": bytes used after a full GC}`; `stats <id>` →
 * `{"id", "calls": executed calls, "twice": calls executed more than once}`; `cpu <id>` →
 * `{"id", "cpu": CPU time used so far, user and system, in ms}`; `entities <id>` →
 * `{"id", "entities": entities active in this runner (of every type)}`; `profile <id>` starts a CPU
 * profile, `profile <id> <file>` writes it to `file` → `{"id", "profile": file}` (`--cpu-prof`).
 */
import { AgentCluster } from "@agentfx/cluster"
import * as ClusterPg from "@agentfx/cluster/ClusterPg"
import { Sharding } from "effect/cluster"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, Redacted } from "effect"
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { createInterface } from "node:readline"
import { fullGc } from "../measure.js"
import { benchAgent, benchModel, executions } from "./agent.js"
import { FloorLive } from "./floor.js"

const [url, port, settings] = process.argv.slice(2)
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`)
let activeEntities: Effect.Effect<number> = Effect.succeed(Number.NaN)
let profiler: Session | undefined

/** Starts a CPU profile, or (given `file`) writes the one started there and says so. */
const profile = async (id: string | undefined, file: string | undefined) => {
  if (file === undefined) {
    profiler = new Session()
    profiler.connect()
    await profiler.post("Profiler.enable")
    await profiler.post("Profiler.setSamplingInterval", { interval: 100 })
    await profiler.post("Profiler.start")
    return say({ id, profile: "started" })
  }
  const { profile } = await profiler!.post("Profiler.stop")
  profiler!.disconnect()
  writeFileSync(file, JSON.stringify(profile))
  say({ id, profile: file })
}

createInterface({ input: process.stdin }).on("line", (line) => {
  const [command, id, argument] = line.split(" ")
  if (command === "heap") {
    fullGc()
    say({ id, heap: process.memoryUsage().heapUsed })
  } else if (command === "cpu") {
    const { system, user } = process.cpuUsage()
    say({ id, cpu: (user + system) / 1000 })
  } else if (command === "stats") {
    say({ id, calls: executions.size, twice: [...executions.values()].filter((n) => n > 1).length })
  } else if (command === "entities") {
    void Effect.runPromise(activeEntities).then((entities) => say({ id, entities }))
  } else if (command === "profile") {
    void profile(id, argument)
  }
})

export const Bench = AgentCluster.make(benchAgent)

// runMain: a SIGTERM interrupts the runner, whose Layer then shuts down as a deploy would
NodeRuntime.runMain(Layer.launch(
  Layer.effectDiscard(Effect.map(Sharding.Sharding, (sharding) => {
    activeEntities = sharding.activeEntityCount
    say({ ready: process.pid })
  })).pipe(
    Layer.provideMerge(Layer.merge(AgentCluster.runner(Bench), FloorLive)),
    Layer.provide(benchModel),
    Layer.provide(ClusterPg.layer({
      url: Redacted.make(url!),
      runnerAddress: { host: "127.0.0.1", port: Number(port) },
      pollInterval: "1 second",
      ...(settings === "fast" ? { failover: { lockExpiration: "6 seconds", lockRefresh: "2 seconds" } } : {})
    }))
  )
))
