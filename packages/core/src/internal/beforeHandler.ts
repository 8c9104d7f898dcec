/**
 * The failures a call gets before its handler is called — refused by the agent's limits, a tool
 * the agent does not have, arguments its `parameters` reject — made here, and told apart here
 * from a handler's own (`failedBeforeHandler`: a `toolCalls` budget counts only calls whose
 * handler ran, decision 119). An outcome holds no more than its error, and a checkpoint keeps
 * only that: the error's words tell, so they are written in one place.
 */
import type { ToolFailure } from "../ToolError.js"

const notRunPrefix = "Not run: "
const unknownToolPrefix = (toolName: string) => `Unknown tool "${toolName}". `
const invalidArgumentsPrefix = (toolName: string) => `Invalid arguments for tool "${toolName}": `

/** A call the agent's limits refuse (`admit`): `Not run: <why>`. */
export const notRun = (why: string): string => `${notRunPrefix}${why}`

/** A call of a tool the agent does not have, naming those it has. */
export const unknownToolMessage = (toolName: string, available: ReadonlyArray<string>): string =>
  `${unknownToolPrefix(toolName)}Available tools: ${available.join(", ") || "none"}`

/** Arguments the tool's `parameters` reject, with what is wrong. */
export const invalidArgumentsMessage = (toolName: string, problem: string): string => `${invalidArgumentsPrefix(toolName)}${problem}`

/** Whether a call's failure is one of the above, its handler never called. */
export const failedBeforeHandler = (toolName: string, error: ToolFailure): boolean => {
  if (error._tag !== "ToolError" || error.reason !== "semantic") return false
  const message = error.message
  return message.startsWith(notRunPrefix) || message.startsWith(unknownToolPrefix(toolName)) ||
    message.startsWith(invalidArgumentsPrefix(toolName))
}
