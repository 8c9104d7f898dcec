/**
 * An agent: a toolkit, a system prompt and the rules of its loop. `Agent.run` drives the
 * model and the tools until the model answers or the run pauses for a person;
 * `Agent.resume` continues a paused run from its checkpoint.
 *
 * @since 0.1.0
 */
import type { Stream } from "effect"
import { Effect, Redacted } from "effect"
import type {
  ConversationDiverged,
  DecisionMismatch,
  IncompleteDecisions,
  InvalidCheckpoint,
  InvalidEditedArguments,
  InvalidRunInput,
  MaxIterationsReached,
  UnknownDecision
} from "./AgentError.js"
import { InvalidAgent } from "./AgentError.js"
import type * as AgentEvent from "./AgentEvent.js"
import type * as AgentExit from "./AgentExit.js"
import type { ChatModel, ModelError, ToolDefinition } from "./ChatModel.js"
import type { MemoryError } from "./ChatMemory.js"
import type * as Decision from "./Decision.js"
import * as Gate from "./Gate.js"
import * as Run from "./internal/run.js"
import type * as Middleware from "./Middleware.js"
import * as Slot from "./Slot.js"
import * as Toolkit from "./Toolkit.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@agentfx/core/Agent")

/**
 * The slots an agent may declare.
 *
 * @since 0.1.0
 * @category models
 */
export type Slots = { readonly [name: string]: Slot.Any }

/**
 * An assembled agent. `R` is what its tools and gate need; `S` its slots.
 *
 * @since 0.1.0
 * @category models
 */
export interface Agent<out S extends Slots = Slots, out R = never> {
  readonly [TypeId]: { readonly _R: (_: never) => R; readonly _S: (_: never) => S }
  readonly name: string
  readonly toolkit: Toolkit.Toolkit<any>
  readonly system: string | undefined
  readonly maxIterations: number
  readonly gate: Gate.Gate<any>
  readonly onEnvironmentError: "proceed" | "pause"
  readonly slots: S
  readonly checkpointSecret: Redacted.Redacted<string> | undefined
  /** The middleware of each level, outermost first. */
  readonly middleware: {
    readonly turn: ReadonlyArray<NonNullable<Middleware.Middleware<any>["turn"]>>
    readonly iteration: ReadonlyArray<NonNullable<Middleware.Middleware<any>["iteration"]>>
    readonly model: ReadonlyArray<NonNullable<Middleware.Middleware<any>["model"]>>
    readonly tool: ReadonlyArray<NonNullable<Middleware.Middleware<any>["tool"]>>
  }
  /** What the model is told about the tools (computed once, from the toolkit's table). */
  readonly toolDefinitions: ReadonlyArray<ToolDefinition>
  readonly toolNames: ReadonlyArray<string>
}

/**
 * Any agent.
 *
 * @since 0.1.0
 * @category models
 */
export interface Any extends Agent<any, any> {}

/**
 * Everything `Agent.make` accepts.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<S extends Slots, RT, RG, RM> {
  /** Names the agent in checkpoints: a checkpoint resumes only with an agent of the same name. Default `"agent"`. */
  readonly name?: string
  readonly toolkit: Toolkit.Toolkit<RT>
  /** The system prompt, sent with every model call (not stored in memory). */
  readonly system?: string
  /** Model calls per run before `MaxIterationsReached` (a positive integer). Default 10. */
  readonly maxIterations?: number
  /** Decides per call, before a batch runs. Default `Gate.pauseSensitive`. */
  readonly gate?: Gate.Gate<RG>
  /** `"pause"`: a batch with `environment` failures pauses the run after it ran. Default `"proceed"`: the model gets the errors. */
  readonly onEnvironmentError?: "proceed" | "pause"
  /** Typed run state. */
  readonly slots?: S
  /** Signs checkpoints (HMAC-SHA256); unsigned or altered checkpoints are then refused. */
  readonly checkpointSecret?: Redacted.Redacted<string>
  /** Wraps turns, iterations, model calls and tool calls; the first is the outermost. */
  readonly middleware?: ReadonlyArray<Middleware.Middleware<RM>>
}

/**
 * The state a run starts with: any subset of the slots (the others start at their initial value).
 *
 * @since 0.1.0
 * @category models
 */
export type InitialState<S extends Slots> = { readonly [K in keyof S]?: S[K]["initial"] }

/**
 * How `Agent.run` can fail. A pause is not a failure.
 *
 * @since 0.1.0
 * @category errors
 */
export type RunError = ModelError | MemoryError | MaxIterationsReached | InvalidRunInput

/**
 * How `Agent.resume` can fail. After any of the decision or checkpoint errors nothing was
 * consumed: the same checkpoint still resumes.
 *
 * @since 0.1.0
 * @category errors
 */
export type ResumeError =
  | RunError
  | InvalidCheckpoint
  | UnknownDecision
  | IncompleteDecisions
  | InvalidEditedArguments
  | DecisionMismatch
  | ConversationDiverged

const NamePattern = /^[\w.:-]{1,128}$/

/**
 * Assembles an agent, refusing with one `InvalidAgent` that names every problem: a
 * `maxIterations` that is not a positive integer, an unknown `onEnvironmentError`, slot
 * names or values that are not slots, an empty checkpoint secret, a bad name.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Agent, Slot, Tool, Toolkit } from "@agentfx/core"
 *
 * const getWeather = Tool.make("get_weather", {
 *   description: "Current weather for a city",
 *   parameters: Schema.Struct({ city: Schema.String }),
 *   success: Schema.String,
 *   handler: ({ city }) => Effect.succeed(`Sunny in ${city}`)
 * })
 * const program = Effect.gen(function*() {
 *   const toolkit = yield* Toolkit.make(getWeather)
 *   return yield* Agent.make({
 *     toolkit,
 *     system: "You are a weather assistant.",
 *     maxIterations: 5,
 *     onEnvironmentError: "pause",
 *     slots: { cities: Slot.append(Schema.String) }
 *   })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <const S extends Slots = {}, RT = never, RG = never, RM = never>(
  options: Options<S, RT, RG, RM>
): Effect.Effect<Agent<S, RT | RG | RM>, InvalidAgent> =>
  Effect.suspend(() => {
    const problems: Array<string> = []
    const name = options.name ?? "agent"
    if (!NamePattern.test(name)) problems.push(`name ${JSON.stringify(name)} must match ${NamePattern.source}`)
    if (typeof options.toolkit !== "object" || options.toolkit === null || !(Toolkit.TypeId in options.toolkit)) {
      problems.push("toolkit must be built with Toolkit.make")
    }
    const maxIterations = options.maxIterations ?? 10
    if (!Number.isInteger(maxIterations) || maxIterations < 1) {
      problems.push(`maxIterations ${maxIterations} is not a positive integer`)
    }
    const onEnvironmentError = options.onEnvironmentError ?? "proceed"
    if (onEnvironmentError !== "proceed" && onEnvironmentError !== "pause") {
      problems.push(`onEnvironmentError ${JSON.stringify(onEnvironmentError)} must be "proceed" or "pause"`)
    }
    const slots = options.slots ?? ({} as S)
    for (const [slotName, slot] of Object.entries(slots)) {
      if (!/^[A-Za-z_][\w-]{0,63}$/.test(slotName)) problems.push(`slot name ${JSON.stringify(slotName)} is not an identifier`)
      if (typeof slot !== "object" || slot === null || !(Slot.TypeId in slot)) {
        problems.push(`slot "${slotName}" is not a Slot (use Slot.last, Slot.append, Slot.sum or Slot.make)`)
      }
    }
    if (options.gate !== undefined && typeof options.gate !== "function") problems.push("gate must be a function")
    if (
      options.checkpointSecret !== undefined &&
      (!Redacted.isRedacted(options.checkpointSecret) || `${Redacted.value(options.checkpointSecret)}`.length === 0)
    ) {
      problems.push("checkpointSecret must be a non-empty Redacted string")
    }
    const middleware = options.middleware ?? []
    middleware.forEach((m, i) => {
      for (const level of ["turn", "iteration", "model", "tool"] as const) {
        if (m[level] !== undefined && typeof m[level] !== "function") problems.push(`middleware #${i + 1}: ${level} must be a function`)
      }
    })
    if (problems.length > 0) return Effect.fail(new InvalidAgent({ problems }))
    const levels = <L extends "turn" | "iteration" | "model" | "tool">(level: L) =>
      middleware.flatMap((m) => m[level] === undefined ? [] : [m[level]!])
    const entries = [...options.toolkit.entries.values()]
    const agent: Agent<S, RT | RG | RM> = {
      [TypeId]: TypeId as any,
      name,
      toolkit: options.toolkit,
      system: options.system,
      maxIterations,
      gate: options.gate ?? Gate.pauseSensitive,
      onEnvironmentError,
      slots,
      checkpointSecret: options.checkpointSecret,
      middleware: { turn: levels("turn"), iteration: levels("iteration"), model: levels("model"), tool: levels("tool") },
      toolDefinitions: entries.map((entry) => ({
        name: entry.name,
        description: entry.description,
        parameters: entry.parametersJsonSchema
      })),
      toolNames: entries.map((entry) => entry.name)
    }
    return Effect.succeed(agent)
  })

/**
 * Options of one run.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions<S extends Slots> {
  /** What the person says. */
  readonly input: string
  /** Continue this conversation (kept in `ChatMemory`). Without it the conversation is ephemeral: it lives in the run and its checkpoints only, and never touches `ChatMemory`. */
  readonly conversationId?: string
  /** Initial values of some slots. */
  readonly state?: InitialState<S>
}

/**
 * Runs one turn: the input is added to the conversation, then the loop calls the model and
 * runs tools until the model answers (`Completed`), a person is needed (`Paused` — a value,
 * not an error), or `maxIterations` model calls were made (`MaxIterationsReached`, with a
 * checkpoint to continue). Interrupting the run interrupts the running tools (their
 * finalizers run); the conversation is healed on its next turn.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, ScriptedChatModel } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * const program = Effect.gen(function*() {
 *   const exit = yield* Agent.run(agent, { input: "Weather in Oslo?", conversationId: "c-1" })
 *   if (exit._tag === "Completed") console.log(exit.text)
 *   else console.log("paused for", exit.reason, exit.pending)
 * }).pipe(Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("Sunny.")])))
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const run = <S extends Slots, R>(
  agent: Agent<S, R>,
  options: RunOptions<S>
): Effect.Effect<AgentExit.AgentExit<Slot.StateOf<S>>, RunError, R | ChatModel> =>
  Run.startRun(agent, options) as Effect.Effect<AgentExit.AgentExit<any>, RunError, any>

/**
 * Continues a paused run (or one stopped by `MaxIterationsReached`) from its checkpoint —
 * the JSON value, as stored; `JSON.parse` output works — with a person's decision.
 * Everything is validated before anything is consumed: a refused resume
 * (`InvalidCheckpoint`, `UnknownDecision`, `IncompleteDecisions`, `InvalidEditedArguments`,
 * `DecisionMismatch`, `ConversationDiverged`) leaves the checkpoint resumable. Rejecting a
 * call never skips the approved ones; an approved call runs once.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * declare const stored: string // JSON.stringify(paused.checkpoint), from a database
 * const program = Agent.resume(agent, JSON.parse(stored), Decision.byCall({
 *   call_1: Decision.approve(),
 *   call_2: Decision.reject({ message: "not that folder" })
 * }))
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const resume = <S extends Slots, R>(
  agent: Agent<S, R>,
  checkpoint: unknown,
  decision: Decision.Decision
): Effect.Effect<AgentExit.AgentExit<Slot.StateOf<S>>, ResumeError, R | ChatModel> =>
  Run.resumeRun(agent, checkpoint, decision) as Effect.Effect<AgentExit.AgentExit<any>, ResumeError, any>

/**
 * `Agent.run` as a `Stream` of its lifecycle events, ending with the `Completed` or `Paused`
 * event that carries the exit (the stream fails with the run's error). When the model
 * streams, its text arrives as `TextDelta` events. Events are buffered: a slow consumer
 * never stalls the run. Ending the stream early (e.g. `Stream.take`) interrupts the run.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Agent } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * const program = Agent.stream(agent, { input: "Weather in Oslo?" }).pipe(
 *   Stream.runForEach((event) => Effect.log(event._tag))
 * )
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const stream = <S extends Slots, R>(
  agent: Agent<S, R>,
  options: RunOptions<S>
): Stream.Stream<AgentEvent.AgentEvent, RunError, R | ChatModel> => Run.streamOf(run(agent, options))

/**
 * `Agent.resume` as a `Stream` of its lifecycle events (starting with `Resumed`), like {@link stream}.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * declare const checkpoint: unknown
 * const program = Agent.streamResume(agent, checkpoint, Decision.approveAll()).pipe(Stream.runCollect)
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const streamResume = <S extends Slots, R>(
  agent: Agent<S, R>,
  checkpoint: unknown,
  decision: Decision.Decision
): Stream.Stream<AgentEvent.AgentEvent, ResumeError, R | ChatModel> => Run.streamOf(resume(agent, checkpoint, decision))
