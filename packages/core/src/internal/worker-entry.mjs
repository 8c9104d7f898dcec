// The entry of every pooled worker (see internal/workerPool.ts for the other side).
//
// Plain JavaScript on purpose: a `.ts` entry fails under tsx and vitest ("Unknown file
// extension"), and loading `effect` here would cost 120–400 ms per spawn. A tool module
// written in TypeScript is loaded after registering tsx's ESM hooks (the app's own `tsx`,
// found from here); a `.js`/`.mjs` module needs nothing.
//
// Protocol (typed in workerProtocol.ts; one request at a time, answered with its `id`):
//   main → worker  { id, kind: "load", module, export }
//                  { id, kind: "call", module, export, args, context }
//   worker → main  { id, kind: "loaded" } | { id, kind: "load-failed", error }
//                  { id, kind: "returned", value } | { id, kind: "threw", error }
//   error = { name, message, stack }
import { parentPort } from "node:worker_threads"

const TypeScript = /\.[cm]?tsx?$/

/** @type {Promise<void> | undefined} */
let tsxRegistered
const registerTsx = () =>
  tsxRegistered ??= import("tsx/esm/api").then(
    ({ register }) => {
      register()
    },
    (cause) => {
      throw new Error(
        `a TypeScript worker module needs tsx, which cannot be loaded: ${
          cause instanceof Error ? cause.message : String(cause)
        }. Install tsx, or point \`module\` at built JavaScript.`
      )
    }
  )

/** @type {Map<string, Promise<Record<string, unknown>>>} */
const modules = new Map()
const load = (href) => {
  let loading = modules.get(href)
  if (loading === undefined) {
    const ready = TypeScript.test(new URL(href).pathname) ? registerTsx() : Promise.resolve()
    loading = ready.then(() => import(href))
    modules.set(href, loading)
  }
  return loading
}

const exported = async (href, name) => {
  const namespace = await load(href)
  const fn = namespace[name]
  if (typeof fn !== "function") {
    throw new TypeError(
      name in namespace
        ? `its export "${name}" is a ${typeof fn}, not a function`
        : `it has no export "${name}" (exports: ${Object.keys(namespace).join(", ") || "none"})`
    )
  }
  return fn
}

const describe = (error) =>
  error instanceof Error
    ? { name: error.name, message: error.message, stack: error.stack ?? "" }
    : { name: "thrown value", message: String(error), stack: "" }

const post = (message) => {
  try {
    parentPort.postMessage(message)
  } catch (error) {
    // The value cannot be cloned (a function, a class instance with private state, …).
    parentPort.postMessage({
      id: message.id,
      kind: "threw",
      error: describe(new TypeError(`its result cannot be sent to the main thread: ${describe(error).message}`))
    })
  }
}

parentPort.on("message", async (request) => {
  if (request.kind === "load") {
    try {
      await exported(request.module, request.export)
      post({ id: request.id, kind: "loaded" })
    } catch (error) {
      post({ id: request.id, kind: "load-failed", error: describe(error) })
    }
    return
  }
  let fn
  try {
    fn = await exported(request.module, request.export)
  } catch (error) {
    post({ id: request.id, kind: "load-failed", error: describe(error) })
    return
  }
  try {
    const value = await fn(request.args, request.context)
    post({ id: request.id, kind: "returned", value })
  } catch (error) {
    post({ id: request.id, kind: "threw", error: describe(error) })
  }
})
