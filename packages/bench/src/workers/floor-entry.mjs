// The floor's worker, hand-written on raw `node:worker_threads`: one request at a time,
// `{ module, export, args }` → the export's return value. The module is imported on first use.
import { parentPort } from "node:worker_threads"

const modules = new Map()

parentPort.on("message", async ({ module, export: name, args }) => {
  let loading = modules.get(module)
  if (loading === undefined) modules.set(module, loading = import(module))
  parentPort.postMessage(await (await loading)[name](args))
})
