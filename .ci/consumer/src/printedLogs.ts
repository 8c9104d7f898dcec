/** Log lines as `log: <message>`, a port as PORT: what a server logs, comparable run to run. */
import { Logger } from "effect"

export const PrintedLogs = Logger.layer([
  Logger.make(({ message }) => console.log(`log: ${[message].flat().join(" ").replace(/:\d+\//g, ":PORT/")}`))
])
