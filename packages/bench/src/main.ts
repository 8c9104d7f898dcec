/**
 * `pnpm bench [--quick] [--only=A,C] [--no-peers] [--write | --out=path] [--inject=permit|fiber|terminate]`:
 * builds the packages (`tsc -b`), then runs every scenario on the built JavaScript — what users
 * run — in fresh `node --expose-gc` processes (no tsx), alternating the floor and agentfx; in A,
 * B and C each peer (the AI SDK's `generateText`, effect/ai's `Chat`) too, in processes of its
 * own after agentfx's, each round (`--no-peers` leaves them out).
 * Prints a summary; writes RESULTS.md only when asked (`--write`, or `--out=path` for another
 * file), so a run leaves the work tree as it was. Exits non-zero when a process fails or any
 * check (exact call counts, leaks) fails — never because of a time. `--inject` plants a leak, to
 * see the leak checks fail: `permit` or `fiber` in agentfx's scenarios D and E, `terminate` (a
 * worker's thread outlives its kill) on both sides of scenario W.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import { fileURLToPath } from "node:url"
import type { ScenarioResult } from "./measure.js"
import type { Collected, Environment } from "./report.js"
import { keptSections } from "./cluster/results.js"
import { allChecks, markdown, summary } from "./report.js"
import { references } from "./scenarios.js"
import type { ImplId, PeerId, ScenarioId } from "./workload.js"
import { config as configOf, peerIds, peerScenarios, scenarioIds } from "./workload.js"

const args = process.argv.slice(2)
const quick = args.includes("--quick")
const only = args.find((a) => a.startsWith("--only="))?.slice("--only=".length).split(",") as Array<ScenarioId> | undefined
const out = args.find((a) => a.startsWith("--out="))?.slice("--out=".length) ??
  (args.includes("--write") ? fileURLToPath(new URL("../RESULTS.md", import.meta.url)) : undefined)
const inject = args.find((a) => a.startsWith("--inject="))
const withPeers = !args.includes("--no-peers")
const config = configOf(quick)
/** Processes per scenario and implementation; their samples are pooled. */
const rounds = quick ? 1 : 3

const child = fileURLToPath(new URL("./child.js", import.meta.url))
const started = performance.now()
const loadAtStart = os.loadavg()

const runChild = (scenario: ScenarioId, impl: ImplId | PeerId, reference = false): ScenarioResult => {
  const result = spawnSync(
    process.execPath,
    ["--expose-gc", child, scenario, impl, ...(quick ? ["--quick"] : []), ...(inject ? [inject] : []), ...(reference ? ["--reference"] : [])],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 180_000, maxBuffer: 64 * 1024 * 1024 }
  )
  const line = result.stdout?.trim().split("\n").at(-1)
  if (result.status !== 0 || line === undefined || line === "") {
    const why = result.error?.message ?? (result.signal !== null ? `killed by ${result.signal}` : `exit code ${result.status}`)
    return { samples: {}, checks: [{ name: `${scenario}: ${impl} process completed`, ok: false, detail: why }] }
  }
  return JSON.parse(line) as ScenarioResult
}

const collected: Partial<Collected> = {}
let processes = 0
for (const scenario of only ?? scenarioIds) {
  const empty = () => ({ samples: {} as Record<string, Array<number>>, checks: [] as Array<ScenarioResult["checks"][number]> })
  const peers = withPeers && peerScenarios.includes(scenario) ? peerIds : []
  const sides: Collected[ScenarioId] = { floor: empty(), agentfx: empty(), ...Object.fromEntries(peers.map((peer) => [peer, empty()])) }
  for (let round = 0; round < rounds; round++) {
    // A and B's reference (the floor's loop on Effect alone) runs in a process of its own, reported on agentfx's side;
    // each peer in a process of its own, reported on its own side
    const runs: ReadonlyArray<readonly [ImplId | PeerId, boolean]> = [
      ["floor", false],
      ["agentfx", false],
      ...(scenario in references ? [["agentfx", true] as const] : []),
      ...peers.map((peer) => [peer, false] as const)
    ]
    for (const [impl, reference] of runs) {
      process.stderr.write(`scenario ${scenario}, ${reference ? "Effect alone" : impl}, round ${round + 1}/${rounds}\n`)
      const result = runChild(scenario, impl, reference)
      processes++
      const side = sides[impl]!
      for (const [metric, values] of Object.entries(result.samples)) {
        ;(side.samples[metric] ??= []).push(...values)
      }
      side.checks.push(...result.checks)
    }
  }
  collected[scenario] = sides
}

const checks = allChecks(collected)
const failed = checks.filter((check) => !check.ok)
process.stdout.write(`${summary(config, collected)}\n`)
if (quick) process.stdout.write("(--quick: few repetitions, so times are rough; only the checks decide the exit code)\n")
for (const check of failed) process.stdout.write(`FAILED ${check.impl}: ${check.name} — ${check.detail}\n`)
process.stdout.write(`${checks.length - failed.length}/${checks.length} checks passed (exact call counts, leaks)\n`)

if (out !== undefined) {
  const require = createRequire(import.meta.url)
  const versionOf = (pkg: string) => (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), "utf8")) as { version: string }).version
  const git = (...gitArgs: Array<string>) => execFileSync("git", gitArgs, { encoding: "utf8" }).trim()
  const env: Environment = {
    date: new Date().toISOString(),
    command: `pnpm bench${args.length > 0 ? ` ${args.join(" ")}` : ""}`,
    cpu: os.cpus()[0]?.model ?? "unknown CPU",
    cores: os.cpus().length,
    memoryGb: os.totalmem() / 2 ** 30,
    loadAverage: loadAtStart.map((l) => l.toFixed(2)).join(" / "),
    node: process.versions.node,
    effect: versionOf("effect"),
    ai: versionOf("ai"),
    commit: `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain", "--", "packages/core").length > 0 ? " (core modified)" : ""}`,
    durationS: (performance.now() - started) / 1000,
    processes
  }
  const kept = existsSync(out) ? keptSections(readFileSync(out, "utf8")) : ""
  writeFileSync(out, markdown(config, collected as Collected, env, kept))
  process.stdout.write(`wrote ${out}\n`)
}
process.exitCode = failed.length > 0 ? 1 : 0
