/**
 * One scenario against one implementation, in its own `node --expose-gc` process:
 * `child.ts <A|B|C|D|E|W> <floor|agentfx|aisdk|effectai> [--quick] [--inject=permit|fiber|terminate] [--reference]`.
 * `--reference` (A, B): the scenario's reference instead, the floor's loop on Effect alone.
 * `aisdk`, `effectai` (A, B, C): a peer (`src/peers/`), at the peer's sizes.
 * Prints one JSON line (a `ScenarioResult`) on stdout.
 */
import type { Inject } from "./impl.js"
import { peerScenario, references, scenarios } from "./scenarios.js"
import type { ImplId, PeerId, ScenarioId } from "./workload.js"
import { config } from "./workload.js"

const [scenario, implId] = process.argv.slice(2) as [ScenarioId, ImplId | PeerId]
const quick = process.argv.includes("--quick")
const inject = (process.argv.find((a) => a.startsWith("--inject="))?.slice("--inject=".length) ?? "none") as Inject

const reference = process.argv.includes("--reference") ? references[scenario] : undefined
const peer = implId === "aisdk"
  ? (await import("./peers/aiSdk.js")).aiSdk
  : implId === "effectai"
  ? (await import("./peers/effectAi.js")).effectAi
  : undefined
const result = peer !== undefined
  ? await peerScenario(scenario, peer, config(quick))
  : reference !== undefined
  ? await reference(config(quick))
  : await scenarios[scenario](
    implId === "agentfx" ? (await import("./agentfx.js")).agentfx : (await import("./floor.js")).floor,
    config(quick),
    inject
  )
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0))
