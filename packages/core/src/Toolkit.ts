/**
 * A validated set of tools and the one metadata table that every part of the runtime reads.
 *
 * @since 0.1.0
 */
import type { Duration, JsonSchema, Schedule } from "effect"
import * as Data from "effect/Data"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as Pipeable from "effect/Pipeable"
import { validateRetryTimes, validateTimeout } from "./internal/options.js"
import { checkIsolation } from "./internal/workerTool.js"
import * as Tool from "./Tool.js"
import type { ToolFailure } from "./ToolError.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@agentfx/core/Toolkit")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * One row of the metadata table: a tool's options, checked and normalised once at assembly.
 * Executors, managers, gates and providers read these rows, never the raw tool options.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  readonly tool: Tool.Any
  readonly name: string
  readonly description: string
  /** JSON Schema of the parameters, as sent to model providers. */
  readonly parametersJsonSchema: JsonSchema.JsonSchema
  /** The tool's own timeout; `None` defers to the manager's `defaultTimeout`. */
  readonly timeout: Option.Option<Duration.Duration>
  /** Retries of transient failures (0 when the tool declares none). */
  readonly retryTimes: number
  /** Spacing of the retries; `None` retries immediately. */
  readonly retrySchedule: Option.Option<Schedule.Schedule<unknown, ToolFailure>>
  readonly serial: boolean
  readonly returnDirect: boolean
  /** Whether a call running at a crash may run again on recovery. */
  readonly idempotent: boolean
  /** Read by the default gate, with the call's decoded arguments. */
  readonly needsApproval: Tool.NeedsApproval<any, any>
  readonly tags: ReadonlyArray<string>
  /** In process, or in a worker of the `WorkerPool` (module checked to exist). */
  readonly isolation: Exclude<Tool.Isolation, { readonly _tag: "Invalid" }>
}

/**
 * A validated set of uniquely named tools. `R` is what their handlers need.
 *
 * @since 0.1.0
 * @category models
 */
export interface Toolkit<out R = never> extends Pipeable.Pipeable {
  readonly [TypeId]: { readonly _R: (_: never) => R }
  /** The metadata table, in declaration order. */
  readonly entries: ReadonlyMap<string, Entry>
}

/**
 * A toolkit whose tools need nothing, or whose requirements do not matter here.
 *
 * @since 0.1.0
 * @category models
 */
export interface Any extends Toolkit<any> {}

/**
 * The services a toolkit's handlers need.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Requirements<T> = T extends Toolkit<infer R> ? R : never

/**
 * Assembly refused: every offending tool and option is listed in `problems`.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { Toolkit } from "@agentfx/core"
 *
 * const checked = Toolkit.validate([])
 * if (Result.isFailure(checked)) console.error(checked.failure.problems)
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidToolkit extends Data.TaggedError("InvalidToolkit")<{
  readonly problems: ReadonlyArray<string>
}> {
  override get message(): string {
    return `Invalid toolkit (${this.problems.length} problem${this.problems.length === 1 ? "" : "s"}): ${
      this.problems.join("; ")
    }`
  }
}

const NamePattern = /^[a-zA-Z0-9_-]{1,64}$/

const Proto = {
  pipe() {
    return Pipeable.pipeArguments(this, arguments)
  }
}

const checkTool = (tool: Tool.Any): Result.Result<Entry, ReadonlyArray<string>> => {
  const problems: Array<string> = []
  const problem = (what: string) => problems.push(`tool "${tool.name}": ${what}`)
  if (!NamePattern.test(tool.name)) {
    problem("the name must match ^[a-zA-Z0-9_-]{1,64}$ (what model providers accept)")
  }
  let timeout = Option.none<Duration.Duration>()
  if (tool.timeout !== undefined) {
    Result.match(validateTimeout(tool.timeout), { onFailure: problem, onSuccess: (d) => timeout = Option.some(d) })
  }
  if (tool.retry !== undefined) {
    // JSON overrides (`Tool.overridesOf`) may carry a null
    if (typeof tool.retry !== "object" || tool.retry === null) problem(`retry ${String(tool.retry)} is not an object { times, schedule? }`)
    else Result.match(validateRetryTimes(tool.retry.times), { onFailure: problem, onSuccess: () => undefined })
  }
  if (typeof tool.needsApproval !== "boolean" && typeof tool.needsApproval !== "function") {
    problem("needsApproval must be a boolean or a function of the decoded arguments")
  }
  checkIsolation(tool.isolation).forEach(problem)
  let parametersJsonSchema: JsonSchema.JsonSchema | undefined
  try {
    parametersJsonSchema = Tool.parametersJsonSchema(tool)
    if (!("type" in parametersJsonSchema) || parametersJsonSchema.type !== "object") {
      problem("parameters must describe a JSON object (use Schema.Struct)")
    }
  } catch (error) {
    problem(`parameters have no JSON Schema: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (problems.length > 0 || parametersJsonSchema === undefined || tool.isolation._tag === "Invalid") {
    return Result.fail(problems)
  }
  return Result.succeed({
    tool,
    name: tool.name,
    description: tool.description,
    parametersJsonSchema,
    timeout,
    retryTimes: tool.retry?.times ?? 0,
    retrySchedule: Option.fromNullishOr(tool.retry?.schedule),
    serial: tool.serial,
    returnDirect: tool.returnDirect,
    idempotent: tool.idempotent,
    needsApproval: tool.needsApproval,
    tags: tool.tags,
    isolation: tool.isolation
  })
}

/**
 * Assembles tools into a toolkit, or refuses with one `InvalidToolkit` naming every offender:
 * duplicate names, names a provider would reject, timeouts that are not positive and finite
 * (0, negative, `Infinity`, unparsable strings), retry counts that are negative or not
 * integers, an approval rule that is neither a boolean nor a function, parameters that are not
 * a JSON object, a worker tool without a module, with a module that is not an existing file,
 * or with a handler.
 *
 * @example
 * ```ts
 * import { Effect, Result, Schema } from "effect"
 * import { Tool, Toolkit } from "@agentfx/core"
 *
 * const echo = Tool.make("echo", {
 *   description: "Echo a text",
 *   parameters: Schema.Struct({ text: Schema.String }),
 *   success: Schema.String,
 *   handler: ({ text }) => Effect.succeed(text)
 * })
 * const toolkit = Toolkit.validate([echo, echo]) // Left(InvalidToolkit: tool name "echo" is used by 2 tools)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const validate = <const Tools extends ReadonlyArray<Tool.Any>>(
  tools: Tools
): Result.Result<Toolkit<Tool.Requirements<Tools[number]>>, InvalidToolkit> => {
  const problems: Array<string> = []
  const counts = new Map<string, number>()
  for (const tool of tools) counts.set(tool.name, (counts.get(tool.name) ?? 0) + 1)
  for (const [name, count] of counts) {
    if (count > 1) problems.push(`tool name "${name}" is used by ${count} tools`)
  }
  const entries = new Map<string, Entry>()
  for (const tool of tools) {
    Result.match(checkTool(tool), {
      onFailure: (found) => problems.push(...found),
      onSuccess: (entry) => entries.set(entry.name, entry)
    })
  }
  return problems.length > 0
    ? Result.fail(new InvalidToolkit({ problems }))
    : Result.succeed(Object.assign(Object.create(Proto), { [TypeId]: TypeId, entries }))
}

/**
 * Assembles tools into a toolkit, like {@link validate}; throws its `InvalidToolkit` (a
 * tagged error naming every offender), so that a toolkit can be defined at module level.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool, Toolkit } from "@agentfx/core"
 *
 * const echo = Tool.make("echo", {
 *   description: "Echo a text",
 *   parameters: Schema.Struct({ text: Schema.String }),
 *   success: Schema.String,
 *   handler: ({ text }) => Effect.succeed(text)
 * })
 * const toolkit = Toolkit.make(echo)
 * console.log([...toolkit.entries.keys()]) // ["echo"]
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const Tools extends ReadonlyArray<Tool.Any>>(
  ...tools: Tools
): Toolkit<Tool.Requirements<Tools[number]>> => Result.getOrThrowWith(validate(tools), (error) => error)

/**
 * A toolkit with no tools: the model can only answer in text.
 *
 * @example
 * ```ts
 * import { Toolkit } from "@agentfx/core"
 *
 * Toolkit.empty.entries.size // 0
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Toolkit<never> = Object.assign(Object.create(Proto), {
  [TypeId]: TypeId,
  entries: new Map<string, Entry>()
})
