/**
 * Gates decide, per tool call and before anything of the batch runs, whether the call
 * proceeds, is rejected, is answered in its place, or needs a person.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type { JsonValue } from "./Json.js"
import type * as Tool from "./Tool.js"
import type { ToolCall } from "./ToolCall.js"
import type * as Toolkit from "./Toolkit.js"

/**
 * A gate's verdict on one call: run it (`Proceed`), ask a person (`Pause`, with `why`,
 * shown to the person), do not run it (`Reject`, the model is shown `"rejected: <message>"`),
 * or answer in its place (`Reply`).
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * const describe = Gate.match({
 *   Proceed: () => "runs",
 *   Pause: ({ why }) => `asks a person: ${why ?? "no reason given"}`,
 *   Reject: ({ message }) => `rejected: ${message ?? "no reason"}`,
 *   Reply: ({ value }) => `answered with ${JSON.stringify(value)}`
 * })
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict = Data.TaggedEnum<{
  Proceed: {}
  Pause: { readonly why?: string | undefined }
  Reject: { readonly message?: string | undefined }
  Reply: { readonly value: JsonValue }
}>

const Verdict = Data.taggedEnum<Verdict>()

/**
 * Pattern-matches a verdict on its tag.
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * declare const verdict: Gate.Verdict
 * const runs = Gate.match(verdict, { Proceed: () => true, Pause: () => false, Reject: () => false, Reply: () => false })
 * ```
 *
 * @since 0.1.0
 * @category pattern matching
 */
export const match = Verdict.$match

/**
 * A type guard for one kind of verdict.
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * declare const verdict: Gate.Verdict
 * if (Gate.is("Reject")(verdict)) console.log(verdict.message)
 * ```
 *
 * @since 0.1.0
 * @category guards
 */
export const is = Verdict.$is

/**
 * What a gate sees of a call: its tool's name, the call as the model sent it (`call.args`
 * encoded), the tool's metadata row, its arguments **decoded** with the tool's `parameters`
 * (`args`), and the run state. A call whose tool is unknown or whose arguments do not decode never reaches a gate:
 * the model gets a `semantic` error for it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Input<Name extends string = string, Args = unknown> {
  /** The tool's name (what to narrow on: `if (input.name === "transfer") input.args.amount`). */
  readonly name: Name
  readonly call: ToolCall & { readonly name: Name }
  readonly args: Args
  readonly tool: Toolkit.Entry
  readonly state: { readonly [slot: string]: unknown }
}

/**
 * The input of a gate for one of `Tools`: a union discriminated by `call.name`, with each
 * tool's decoded argument type.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Gate, Tool } from "@agentfx/core"
 *
 * const transfer = Tool.make("transfer", {
 *   description: "Sends money",
 *   parameters: Schema.Struct({ amount: Schema.Number }),
 *   success: Schema.String,
 *   handler: ({ amount }) => Effect.succeed(`sent ${amount}`)
 * })
 * const gate = (input: Gate.InputOf<typeof transfer>) => input.args.amount > 100 ? Gate.pause() : Gate.proceed()
 * ```
 *
 * @since 0.1.0
 * @category type-level
 */
export type InputOf<T extends Tool.Any> = T extends Tool.Tool<infer Name, infer Params, any, any> ? Input<Name, Params> : never

/**
 * A gate. Gates run serially, in call order, before any call of the batch executes; they
 * are outside every tool timeout. `I` is what it is given (`Input`, or `InputOf` the agent's
 * tools for typed arguments).
 *
 * @since 0.1.0
 * @category models
 */
export type Gate<R = never, I = Input> = (input: I) => Effect.Effect<Verdict, never, R>

const proceeding: Effect.Effect<Verdict> = Effect.succeed(Verdict.Proceed())
const pausing: Effect.Effect<Verdict> = Effect.succeed(Verdict.Pause({}))

/**
 * Run the call.
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * const allowAll: Gate.Gate = () => Gate.proceed()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const proceed = (): Effect.Effect<Verdict> => proceeding

/**
 * A person must decide: the run exits with `Paused { kind: "approval" }` before any call
 * of the batch runs. `why` tells the person why (an approval inbox shows it): it is
 * recorded with the call in the run's record, and is the pending call's `why`.
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * const askForEverything: Gate.Gate = () => Gate.pause()
 * const bigTransfers: Gate.Gate = (input) =>
 *   input.name === "transfer" ? Gate.pause({ why: "every transfer is checked by a person" }) : Gate.proceed()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const pause = (options?: { readonly why?: string | undefined }): Effect.Effect<Verdict> =>
  options?.why === undefined ? pausing : Effect.succeed(Verdict.Pause({ why: options.why }))

/**
 * Do not run the call; the model is shown `"rejected: <message>"` (or `"rejected"`).
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * const noDeletes: Gate.Gate = ({ call }) =>
 *   call.name === "delete_file" ? Gate.reject({ message: "deleting is not allowed" }) : Gate.proceed()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const reject = (options?: { readonly message?: string | undefined }): Effect.Effect<Verdict> =>
  Effect.succeed(Verdict.Reject(options?.message === undefined ? {} : { message: options.message }))

/**
 * Do not run the call; `value` is its result (ask-the-user tools, cached answers).
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * const cached: Gate.Gate = ({ call }) => call.name === "get_time" ? Gate.reply({ value: "12:00" }) : Gate.proceed()
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const reply = (options: { readonly value: JsonValue }): Effect.Effect<Verdict> =>
  Effect.succeed(Verdict.Reply({ value: options.value }))

/**
 * The default gate: pauses a call when its tool's `needsApproval` says so (`true`, or a rule
 * that returns `true` for the call's decoded arguments), with a `why` that says which;
 * every other call proceeds.
 *
 * @example
 * ```ts
 * import { Gate } from "@agentfx/core"
 *
 * const gate: Gate.Gate = (input) => input.call.name === "pay" ? Gate.pause() : Gate.needsApproval(input)
 * ```
 *
 * @since 0.1.0
 * @category gates
 */
export const needsApproval: Gate = ({ args, call, state, tool }) => {
  const rule = tool.needsApproval
  if (rule === false) return proceeding
  if (rule === true) return pause({ why: `${call.name} needs approval for every call (needsApproval: true)` })
  // a rule's requirements are the tool's: they are already among the agent's
  const needed = rule(args, { callId: call.id, toolName: call.name, state }) as Effect.Effect<boolean>
  return Effect.map(needed, (yes) =>
    yes ? Verdict.Pause({ why: `the needsApproval rule of ${call.name} asked for approval of these arguments` }) : Verdict.Proceed())
}
