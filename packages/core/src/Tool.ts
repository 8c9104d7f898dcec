/**
 * A tool: a named, schema-typed Effect that a model can call.
 *
 * @since 0.1.0
 */
import type { Duration, Schedule } from "effect"
import * as Effect from "effect/Effect"
import type * as JsonSchema from "effect/JsonSchema"
import * as Pipeable from "effect/Pipeable"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { HandlerKey } from "./internal/handler.js"
import { jsonSchemaOf } from "./internal/jsonForm.js"
import { isolationOf, workerHandler } from "./internal/workerTool.js"
import type { FilePart } from "./Part.js"
import type { ToolError, ToolFailure } from "./ToolError.js"
import type { WorkerPool } from "./WorkerPool.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@agentfx/core/Tool")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * What a handler knows about the call it is serving.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallContext {
  /** The model's id for this call; tool results are keyed by it. */
  readonly callId: string
  /** The tool's name. */
  readonly toolName: string
  /** 1 for the first attempt, 2 for the first retry, … */
  readonly attempt: number
  /**
   * The run state (the agent's slots) as it was when the batch started: every call of a
   * batch sees the same snapshot, whatever the manager. Empty outside an agent run.
   */
  readonly state: { readonly [slot: string]: unknown }
}

/**
 * @since 0.1.0
 * @category type ids
 */
export const OutputTypeId: unique symbol = Symbol.for("@agentfx/core/Tool/Output")

/**
 * A handler's value together with writes to the run state and files for the model. Build it
 * with {@link output}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Output<out A> {
  readonly [OutputTypeId]: typeof OutputTypeId
  readonly value: A
  readonly writes: { readonly [slot: string]: unknown }
  readonly files: ReadonlyArray<FilePart>
}

/**
 * Returns `value` with `writes` to the agent's state slots, and `files` (images, documents)
 * the model is shown beside the value. Writes are folded at the end of the batch, in call
 * order, by each slot's reducer; a write to a slot the agent does not declare turns the call
 * into a `semantic` failure. Files are held to the agent's `limits.fileBytes` (a larger inline
 * file, or one that is not a file, makes the call a `semantic` failure naming it); they reach
 * the model in each provider's own shape (`docs/providers.md`). Outside an agent run
 * (`ToolCallingManager.call`) writes and files are dropped.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Part, Tool } from "@agentfx/core"
 *
 * const addNote = Tool.make("add_note", {
 *   description: "Remembers a note",
 *   parameters: Schema.Struct({ note: Schema.String }),
 *   success: Schema.String,
 *   handler: ({ note }) => Effect.succeed(Tool.output("noted", { writes: { notes: [note] } }))
 * })
 *
 * const screenshot = Tool.make("screenshot", {
 *   description: "Takes a screenshot of the page",
 *   parameters: Schema.Struct({ url: Schema.String }),
 *   success: Schema.String,
 *   handler: ({ url }) =>
 *     Effect.succeed(Tool.output(`the page at ${url}`, { files: [Part.image({ data: new Uint8Array([137, 80, 78, 71]) })] }))
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const output = <A>(
  value: A,
  options: { readonly writes?: { readonly [slot: string]: unknown }; readonly files?: ReadonlyArray<FilePart> }
): Output<A> => ({
  [OutputTypeId]: OutputTypeId,
  value,
  writes: options.writes ?? {},
  files: options.files ?? []
})

/**
 * True for a value built with {@link output}.
 *
 * @example
 * ```ts
 * import { Tool } from "@agentfx/core"
 *
 * Tool.isOutput(Tool.output(1, { writes: { total: 1 } })) // true
 * Tool.isOutput(1) // false
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const isOutput = (u: unknown): u is Output<unknown> =>
  typeof u === "object" && u !== null && OutputTypeId in u

/**
 * Retry policy for `transient` failures (timeouts included). `times` bounds the number of
 * retries; `schedule`, when given, spaces them (e.g. `Schedule.exponential("100 millis")`).
 * Without a schedule, retries follow each other immediately. A retried tool must be
 * idempotent: the interrupted attempt may have had effects outside the process.
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryPolicy {
  readonly times: number
  readonly schedule?: Schedule.Schedule<unknown, ToolFailure>
}

/**
 * What an approval rule knows about the call: its id, the tool's name and the run state.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApprovalContext {
  readonly callId: string
  readonly toolName: string
  readonly state: { readonly [slot: string]: unknown }
}

/**
 * Whether a call needs a person's approval before it runs: always (`true`), never (`false`),
 * or decided per call from its **decoded** arguments. The default gate asks it; arguments that
 * fail to decode never reach it (the model gets a `semantic` error instead).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { Tool } from "@agentfx/core"
 *
 * const largeTransfers: Tool.NeedsApproval<{ readonly amount: number }> = ({ amount }) => Effect.succeed(amount > 100)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type NeedsApproval<Params, R = never> =
  | boolean
  | ((args: Params, context: ApprovalContext) => Effect.Effect<boolean, never, R>)

/**
 * The options every tool accepts, whatever runs its work.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import type { Tool } from "@agentfx/core"
 *
 * const common: Tool.CommonOptions<{ readonly n: number }, { readonly n: number }, number, number> = {
 *   description: "Sums 0..n-1",
 *   parameters: Schema.Struct({ n: Schema.Number }),
 *   success: Schema.Number,
 *   timeout: "1 second"
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface CommonOptions<Params, ParamsEncoded, Success, SuccessEncoded, RA = never> {
  /** What the tool does, for the model. */
  readonly description: string
  /** The arguments the model must send; decoded before the gate and the handler. Must describe a JSON object. */
  readonly parameters: Schema.Codec<Params, ParamsEncoded>
  /** The handler's result; encoded into what the model sees. */
  readonly success: Schema.Codec<Success, SuccessEncoded>
  /**
   * Deadline for one attempt of the handler (not the wait for a permit or a worker, not
   * gates, not middleware). Beats the manager's `defaultTimeout`. Must be positive and finite.
   * In process, it interrupts the handler's fiber: async work (timers, `fetch` given the
   * `AbortSignal` of `Effect.tryPromise`, child fibers) is stopped and finalizers run;
   * synchronous code that never yields is not stopped — use `isolation: "worker"`, where the
   * timeout terminates the worker.
   */
  readonly timeout?: Duration.Input
  /** Retries of `transient` failures (timeouts included). */
  readonly retry?: RetryPolicy
  /** `true`: any batch containing this tool runs sequentially, whatever the manager. */
  readonly serial?: boolean
  /** `true`: when every call of a batch is return-direct, their results end the turn. */
  readonly returnDirect?: boolean
  /**
   * `true`: running a call twice does no more than running it once. A call that was running
   * when its process crashed runs again on recovery only then; otherwise the model is told it
   * was cancelled (`docs/persistence.md`).
   */
  readonly idempotent?: boolean
  /**
   * What the model is told when the handler dies (throws, or `Effect.die`): by default only
   * that the tool failed unexpectedly — a defect's message may hold paths or secrets; `true`:
   * the defect's message too (never its stack). The full cause always goes to the log.
   */
  readonly exposeDefects?: boolean
  /**
   * Whether the default gate pauses the run for a person's approval before a call runs:
   * `true`, `false` (the default), or a rule over the decoded arguments.
   */
  readonly needsApproval?: NeedsApproval<Params, RA>
  /** Free-form labels for gates, middleware and filtering. */
  readonly tags?: ReadonlyArray<string>
}

/**
 * The options a caller sets on tools made by someone else (an MCP server's, an `@effect/ai`
 * toolkit's): what `Tool.make` takes for them, with approval as a plain yes or no.
 *
 * @example
 * ```ts
 * import type { Tool } from "@agentfx/core"
 *
 * const overrides: { readonly [tool: string]: Tool.Overrides } = {
 *   search: { timeout: "10 seconds", retry: { times: 2 } },
 *   delete_file: { needsApproval: true, serial: true }
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Overrides {
  readonly timeout?: Duration.Input
  readonly retry?: RetryPolicy
  readonly needsApproval?: boolean
  readonly serial?: boolean
  readonly returnDirect?: boolean
  readonly idempotent?: boolean
}

/**
 * The override options that are set, and only them, whatever else the object holds: ready to
 * spread into `Tool.make`'s options.
 *
 * @example
 * ```ts
 * import { Tool } from "@agentfx/core"
 *
 * const fromJson = JSON.parse(`{ "timeout": "2 seconds", "extra": 1 }`) as Tool.Overrides
 * Tool.overridesOf(fromJson) // { timeout: "2 seconds" }
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const overridesOf = ({ idempotent, needsApproval, retry, returnDirect, serial, timeout }: Overrides): Overrides => ({
  ...(timeout === undefined ? {} : { timeout }),
  ...(retry === undefined ? {} : { retry }),
  ...(needsApproval === undefined ? {} : { needsApproval }),
  ...(serial === undefined ? {} : { serial }),
  ...(returnDirect === undefined ? {} : { returnDirect }),
  ...(idempotent === undefined ? {} : { idempotent })
})

/**
 * Everything `Tool.make` accepts for a tool whose handler runs in process.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "@agentfx/core"
 *
 * const options: Tool.Options<{ readonly text: string }, { readonly text: string }, string, string, never> = {
 *   description: "Echo a text",
 *   parameters: Schema.Struct({ text: Schema.String }),
 *   success: Schema.String,
 *   handler: ({ text }) => Effect.succeed(text)
 * }
 * const echo = Tool.make("echo", options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Params, ParamsEncoded, Success, SuccessEncoded, R, RA = never>
  extends CommonOptions<Params, ParamsEncoded, Success, SuccessEncoded, RA>
{
  /** Where the handler runs; `"in-process"` (the default) is the only choice for a handler. */
  readonly isolation?: "in-process"
  /**
   * The tool's work: the success value, or `Tool.output(value, { writes })` to write run
   * state. Its requirements `R` become requirements of whatever runs the tool. It is run
   * by the runtime only (the loop, `ToolCallingManager.call`, `executeBatch`), so the
   * tool's timeout and retries always apply.
   */
  readonly handler: (args: Params, context: CallContext) => Effect.Effect<Success | Output<Success>, ToolError, R>
}

/**
 * Everything `Tool.make` accepts for a tool that runs in a worker thread of the
 * `WorkerPool`. Its work is a plain function exported by `module`:
 * `(args: ParamsEncoded, context: CallContext) => SuccessEncoded | Promise<SuccessEncoded>`.
 * It receives the **encoded** arguments and returns the **encoded** result, which is decoded
 * with `success`. A timeout or an interruption terminates the worker (see `docs/workers.md`).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Tool } from "@agentfx/core"
 *
 * const Params = Schema.Struct({ n: Schema.Number })
 * // crunch.worker.ts: export const sum = ({ n }: typeof Params.Encoded) => n * (n - 1) / 2
 * const options: Tool.WorkerOptions<{ readonly n: number }, { readonly n: number }, number, number> = {
 *   description: "Sums 0..n-1",
 *   parameters: Params,
 *   success: Schema.Number,
 *   timeout: "1 second",
 *   isolation: "worker",
 *   module: Tool.workerModule(import.meta.url, "./crunch.worker"),
 *   export: "sum"
 * }
 * const crunch = Tool.make("crunch", options)
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface WorkerOptions<Params, ParamsEncoded, Success, SuccessEncoded, RA = never>
  extends CommonOptions<Params, ParamsEncoded, Success, SuccessEncoded, RA>
{
  readonly isolation: "worker"
  /**
   * The module that exports the function: a `file:` URL (`new URL("./x.worker.ts",
   * import.meta.url)`, or {@link workerModule}) or an absolute path. A `.ts` module needs `tsx`
   * installed; built `.js` needs nothing. Checked to exist by `Toolkit.make`.
   */
  readonly module: URL | string
  /** The export to call; `"default"` unless given. */
  readonly export?: string
  /** A worker tool has no handler: its module's export is the handler. */
  readonly handler?: never
}

/**
 * Where a tool's work runs, as normalised by {@link make}: in process, in a worker (with the
 * module as a `file:` URL string, or as given when it is not one), or an invalid combination
 * of options that `Toolkit.make` refuses with `problem`.
 *
 * @example
 * ```ts
 * import { Tool } from "@agentfx/core"
 *
 * const where = (tool: Tool.Any) => tool.isolation._tag === "Worker" ? `worker (${tool.isolation.module})` : "in process"
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Isolation =
  | { readonly _tag: "InProcess" }
  | { readonly _tag: "Worker"; readonly module: string; readonly export: string }
  | { readonly _tag: "Invalid"; readonly problem: string }

/**
 * A tool: its options as declared. Its work is not a public property: a tool runs through
 * the runtime (an agent run, `ToolCallingManager.call`, `ToolCallingManager.executeBatch`),
 * so that its arguments are decoded and its timeout and retries apply on every path.
 * `Toolkit.make` (or `Agent.make`) validates every option.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool<out Name extends string, in out Params, in out Success, out R = never>
  extends Pipeable.Pipeable
{
  readonly [TypeId]: TypeId
  readonly name: Name
  readonly description: string
  readonly parameters: Schema.Codec<Params, any>
  readonly success: Schema.Codec<Success, any>
  readonly timeout: Duration.Input | undefined
  readonly retry: RetryPolicy | undefined
  readonly serial: boolean
  readonly returnDirect: boolean
  readonly idempotent: boolean
  readonly exposeDefects: boolean
  readonly needsApproval: NeedsApproval<Params, R>
  readonly tags: ReadonlyArray<string>
  readonly isolation: Isolation
  /** @internal */
  readonly [HandlerKey]: (args: Params, context: CallContext) => Effect.Effect<Success | Output<Success>, ToolError, R>
}

/**
 * Any tool, whatever its types.
 *
 * @since 0.1.0
 * @category models
 */
export interface Any extends Tool<string, any, any, any> {}

/**
 * The services a tool's handler needs.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Requirements<T> = T extends Tool<any, any, any, infer R> ? R : never

/**
 * The decoded arguments of a tool.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Parameters<T> = T extends Tool<any, infer P, any, any> ? P : never

/**
 * The decoded success value of a tool.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Success<T> = T extends Tool<any, any, infer A, any> ? A : never

/**
 * `R`, but never inferred from where the tool goes: a `Tool.make` written inline in
 * `Agent.make({ tools: [...] })` is contextually typed by `Tool.Any`, whose `any` would otherwise
 * win over the handler's requirements (issue 26, decision 057). Resolves to `R` itself.
 */
type Inferred<R> = [R] extends [infer X extends R] ? X : never

const Proto = {
  [TypeId]: TypeId,
  pipe() {
    return Pipeable.pipeArguments(this, arguments)
  }
}

/**
 * Defines a tool. Options are checked when the tool is assembled (`Toolkit.make`,
 * `Agent.make`).
 *
 * With a `handler`, the tool runs in process. With `isolation: "worker"` and a `module`,
 * its work is the module's exported function, run in a worker of the `WorkerPool` (which
 * the tool then requires): a timeout or an interruption terminates the worker.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "@agentfx/core"
 *
 * const getWeather = Tool.make("get_weather", {
 *   description: "Current weather for a city",
 *   parameters: Schema.Struct({ city: Schema.String }),
 *   success: Schema.String,
 *   timeout: "2 seconds",
 *   retry: { times: 2 },
 *   handler: ({ city }) => Effect.succeed(`Sunny in ${city}`)
 * })
 *
 * const transfer = Tool.make("transfer", {
 *   description: "Sends money",
 *   parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
 *   success: Schema.String,
 *   needsApproval: ({ amount }) => Effect.succeed(amount > 100), // small transfers run at once
 *   handler: ({ to, amount }) => Effect.succeed(`sent ${amount} to ${to}`)
 * })
 *
 * // crunch.worker.ts: export default ({ n }: { n: number }) => { let s = 0; for (let i = 0; i < n; i++) s += i; return s }
 * const crunch = Tool.make("crunch", {
 *   description: "Sums 0..n-1",
 *   parameters: Schema.Struct({ n: Schema.Number }),
 *   success: Schema.Number,
 *   timeout: "1 second",
 *   isolation: "worker",
 *   module: new URL("./crunch.worker.ts", import.meta.url)
 * }) // Tool<"crunch", { n: number }, number, WorkerPool>
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: {
  <const Name extends string, Params, ParamsEncoded, Success, SuccessEncoded, RA = never>(
    name: Name,
    options: WorkerOptions<Params, ParamsEncoded, Success, SuccessEncoded, RA>
  ): Tool<Name, Params, Success, WorkerPool | Inferred<RA>>
  <const Name extends string, Params, ParamsEncoded, Success, SuccessEncoded, R = never, RA = never>(
    name: Name,
    options: Options<Params, ParamsEncoded, Success, SuccessEncoded, R, RA>
  ): Tool<Name, Params, Success, Inferred<R | RA>>
} = (
  name: string,
  options: Options<any, any, any, any, any, any> | WorkerOptions<any, any, any, any, any>
): Any => {
  const isolation = isolationOf(options)
  return Object.assign(Object.create(Proto), {
    name,
    description: options.description,
    parameters: options.parameters,
    success: options.success,
    timeout: options.timeout,
    retry: options.retry,
    serial: options.serial ?? false,
    returnDirect: options.returnDirect ?? false,
    idempotent: options.idempotent ?? false,
    exposeDefects: options.exposeDefects ?? false,
    needsApproval: options.needsApproval ?? false,
    tags: options.tags ?? [],
    isolation,
    [HandlerKey]: options.isolation === "worker"
      ? workerHandler(options.parameters, options.success, isolation)
      : options.handler
  })
}

/**
 * The `file:` URL of a worker module next to the calling module, with the caller's own file
 * extension: `workerModule(import.meta.url, "./crunch.worker")` is `crunch.worker.ts` when the
 * caller runs as `.ts` (tsx, vitest) and `crunch.worker.js` once both are compiled, so one
 * source line serves both. (`new URL("./crunch.worker.ts", import.meta.url)` keeps `.ts`
 * after compilation.)
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Tool } from "@agentfx/core"
 *
 * const crunch = Tool.make("crunch", {
 *   description: "Sums 0..n-1",
 *   parameters: Schema.Struct({ n: Schema.Number }),
 *   success: Schema.Number,
 *   isolation: "worker",
 *   module: Tool.workerModule(import.meta.url, "./crunch.worker")
 * })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const workerModule = (base: string | URL, specifier: string): URL => {
  const url = new URL(base)
  const extension = /\.[^./]+$/.exec(url.pathname)?.[0] ?? ""
  return new URL(`${specifier}${extension}`, url)
}

/**
 * The JSON Schema of a tool's parameters: what a model provider is sent. A schema annotated
 * with its own `jsonSchema` (e.g. an MCP server's, with its `$defs`) is sent as is. Otherwise it
 * is Effect's JSON Schema (draft 2020-12) of the schema's JSON form — what arguments are decoded
 * with (`Schema.toCodecJson`): objects are closed (`additionalProperties: false`), a
 * `Schema.optional` field also takes `null`, a `Schema.Number` also takes the strings
 * `"NaN"`, `"Infinity"` and `"-Infinity"` (use `Schema.Finite` for plain numbers), and definitions
 * are inlined under `$defs` (decision 121).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "@agentfx/core"
 *
 * const echo = Tool.make("echo", {
 *   description: "Echo a text",
 *   parameters: Schema.Struct({ text: Schema.String }),
 *   success: Schema.String,
 *   handler: ({ text }) => Effect.succeed(text)
 * })
 * Tool.parametersJsonSchema(echo) // { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false }
 * ```
 *
 * @since 0.1.0
 * @category accessors
 */
export const parametersJsonSchema = (tool: Any): JsonSchema.JsonSchema => {
  const own = SchemaAST.resolve(tool.parameters.ast)?.jsonSchema
  return typeof own === "object" && own !== null ? own as JsonSchema.JsonSchema : jsonSchemaOf(tool.parameters)
}

/**
 * Yields to the event loop through a macrotask (`setImmediate`), so that timers — and with
 * them a tool's deadline — can fire. Put it between slices of CPU-bound work in an
 * in-process tool to make it interruptible. On Effect 4, `Effect.yieldNow` yields through a
 * macrotask too (its scheduler's `setImmediate`), so either will do; this one does not depend
 * on the scheduler in context (see `docs/timeouts.md`). Costs about 8 µs.
 * For code you cannot slice, use `isolation: "worker"`: the deadline terminates the worker.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "@agentfx/core"
 *
 * const crunch = Tool.make("crunch", {
 *   description: "Sums a large range",
 *   parameters: Schema.Struct({ n: Schema.Number }),
 *   success: Schema.Number,
 *   timeout: "1 second",
 *   handler: ({ n }) =>
 *     Effect.gen(function*() {
 *       let sum = 0
 *       for (let i = 0; i < n; i++) {
 *         sum += i
 *         if (i % 100_000 === 0) yield* Tool.yieldToEventLoop
 *       }
 *       return sum
 *     })
 * })
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const yieldToEventLoop: Effect.Effect<void> = Effect.callback<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})
