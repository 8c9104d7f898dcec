// Runs a worker tool from the compiled package under plain `node` (no tsx): the check behind
// "works from built JavaScript" in WorkerPool.test.ts. Needs `pnpm build` first.
// The import of the build is dynamic so that tsc does not resolve it while building.
import { Effect, Schema } from "effect"

const { Tool, ToolCallingManager, Toolkit, WorkerPool } = await import(
  new URL("../../dist/index.js", import.meta.url).href
)

const tool = (name, exportName, extra) =>
  Tool.make(name, {
    description: name,
    parameters: Schema.Struct({ text: Schema.String }),
    success: Schema.Unknown,
    isolation: "worker",
    module: new URL("./tools.mjs", import.meta.url),
    export: exportName,
    ...extra
  })

const program = Effect.gen(function*() {
  const toolkit = Toolkit.make(tool("shout", "default", {}), tool("spin", "spin", { timeout: "200 millis" }))
  yield* ToolCallingManager.executeBatch(toolkit, [{ id: "1", name: "shout", args: { text: "warm up" } }])
  const started = performance.now()
  const [spin] = yield* ToolCallingManager.executeBatch(toolkit, [{ id: "2", name: "spin", args: { text: "" } }])
  const elapsed = performance.now() - started
  const [shout] = yield* ToolCallingManager.executeBatch(toolkit, [{ id: "3", name: "shout", args: { text: "hi" } }])
  const stats = yield* Effect.flatMap(WorkerPool.WorkerPool, (pool) => pool.stats)
  return { spin: spin.error._tag, elapsed, shout: shout.value, stats, execArgv: process.execArgv }
}).pipe(Effect.provide(WorkerPool.layer({ size: 1 })))

console.log(JSON.stringify(await Effect.runPromise(program)))
