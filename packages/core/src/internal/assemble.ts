/**
 * Assembling an agent: every option checked, every problem named, the tools' metadata table
 * and the model's view of it built once.
 */
import * as Context from "effect/Context"
import * as Result from "effect/Result"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { Agent, Options, Slots, TypeId } from "../Agent.js"
import { InvalidAgent } from "../AgentError.js"
import type * as Budget from "../Budget.js"
import type { ModelSettings, ToolChoice, ToolDefinition } from "../ChatModel.js"
import * as ContextWindow from "../ContextWindow.js"
import * as Gate from "../Gate.js"
import * as Slot from "../Slot.js"
import * as Tool from "../Tool.js"
import * as Toolkit from "../Toolkit.js"
import { defaultLimits, type Limits } from "./admit.js"
import type { Layers } from "./observe.js"
import { fixedTokens } from "./contextView.js"
import { jsonSchemaOf } from "./jsonForm.js"
import { conversationBusyProblem } from "./options.js"

const NamePattern = /^[\w.:-]{1,128}$/

/** The shortest checkpoint secret: 32 bytes, the HMAC-SHA256 block's half (NIST SP 800-107 key strength). */
const MinSecretBytes = 32

const levels = ["turn", "iteration", "model", "tool"] as const

/** What is wrong with model settings (an agent's or a run's), each problem named under `label`. */
export const settingsProblems = (settings: ModelSettings, label: string): Array<string> => {
  const problems: Array<string> = []
  const { maxOutputTokens, parallelToolCalls, stop, temperature, topP } = settings
  if (temperature !== undefined && !(temperature >= 0 && temperature <= 2)) problems.push(`${label}.temperature ${temperature} is not between 0 and 2`)
  if (topP !== undefined && !(topP > 0 && topP <= 1)) problems.push(`${label}.topP ${topP} is not in (0, 1]`)
  if (maxOutputTokens !== undefined && !(Number.isInteger(maxOutputTokens) && maxOutputTokens > 0)) {
    problems.push(`${label}.maxOutputTokens ${maxOutputTokens} is not a positive integer`)
  }
  if (stop !== undefined && !(Array.isArray(stop) && stop.every((s) => typeof s === "string" && s.length > 0))) {
    problems.push(`${label}.stop must be non-empty strings`)
  }
  if (parallelToolCalls !== undefined && typeof parallelToolCalls !== "boolean") problems.push(`${label}.parallelToolCalls must be a boolean`)
  return problems
}

const budgetLimits: ReadonlyArray<Budget.Limit> = ["tokens", "inputTokens", "outputTokens", "modelCalls", "toolCalls"]

/** What is wrong with a budget (an agent's, a run's, or a `continue` decision's raise), under `label`. */
export const budgetProblems = (budget: Budget.Budget | undefined, label: string): Array<string> => {
  if (budget === undefined) return []
  if (typeof budget !== "object" || budget === null) return [`${label} must be an object of limits (${budgetLimits.join(", ")})`]
  return Object.entries(budget).flatMap(([name, value]: [string, unknown]) =>
    !budgetLimits.includes(name as Budget.Limit)
      ? [`${label}.${name} is not a limit (${budgetLimits.join(", ")})`]
      : value === undefined || (Number.isInteger(value) && (value as number) > 0)
      ? []
      : [`${label}.${name} ${typeof value === "string" ? JSON.stringify(value) : String(value)} is not a positive integer`]
  )
}

/** What is wrong with a tool choice (an agent's or a run's): it must be one of the literals, or `{ tool }` naming one of `toolNames`. */
export const toolChoiceProblems = (toolChoice: ToolChoice, toolNames: ReadonlyArray<string>): Array<string> =>
  toolChoice === "auto" || toolChoice === "none" || toolChoice === "required" ||
    (typeof toolChoice === "object" && toolChoice !== null && toolNames.includes(toolChoice.tool))
    ? []
    : [`toolChoice ${JSON.stringify(toolChoice)} must be "auto", "none", "required" or { tool } naming one of the agent's tools`]

const policies = ["Full", "Trim", "Summarize"]

/**
 * What is wrong with a context policy — an agent's (`owner: "agent"`), a run's or a
 * checkpoint's (`"run"`: no summary model, which a checkpoint cannot keep) — under `label`.
 * `fixed`: the tokens every model call sends besides its messages, which `maxTokens` must pass.
 */
export const contextProblems = (policy: unknown, label: string, fixed: number, owner: "agent" | "run"): Array<string> => {
  const tag = typeof policy === "object" && policy !== null ? (policy as { readonly _tag?: unknown })._tag : undefined
  if (typeof tag !== "string" || !policies.includes(tag)) {
    return [`${label} must be ContextWindow.full, ContextWindow.trim({ maxTokens }) or ContextWindow.summarize({ maxTokens, … })`]
  }
  if (tag === "Full") return []
  const { instructions, keepLast, maxTokens, model } = policy as Partial<ContextWindow.Summarize<unknown>>
  const problems: Array<string> = []
  if (!(Number.isInteger(maxTokens) && maxTokens! > 0)) problems.push(`${label}.maxTokens ${String(maxTokens)} is not a positive integer`)
  else if (fixed >= maxTokens!) {
    problems.push(`${label}.maxTokens ${maxTokens} leaves no room for messages: the system prompt and tool definitions alone are about ${fixed} tokens`)
  }
  if (tag === "Trim") return problems
  if (!(Number.isInteger(keepLast) && keepLast! >= 0)) problems.push(`${label}.keepLast ${String(keepLast)} is not a non-negative integer`)
  if (typeof instructions !== "string" || instructions.trim().length === 0) problems.push(`${label}.instructions must be a non-empty string`)
  if (model !== undefined && owner === "run") {
    problems.push(`${label}.model cannot be set for one run (a run's policy is kept in its checkpoint, a model service is not): name the summary model on the agent`)
  } else if (model !== undefined && !Context.isKey(model)) problems.push(`${label}.model must be the Context.Service key of a ChatModel service`)
  return problems
}

const outputOf = <A, I>(schema: Schema.Codec<A, I>, retries: number, problems: Array<string>) => {
  if (!Number.isInteger(retries) || retries < 0) problems.push(`outputRetries ${retries} is not a non-negative integer`)
  if (!Schema.isSchema(schema)) {
    problems.push("output must be a Schema")
    return undefined
  }
  const format = jsonSchemaOf(schema)
  if (format.type !== "object") problems.push("output must describe a JSON object (use Schema.Struct)")
  return { schema, format: { name: "final_answer", schema: format }, retries }
}

/** What the model is told of a tool. */
const definitionOf = (entry: Toolkit.Entry): ToolDefinition => ({ name: entry.name, description: entry.description, parameters: entry.parametersJsonSchema })

/** See `Agent.validate`. */
export const assemble = (
  options: Options<ReadonlyArray<Tool.Any>, Slots, unknown, unknown, unknown, unknown, unknown>
): Result.Result<Omit<Agent<Slots, unknown, unknown>, TypeId>, InvalidAgent> => {
  const problems: Array<string> = []
  const name = options.name ?? "agent"
  if (typeof name !== "string" || !NamePattern.test(name)) problems.push(`name ${JSON.stringify(name)} must match ${NamePattern.source}`)
  const tools = options.tools ?? []
  const notTools = tools.flatMap((tool, i) => typeof tool === "object" && tool !== null && Tool.TypeId in tool ? [] : [i + 1])
  if (notTools.length > 0) problems.push(`tools #${notTools.join(", #")} are not tools (use Tool.make or Agent.toTool)`)
  const toolkit = notTools.length > 0 ? Result.succeed(Toolkit.empty) : Toolkit.validate(tools)
  if (Result.isFailure(toolkit)) problems.push(...toolkit.failure.problems)
  const maxIterations = options.maxIterations ?? 10
  if (!Number.isInteger(maxIterations) || maxIterations < 1) {
    problems.push(`maxIterations ${maxIterations} is not a positive integer`)
  }
  const onEnvironmentError = options.onEnvironmentError ?? "report"
  if (onEnvironmentError !== "report" && onEnvironmentError !== "pause") {
    problems.push(`onEnvironmentError ${JSON.stringify(onEnvironmentError)} must be "report" or "pause"`)
  }
  const limits: Limits = { ...defaultLimits, ...options.limits }
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 1 || (name === "depth" && value > 1000)) {
      problems.push(`limits.${name} ${value} is not ${name === "depth" ? "an integer from 1 to 1000" : "a positive integer"}`)
    }
  }
  const output = options.output === undefined ? undefined : outputOf(options.output, options.outputRetries ?? 2, problems)
  if (output !== undefined && tools.some((tool) => tool?.name === output.format.name)) {
    problems.push(`tool name "${output.format.name}" is reserved for the final answer of an agent with an output schema (adapters may send it as a tool)`)
  }
  const toolChoice = options.toolChoice ?? "auto"
  problems.push(...toolChoiceProblems(toolChoice, tools.map((tool) => tool.name)), ...settingsProblems(options.settings ?? {}, "settings"), ...budgetProblems(options.budget, "budget"))
  const context = options.context ?? ContextWindow.full
  const fixed = fixedTokens({
    system: options.system,
    tools: Result.isSuccess(toolkit) ? [...toolkit.success.entries.values()].map(definitionOf) : [],
    output: output?.format
  })
  problems.push(...contextProblems(context, "context", fixed, "agent"))
  const onConversationBusy = options.onConversationBusy ?? "fail"
  const busy = conversationBusyProblem(options.onConversationBusy)
  if (busy !== undefined) problems.push(busy)
  const slots = options.slots ?? ({} as Slots)
  for (const [slotName, slot] of Object.entries(slots)) {
    if (!/^[A-Za-z_][\w-]{0,63}$/.test(slotName)) problems.push(`slot name ${JSON.stringify(slotName)} is not an identifier`)
    if (typeof slot !== "object" || slot === null || !(Slot.TypeId in slot)) {
      problems.push(`slot "${slotName}" is not a Slot (use Slot.last, Slot.append, Slot.sum or Slot.make)`)
    }
  }
  if (options.gate !== undefined && typeof options.gate !== "function") problems.push("gate must be a function")
  if (
    options.checkpointSecret !== undefined &&
    (!Redacted.isRedacted(options.checkpointSecret) ||
      Buffer.byteLength(`${Redacted.value(options.checkpointSecret)}`, "utf8") < MinSecretBytes)
  ) {
    problems.push(`checkpointSecret must be a Redacted string of at least ${MinSecretBytes} bytes`)
  }
  const middleware = options.middleware ?? []
  middleware.forEach((m, i) => {
    for (const level of levels) {
      if (m[level] !== undefined && typeof m[level] !== "function") problems.push(`middleware #${i + 1}: ${level} must be a function`)
    }
  })
  if (problems.length > 0 || Result.isFailure(toolkit)) return Result.fail(new InvalidAgent({ problems }))
  const entries = [...toolkit.success.entries.values()]
  const layer = <L extends typeof levels[number]>(level: L) =>
    middleware.flatMap((m) => m[level] === undefined ? [] : [m[level]!]) as unknown as Layers[L]
  return Result.succeed({
    name,
    toolkit: toolkit.success,
    system: options.system,
    maxIterations,
    gate: options.gate ?? Gate.needsApproval,
    onEnvironmentError,
    onConversationBusy,
    limits,
    budget: options.budget,
    settings: options.settings ?? {},
    toolChoice,
    output,
    slots,
    checkpointSecret: options.checkpointSecret,
    middleware: { turn: layer("turn"), iteration: layer("iteration"), model: layer("model"), tool: layer("tool") },
    context,
    toolDefinitions: entries.map(definitionOf),
    toolNames: entries.map((entry) => entry.name)
  })
}
