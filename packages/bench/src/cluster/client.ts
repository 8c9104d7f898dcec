/**
 * A cold client-only process of the failover scenarios (built JS): `client.js <pg url> run <input>`
 * or `client.js <pg url> decide <run id>`. Prints `{"built": at}` once its cluster Layer is built,
 * `{"sent": at}` as it sends, then `{"reply": outcome, "at"}` (times: ms since the epoch) and exits.
 */
import { AgentCluster } from "@agentfx/cluster"
import * as ClusterPg from "@agentfx/cluster/ClusterPg"
import { Decision } from "@agentfx/core"
import { Effect, Redacted } from "effect"
import { benchAgent } from "./agent.js"

const [url, op, arg] = process.argv.slice(2)
const say = (value: unknown) => Effect.sync(() => process.stdout.write(`${JSON.stringify(value)}\n`))
const Bench = AgentCluster.make(benchAgent)

const program = Effect.gen(function*() {
  yield* say({ built: Date.now() })
  yield* say({ sent: Date.now() })
  const reply = op === "run"
    ? yield* AgentCluster.run(Bench, { input: arg! })
    : yield* AgentCluster.decide(Bench, arg!, Decision.approveAll(), { decidedBy: "cold client" })
  yield* say({ reply, at: Date.now() })
}).pipe(Effect.provide(ClusterPg.layerClient({ url: Redacted.make(url!) })))

Effect.runPromise(program as Effect.Effect<void, unknown>).then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
