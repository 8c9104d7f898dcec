/**
 * What the loop accepts of a model's tool calls, before they enter the history: unique ids,
 * arguments within the agent's limits, a batch no wider than its limit. A call beyond a limit
 * is answered with a `semantic` error naming the limit (the model can try otherwise) and its
 * arguments are not kept — a hostile value must not break every later turn of the conversation.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { type FilePart, FilePart as FilePartSchema, inlineBytes } from "../Part.js"
import type { ToolCall } from "../ToolCall.js"
import type { ToolError } from "../ToolError.js"
import { semantic } from "../ToolError.js"
import { notRun } from "./beforeHandler.js"
import { capped, describeParseError } from "./parseError.js"

/** The limits a run holds the model's calls to. */
export interface Limits {
  /** How deeply arguments (and results) may nest: objects and arrays within each other. */
  readonly depth: number
  /** The largest arguments of one call, in bytes of their JSON. */
  readonly argumentBytes: number
  /** The most calls of one batch that run; the others are answered with an error. */
  readonly batchWidth: number
  /** The largest file held inline (base64) in a message — a person's input, a tool's result — in bytes it decodes to. */
  readonly fileBytes: number
}

/** The defaults: far beyond what a model sends in earnest, far below what breaks a run. */
export const defaultLimits: Limits = { depth: 64, argumentBytes: 1_048_576, batchWidth: 128, fileBytes: 20_971_520 }

/**
 * The nesting depth of a JSON-like value; counting stops past `limit` (the result is then
 * `limit + 1`), so that the recursion is never deeper than the limit — a hostile value cannot
 * overflow the stack. Limits are at most 1000 (`Agent.make` checks), far below the stack's.
 */
export const depthOf = (value: unknown, limit: number): number => {
  if (typeof value !== "object" || value === null) return 0
  if (limit < 1) return 1
  let deepest = 0
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (typeof child !== "object" || child === null) continue
    const depth = depthOf(child, limit - 1)
    if (depth > deepest) deepest = depth
    if (deepest >= limit) return limit + 1
  }
  return deepest + 1
}

/**
 * A bound of a value's JSON length without writing it: every string counted as if each of its
 * characters needed the longest escape (`\u0000`, 6 bytes). Under the limit, the value is;
 * above it, its JSON is measured.
 */
const upperBound = (value: unknown): number => {
  if (typeof value === "string") return 6 * value.length + 2
  if (typeof value !== "object" || value === null) return 24
  let total = 2
  if (Array.isArray(value)) for (const item of value) total += upperBound(item) + 1
  else for (const key in value) total += 6 * key.length + 3 + upperBound((value as { readonly [key: string]: unknown })[key]) + 1
  return total
}

/** Why a value is refused: beyond a limit of the agent's (`limit`), or not readable as JSON. */
export interface Refusal {
  readonly problem: string
  readonly limit: boolean
}

/**
 * Why a value is refused, if it is: deeper than `limits.depth`, more than
 * `limits.argumentBytes` of JSON, or not readable as JSON at all (a `BigInt` in a large value,
 * a getter that throws: what a model adapter of one's own may hand over). `what` names it in
 * the message ("its arguments", a model's call; "the edited arguments", "the reply", a
 * person's decision).
 */
export const limitProblem = (value: unknown, limits: Limits, what: string): Refusal | undefined => {
  try {
    if (depthOf(value, limits.depth) > limits.depth) return { problem: `${what} nest deeper than ${limits.depth} levels`, limit: true }
    if (upperBound(value) <= limits.argumentBytes) return undefined
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? "", "utf8")
    return bytes > limits.argumentBytes
      ? { problem: `${what} are ${bytes} bytes of JSON, more than the ${limits.argumentBytes} allowed`, limit: true }
      : undefined
  } catch (error) {
    return { problem: `${what} cannot be read as JSON: ${capped(error instanceof Error ? error.message : String(error))}`, limit: false }
  }
}

/**
 * The model's id, each `/` made `_`: a delegate's calls are named `<parent id>/<child id>` in
 * pauses and decisions, so a model's `d1/m1` would be decided with a child's.
 */
const ownId = (id: string) => (id.includes("/") ? id.replaceAll("/", "_") : id)

/** A call id not taken yet: the model's, or, for one the conversation or this answer used already, or an empty one, the next free `<id>_<n>`. */
const uniqueId = (id: string, index: number, taken: Set<string>) => {
  const base = id === "" ? `call_${index}` : id
  let candidate = base
  for (let n = 2; taken.has(candidate); n++) candidate = `${base}_${n}`
  taken.add(candidate)
  return candidate
}

/**
 * The calls as the history keeps them — each with an id unique in the conversation (`taken`: the
 * ids used so far, to which theirs are added; an id used already, in this answer or an earlier
 * turn, gets a deterministic suffix, a `/` becomes `_`: two calls are never answered by one
 * result, nor decided by one decision, a delegate's child's included, and a provider never sees
 * one id twice), arguments beyond the limits replaced by `{}` — and the error each refused call
 * gets instead of running.
 */
export const admit = (
  calls: ReadonlyArray<ToolCall>,
  limits: Limits,
  taken: Set<string>
): { readonly calls: ReadonlyArray<ToolCall>; readonly refused: ReadonlyMap<string, ToolError> | undefined } => {
  let refused: Map<string, ToolError> | undefined
  const refuse = (id: string, call: ToolCall, why: string): ToolCall => {
    ;(refused ??= new Map()).set(id, semantic(notRun(why)))
    return { id, name: call.name, args: {} }
  }
  const admitted = calls.map((call, index): ToolCall => {
    const id = uniqueId(ownId(call.id), index, taken)
    if (index >= limits.batchWidth) return refuse(id, call, `a batch runs at most ${limits.batchWidth} calls; call fewer tools at once`)
    const refusal = limitProblem(call.args, limits, "its arguments")
    if (refusal !== undefined) {
      return refuse(id, call, refusal.limit ? `${refusal.problem} (the agent's limit); send smaller arguments` : `${refusal.problem}; send JSON arguments`)
    }
    return id === call.id ? call : { ...call, id }
  })
  return { calls: admitted, refused }
}

const isFile = Schema.is(FilePartSchema)

/**
 * Why a file is refused, if it is: not a file part (a bad media type, base64 or URL), or more
 * than `limits.fileBytes` inline. `what` names it in the message ("input part 2").
 */
export const fileProblem = (file: FilePart, limits: Limits, what: string): string | undefined => {
  if (!isFile(file)) return `${what} is not a file: ${fileShapeProblem(file)}`
  const bytes = inlineBytes(file)
  return bytes > limits.fileBytes
    ? `${what} (${file.mediaType}) is ${bytes} bytes inline, more than the ${limits.fileBytes} allowed (limits.fileBytes)`
    : undefined
}

/** What is wrong with a value that is not a file part, cut short (it may quote megabytes of data). */
const fileShapeProblem = (value: unknown): string =>
  Result.match(Schema.decodeUnknownResult(FilePartSchema)(value, { errors: "first", reportInput: true }), {
    onFailure: (error) => capped(describeParseError(error)),
    onSuccess: () => "it is one"
  })
