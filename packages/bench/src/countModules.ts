/**
 * `node --import ./countModules.js …`: counts the ES modules the process loads (a `load` hook
 * on the loader thread posts each URL here) and prints `{"modules":n}` as its last line at
 * exit. The hook slows loading, so a counted process is never a timed one.
 */
import { register } from "node:module"
import { MessageChannel } from "node:worker_threads"

const { port1, port2 } = new MessageChannel()
let modules = 0
port1.on("message", () => modules++)
port1.unref()
const hook = "let port; export const initialize = (data) => { port = data.port }; " +
  "export const load = (url, context, next) => { port.postMessage(0); return next(url, context) }"
register(`data:text/javascript,${encodeURIComponent(hook)}`, { data: { port: port2 }, transferList: [port2] })
process.on("exit", () => process.stdout.write(`${JSON.stringify({ modules })}\n`))
