/**
 * What the loop accepts of a model's tool calls, before they enter the history: unique ids,
 * arguments within the agent's limits, a batch no wider than its limit. A call beyond a limit
 * is answered with a `semantic` error naming the limit (the model can try otherwise) and its
 * arguments are not kept — a hostile value must not break every later turn of the conversation.
 */
import type { ToolCall } from "../ToolCall.js"
import type { ToolError } from "../ToolError.js"
import { semantic } from "../ToolError.js"

/** The limits a run holds the model's calls to. */
export interface Limits {
  /** How deeply arguments (and results) may nest: objects and arrays within each other. */
  readonly depth: number
  /** The largest arguments of one call, in bytes of their JSON. */
  readonly argumentBytes: number
  /** The most calls of one batch that run; the others are answered with an error. */
  readonly batchWidth: number
}

/** The defaults: far beyond what a model sends in earnest, far below what breaks a run. */
export const defaultLimits: Limits = { depth: 64, argumentBytes: 1_048_576, batchWidth: 128 }

/**
 * The nesting depth of a JSON-like value, counted without recursion, so that a hostile value
 * cannot overflow the stack; counting stops past `limit` (the result is then `limit + 1`).
 */
export const depthOf = (value: unknown, limit: number): number => {
  let deepest = 0
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!
    if (typeof current !== "object" || current === null) continue
    if (depth + 1 > limit) return limit + 1
    if (depth + 1 > deepest) deepest = depth + 1
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1])
    }
  }
  return deepest
}

/** Why a call's arguments are refused, if they are. */
const argumentsProblem = (args: unknown, limits: Limits): string | undefined => {
  if (depthOf(args, limits.depth) > limits.depth) return `its arguments nest deeper than ${limits.depth} levels`
  const bytes = Buffer.byteLength(JSON.stringify(args) ?? "", "utf8")
  if (bytes > limits.argumentBytes) return `its arguments are ${bytes} bytes of JSON, more than the ${limits.argumentBytes} allowed`
  return undefined
}

/** A call id not taken yet: the model's, or, for a repeated or empty one, the next free `<id>_<n>`. */
const uniqueId = (id: string, index: number, taken: Set<string>) => {
  const base = id === "" ? `call_${index}` : id
  let candidate = base
  for (let n = 2; taken.has(candidate); n++) candidate = `${base}_${n}`
  taken.add(candidate)
  return candidate
}

/**
 * The calls as the history keeps them — each with a unique id (a repeated id gets a
 * deterministic suffix: two calls are never answered by one result, nor decided by one
 * decision), arguments beyond the limits replaced by `{}` — and the error each refused call
 * gets instead of running.
 */
export const admit = (calls: ReadonlyArray<ToolCall>, limits: Limits) => {
  const taken = new Set<string>()
  const refused = new Map<string, ToolError>()
  const admitted = calls.map((call, index): ToolCall => {
    const id = uniqueId(call.id, index, taken)
    if (index >= limits.batchWidth) {
      refused.set(id, semantic(`Not run: a batch runs at most ${limits.batchWidth} calls; call fewer tools at once`))
      return { id, name: call.name, args: {} }
    }
    const problem = argumentsProblem(call.args, limits)
    if (problem !== undefined) {
      refused.set(id, semantic(`Not run: ${problem} (the agent's limit); send smaller arguments`))
      return { id, name: call.name, args: {} }
    }
    return id === call.id ? call : { ...call, id }
  })
  return { calls: admitted, refused }
}
