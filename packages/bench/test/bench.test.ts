import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { agentfx } from "../src/agentfx.js"
import { floor } from "../src/floor.js"
import type { Inject } from "../src/impl.js"
import { Worker } from "node:worker_threads"
import type { ScenarioResult } from "../src/measure.js"
import { canCountThreads, Checks, expectRuns, median, stepMetrics, ticker } from "../src/measure.js"
import type { CancelSamples } from "../src/cancelReport.js"
import { cancelFigures, cancelVerdict } from "../src/cancelReport.js"
import type { Collected } from "../src/report.js"
import { figures } from "../src/report.js"
import { keptSections, section, withSection } from "../src/cluster/results.js"
import { references, scenarios } from "../src/scenarios.js"
import { agentfxCancelWays, cancelMetric, config, longLoopExpected } from "../src/workload.js"

/** A small configuration: the checks are the same, the sizes are not. */
const small = {
  ...config(true),
  aWarmup: 0,
  aReps: 1,
  bWarmup: 0,
  bReps: 2,
  timeouts: 40,
  dRuns: 4,
  dReps: 0,
  eWidths: [20, 60],
  eWarmup: 1,
  eReps: 1,
  ePermits: 8,
  kills: 2,
  wWarmup: 10,
  wCalls: 10,
  wReps: 1
}

/**
 * Scenario D's failed checks, from a fresh node process as `pnpm bench` runs it (the quick
 * sizes): its timer check counts every timer of the process, and in vitest's worker the runner
 * keeps timers of its own (pending RPC calls, throttled task updates) that come and go with the
 * machine's load.
 */
const failedChecks = (inject: Inject): ReadonlyArray<string> => {
  const output = execFileSync(
    process.execPath,
    ["--conditions=@agentfx/source", "--import", "tsx", fileURLToPath(new URL("../src/child.ts", import.meta.url)), "D", "agentfx", "--quick", `--inject=${inject}`],
    { cwd: fileURLToPath(new URL("../../..", import.meta.url)), encoding: "utf8", timeout: 60_000 }
  )
  const result = JSON.parse(output.trim().split("\n").at(-1)!) as ScenarioResult
  return result.checks.filter((check) => !check.ok).map((check) => check.name)
}

describe("S: cold start", () => {
  it("every side answers from a fresh process, and its modules are counted", async () => {
    const cold = { ...small, coldStarts: 1 }
    const floorRun = await scenarios.S(floor, cold, "none")
    const agentfxRun = await scenarios.S(agentfx, cold, "none")
    expect([...floorRun.checks, ...agentfxRun.checks].filter((check) => !check.ok)).toEqual([])
    expect(agentfxRun.samples.completedMs).toHaveLength(1)
    expect(agentfxRun.samples.effectImportMs).toHaveLength(1)
    // the floor imports nothing; agentfx loads effect and its own modules
    expect(floorRun.samples.modules![0]).toBeLessThan(5)
    expect(agentfxRun.samples.modules![0]).toBeGreaterThan(100)
  }, 120_000)
})

describe("measure", () => {
  it("median of odd and even samples", () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
  })

  it("stepMetrics: per step over the run, its first 10 and its last 10 steps", () => {
    const stamps = Array.from({ length: 21 }, (_, i) => (i <= 10 ? 2 * i : 20 + 4 * (i - 10)))
    expect(stepMetrics(stamps)).toEqual({ perStep: 60 / 20, first10: 2, last10: 4 })
  })

  it("ticker: a blocked main thread shows as a gap as long as the block", async () => {
    const tick = ticker(10)
    // real time is the point: the ticker measures the event loop's actual gaps
    await new Promise((resolve) => setTimeout(resolve, 30))
    const start = performance.now()
    while (performance.now() - start < 60) {
      // block the event loop
    }
    expect(tick.stop()).toBeGreaterThanOrEqual(60)
  })

  it("expectRuns names the first wrong run of each field", () => {
    const checks = new Checks()
    expectRuns(checks, "A", [longLoopExpected(3), { ...longLoopExpected(3), toolCalls: 2 }], () => longLoopExpected(3))
    expect(checks.list.map((check) => [check.name, check.ok, check.detail])).toEqual([
      ["A: text of 2 run(s)", true, "exact"],
      ["A: modelCalls of 2 run(s)", true, "exact"],
      ["A: toolCalls of 2 run(s)", false, "1 wrong, e.g. run 1: got 2, expected 3"]
    ])
  })
})

describe("report", () => {
  const onlyA = (agentfx: number, floor: number) =>
    ({
      A: {
        agentfx: { samples: { perStepUs: [agentfx] }, checks: [] },
        floor: { samples: { perStepUs: [floor] }, checks: [] }
      }
    }) as unknown as Collected
  const verdictOfA = (agentfx: number, floor: number) =>
    figures(config(false), onlyA(agentfx, floor)).find((f) => f.row.metric === "perStepUs")?.verdict

  it("A is judged by its ratio to the floor measured in the same run: at most 3×", () => {
    expect(verdictOfA(2.7, 0.9)).toBe("pass")
    expect(verdictOfA(3.6, 0.9)).toBe("**miss**")
    expect(verdictOfA(1.5, 0.4)).toBe("**miss**")
  })
})

describe("report: E", () => {
  const widths = { ...config(false), eWidths: [100, 1000] }
  /** E samples where a cancel costs `perCallUs(width)` per call, wall and CPU alike, for the floor and every agentfx way. */
  const samplesOf = (perCallUs: (width: number) => number): CancelSamples => {
    const of = (ways: ReadonlyArray<Parameters<typeof cancelMetric>[1]>) =>
      Object.fromEntries(ways.flatMap((way) =>
        widths.eWidths.flatMap((width) =>
          (["wallUs", "cpuUs"] as const).map((q) => [cancelMetric(q, way, width), [width * perCallUs(width)]] as const)
        )
      ))
    return { floor: { samples: of(["floor"]) }, agentfx: { samples: of(agentfxCancelWays) } }
  }

  it("linear when the CPU time per call at the widest batch is within 2× of the narrowest's", () => {
    const linear = cancelFigures(widths, samplesOf((width) => (width === 1000 ? 20 : 10)))
    expect(linear.map((f) => [f.way, f.cpuGrowth, f.linear, f.withinLimit])).toEqual([
      ["floor", 2, true, true],
      ["batch-unbounded", 2, true, true],
      ["batch-bounded", 2, true, true],
      ["run-unbounded", 2, true, true],
      ["run-bounded", 2, true, true],
      ["effect-alone", 2, true, true]
    ])
    expect(cancelVerdict(widths, samplesOf((width) => (width === 1000 ? 20 : 10)), [])).toBe("E met (linear, 1,000 calls within 100 ms, no leaks)")
  })

  it("a cost that grows with the square of the width is not linear; over 100 ms at 1,000 misses the issue's bound", () => {
    const quadratic = samplesOf((width) => width / 10) // 1,000 calls: 100 µs each, 100.0 ms in all
    expect(cancelFigures(widths, quadratic).map((f) => [f.cpuGrowth, f.linear, f.withinLimit])).toContainEqual([10, false, true])
    const slower = samplesOf((width) => width / 9.9)
    expect(cancelVerdict(widths, slower, [{ name: "E (run-bounded): no permit held (freePermits)", ok: false, detail: "39 free of 40" }])).toBe(
      "E **missed** (batch-unbounded not linear (CPU per call 10.00×), batch-unbounded over 100 ms at 1,000, batch-bounded not linear (CPU per call 10.00×), batch-bounded over 100 ms at 1,000, run-unbounded not linear (CPU per call 10.00×), run-unbounded over 100 ms at 1,000, run-bounded not linear (CPU per call 10.00×), run-bounded over 100 ms at 1,000, leaks)"
    )
  })
})

describe("scenarios", () => {
  for (const [name, impl] of [["floor", floor], ["agentfx", agentfx]] as const) {
    it(`${name}: A and B runs end with their exact call counts`, async () => {
      for (const scenario of ["A", "B"] as const) {
        const result = await scenarios[scenario](impl, small, "none")
        expect(result.checks.filter((check) => !check.ok)).toEqual([])
        expect(result.checks.length).toBe(3)
      }
    })
  }

  it("A and B's references (the floor's loop on Effect alone) end with their exact call counts, one figure per measured run", async () => {
    for (const [scenario, metric, reps] of [["A", "effectPerStepUs", small.aReps], ["B", "effectPerCallUs", small.bReps]] as const) {
      const result = await references[scenario]!(small)
      expect(result.checks.filter((check) => !check.ok)).toEqual([])
      expect(result.checks.map((check) => check.name).every((name) => name.endsWith("(Effect alone)"))).toBe(true)
      expect(Object.keys(result.samples)).toEqual([metric])
      expect(result.samples[metric]!.length).toBe(reps)
      expect(result.samples[metric]!.every((us) => us > 0)).toBe(true)
    }
  })

  for (const [name, impl] of [["floor", floor], ["agentfx", agentfx]] as const) {
    it(`${name}: E cancels every batch, every started call's finalizer runs, no permit held, no live fiber`, async () => {
      const result = await scenarios.E(impl, small, "none")
      expect(result.checks.filter((check) => !check.ok)).toEqual([])
      const ways = name === "floor" ? ["floor" as const] : agentfxCancelWays
      expect(Object.keys(result.samples).sort()).toEqual(
        ways.flatMap((way) => small.eWidths.flatMap((width) => [cancelMetric("wallUs", way, width), cancelMetric("cpuUs", way, width)])).sort()
      )
      expect(result.checks.map((check) => check.name)).toContain(`E (${ways[0]}): every started call's finalizer ran`)
      if (name === "agentfx") {
        expect(result.checks.map((check) => [check.name, check.detail])).toContainEqual(["E (run-bounded): no live fiber (started − ended)", "2 rounds"])
      }
    }, 30_000)
  }

  it("E: a permit held outside the rounds fails the bounded ways' checks", async () => {
    const failed = (await scenarios.E(agentfx, small, "permit")).checks.filter((check) => !check.ok)
    expect(failed.map((check) => [check.name, check.detail])).toEqual([
      ["E (batch-bounded): calls holding their resource at the cancel", "7 of 8 expected at width 20, round 1"],
      ["E (batch-bounded): no permit held (freePermits)", "7 free of 8 at width 20, round 1"],
      ["E (run-bounded): calls holding their resource at the cancel", "7 of 8 expected at width 20, round 1"],
      ["E (run-bounded): no permit held (freePermits)", "7 free of 8 at width 20, round 1"]
    ])
  }, 30_000)

  it("E: a fiber left running by a handler fails the fiber check of every way", async () => {
    const failed = (await scenarios.E(agentfx, small, "fiber")).checks.filter((check) => !check.ok)
    expect(failed.map((check) => [check.name, check.detail])).toEqual(
      agentfxCancelWays.map((way) => [`E (${way}): no live fiber (started − ended)`, "1 live at width 20, round 1"])
    )
  }, 30_000)

  it("D: no leak is reported when there is none", () => {
    expect(failedChecks("none")).toEqual([])
  }, 60_000)

  it("D: a call holding its permit forever fails the permit check", () => {
    expect(failedChecks("permit")).toContain("D: no leaked permits (exactly `permits` latched calls start at once)")
  }, 60_000) // the probe waits 2 s for the permits that never come

  it("D: a fiber left running fails the fiber check", () => {
    expect(failedChecks("fiber")).toContain("D: no live fibers (started − ended)")
  }, 60_000)

  for (const [name, impl] of [["floor", floor], ["agentfx", agentfx]] as const) {
    it(`${name}: W kills end by their deadline, the next call is served, no thread is left`, async () => {
      const result = await scenarios.W(impl, small, "none")
      expect(result.checks.filter((check) => !check.ok)).toEqual([])
      expect(result.checks.map((check) => check.name)).toContain("W: kills that ended by their deadline (ToolTimeout)")
      expect(result.samples.overshootMs).toHaveLength(small.kills)
      expect(result.samples.roundTripUs).toHaveLength(small.wReps)
    }, 30_000)

    it.runIf(canCountThreads)(`${name}: W a worker whose terminate() is skipped fails the thread checks`, async () => {
      const terminate = Worker.prototype.terminate
      const failed = (await scenarios.W(impl, small, "terminate")).checks.filter((check) => !check.ok).map((c) => c.name)
      expect(failed).toEqual([
        "W: no worker live right after each kill (pool stats / exit events)",
        "W: no extra OS thread 100 ms after each kill (/proc/self/task)",
        "W: extra OS threads once every worker is closed"
      ])
      expect(Worker.prototype.terminate).toBe(terminate) // put back
    }, 30_000)
  }
})

describe("RESULTS.md's kept sections", () => {
  it("pnpm bench --write keeps the last run on Effect 3 and the cluster bench's section, in the file's order; nothing else", () => {
    const file = [
      "# results", "old figures",
      "<!-- bench:effect3 -->", "v3 table", "<!-- /bench:effect3 -->",
      "more old figures",
      "<!-- bench:cluster -->", "cluster table", "<!-- /bench:cluster -->",
      "## Measured elsewhere"
    ].join("\n")
    expect(keptSections(file)).toBe("<!-- bench:effect3 -->\nv3 table\n<!-- /bench:effect3 -->\n\n<!-- bench:cluster -->\ncluster table\n<!-- /bench:cluster -->")
    expect(keptSections("# results\nno sections")).toBe("")
    expect(withSection(file, section("new cluster", "cluster"))).toContain("<!-- bench:cluster -->\nnew cluster\n<!-- /bench:cluster -->")
  })
})
