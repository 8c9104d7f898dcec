/**
 * One scenario against one implementation, in its own `node --expose-gc` process:
 * `child.ts <A|B|C|D|E|W> <floor|agentfx> [--quick] [--inject=permit|fiber|terminate]`. Prints one JSON
 * line (a `ScenarioResult`) on stdout.
 */
import type { Impl, Inject } from "./impl.js"
import { scenarios } from "./scenarios.js"
import type { ImplId, ScenarioId } from "./workload.js"
import { config } from "./workload.js"

const [scenario, implId] = process.argv.slice(2) as [ScenarioId, ImplId]
const quick = process.argv.includes("--quick")
const inject = (process.argv.find((a) => a.startsWith("--inject="))?.slice("--inject=".length) ?? "none") as Inject

const impl: Impl = implId === "agentfx" ? (await import("./agentfx.js")).agentfx : (await import("./floor.js")).floor
const result = await scenarios[scenario](impl, config(quick), inject)
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0))
