/**
 * Reading a server's tool list (`tools/list`, every page, within a cap) and sorting its entries
 * into the tools agentfx can offer and the ones it leaves out, each with why.
 */
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import { PaginatedResultSchema, ToolSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import type { Connection } from "./connection.js"
import { describeError } from "./connection.js"

/** The most pages of `tools/list` read for one listing: a server that gives a next cursor for ever is refused. */
export const maxPages = 100

/** The most tools one listing takes: a server that lists more is refused. */
export const maxTools = 1000

const caps = `agentfx reads at most ${maxTools} tools in at most ${maxPages} pages`

/**
 * Every page of `tools/list`, its entries as the server sent them. Each page is parsed as a
 * page (an array of tools, a cursor), not entry by entry: one entry that is not a tool does
 * not fail the others (the SDK's `listTools` refuses the whole page, and fails it when one
 * output schema does not compile). Fails with a sentence past {@link maxPages} or {@link maxTools}.
 */
export const listAll = (connection: Connection): Effect.Effect<ReadonlyArray<unknown>, string> =>
  Effect.tryPromise({
    try: async (signal) => {
      const entries: Array<unknown> = []
      let cursor: string | undefined
      for (let pages = 0; pages < maxPages; pages++) {
        const page = await connection.client.request(
          { method: "tools/list", params: cursor === undefined ? {} : { cursor } },
          PaginatedResultSchema,
          // a signal of its own for each page: the SDK leaves its abort listener on the signal it is given
          { signal: AbortSignal.any([signal]) }
        )
        const tools: unknown = page.tools
        if (!Array.isArray(tools)) throw new Error(`page ${pages + 1} of tools/list has no array of tools`)
        if (entries.length + tools.length > maxTools) throw new Error(`the server lists more than ${maxTools} tools (${caps})`)
        entries.push(...tools)
        cursor = page.nextCursor
        if (cursor === undefined) return entries
      }
      throw new Error(`the server gives a next page after ${maxPages} pages of tools/list (${caps})`)
    },
    catch: describeError
  })

/** The tools of a listing agentfx can offer, every name the server lists (usable or not), and each tool left out with why. */
export interface Sorted {
  readonly usable: ReadonlyArray<McpTool>
  readonly names: ReadonlyArray<string>
  readonly leftOut: ReadonlyArray<string>
}

const nameOf = (entry: unknown): string | undefined =>
  typeof entry === "object" && entry !== null && "name" in entry && typeof entry.name === "string" ? entry.name : undefined

/**
 * Sorts a listing's entries: an entry that is not an MCP tool, a name listed more than once
 * (every tool of that name: which one a call would reach is the server's guess), and a tool
 * that runs only as an MCP task (`tools/call` refuses it) are left out.
 */
export const sort = (entries: ReadonlyArray<unknown>): Sorted => {
  const leftOut: Array<string> = []
  const tools: Array<McpTool> = []
  entries.forEach((entry, index) => {
    const parsed = ToolSchema.safeParse(entry)
    if (parsed.success) return void tools.push(parsed.data)
    const issues = parsed.error.issues.map((issue) => issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message)
    const name = nameOf(entry)
    leftOut.push(`${name === undefined ? `the tool at position ${index + 1}` : `tool "${name}"`} is left out: it is not an MCP tool (${issues.join("; ")})`)
  })
  const counts = new Map<string, number>()
  for (const tool of tools) counts.set(tool.name, (counts.get(tool.name) ?? 0) + 1)
  const usable = tools.filter((tool) => {
    const count = counts.get(tool.name)!
    if (count > 1) {
      if (tools.find((other) => other.name === tool.name) === tool) {
        leftOut.push(`tool "${tool.name}" is left out: the server lists ${count} tools with this name`)
      }
      return false
    }
    if (tool.execution?.taskSupport === "required") {
      leftOut.push(`tool "${tool.name}" is left out: it runs only as an MCP task (execution.taskSupport: "required"), which tools/call refuses`)
      return false
    }
    return true
  })
  const names = new Set(entries.map(nameOf).filter((name) => name !== undefined))
  return { usable, names: [...names], leftOut }
}
