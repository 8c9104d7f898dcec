/**
 * An agent: a toolkit, a system prompt and the rules of its loop. `Agent.run` drives the
 * model and the tools until the model answers or the run pauses for a person;
 * `Agent.resume` continues a paused run from its checkpoint.
 *
 * @since 0.1.0
 */
import type { Effect, Redacted, Schema, Stream } from "effect"
import * as Result from "effect/Result"
import type { InvalidAgent, ResumeError, RunAlreadyResumed, RunError, RunNotFound } from "./AgentError.js"
import type * as AgentEvent from "./AgentEvent.js"
import type * as AgentExit from "./AgentExit.js"
import type * as Checkpoint from "./Checkpoint.js"
import type * as ContextWindow from "./ContextWindow.js"
import type * as Budget from "./Budget.js"
import type { ChatModel, ModelSettings, OutputFormat, ToolChoice, ToolDefinition } from "./ChatModel.js"
import type * as Decision from "./Decision.js"
import type * as Gate from "./Gate.js"
import * as AgentTool from "./internal/agentTool.js"
import type { Limits as AdmitLimits } from "./internal/admit.js"
import * as Assemble from "./internal/assemble.js"
import type { Layers } from "./internal/observe.js"
import * as ResumeRun from "./internal/resumeRun.js"
import * as Run from "./internal/run.js"
import type * as Middleware from "./Middleware.js"
import type * as Part from "./Part.js"
import type { StoreError } from "./RunStore.js"
import type * as Slot from "./Slot.js"
import type * as Tool from "./Tool.js"
import type * as Toolkit from "./Toolkit.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("@agentfx/core/Agent")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * What a message does that arrives while a turn runs on its conversation (double texting):
 *
 * - `"fail"` (the default): refused at once with `ConversationBusy`; nothing is written.
 * - `"wait"` (enqueue): it waits, then is the next turn — turns of one process in arrival
 *   order; across processes sharing a store, whenever the lease is free.
 * - `"steer"`: it joins the running turn — added to its history before its next model call,
 *   never between a model answer and its tools' results — and `Agent.run` fails with the typed
 *   answer `Steered` (the run that took it). When that turn ended before taking it, it is a turn
 *   of its own; when that turn paused, it is refused with `SteerRefused` and nothing is written.
 * - `"interrupt"`: the running turn is cancelled (`TurnInterrupted`; its calls cut off are
 *   answered "cancelled"), then this one starts.
 * - `"rollback"`: as `"interrupt"`, and the cancelled turn's messages are removed from the
 *   conversation.
 *
 * @example
 * ```ts
 * import { Agent } from "@agentfx/core"
 *
 * const assistant = Agent.make({ name: "assistant", onConversationBusy: "steer" })
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type OnConversationBusy = "fail" | "wait" | "steer" | "interrupt" | "rollback"

/**
 * The slots an agent may declare.
 *
 * @since 0.1.0
 * @category models
 */
export type Slots = { readonly [name: string]: Slot.Any }

/**
 * An assembled agent: its tools' metadata table, its prompt and the rules of its loop. `R`
 * is what its tools, gate and middleware need; `S` its slots. Plain data: define it at
 * module level and run it with any Layers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Agent<out S extends Slots = Slots, out R = never, out A = undefined> {
  readonly [TypeId]: { readonly _S: (_: never) => S; readonly _R: (_: never) => R; readonly _A: (_: never) => A }
  readonly name: string
  readonly toolkit: Toolkit.Toolkit<any>
  readonly system: string | undefined
  readonly maxIterations: number
  readonly gate: Gate.Gate<any, any>
  readonly onEnvironmentError: "report" | "pause"
  readonly onConversationBusy: OnConversationBusy
  /** What a run accepts of the model's calls: nesting depth, argument size, batch width. */
  readonly limits: Limits
  /** What a run may spend (each run may lower or raise it). */
  readonly budget: Budget.Budget | undefined
  /** Model settings of every model call (a run's settings win field by field). */
  readonly settings: ModelSettings
  /** Whether the first model call of a run may, must or must not call tools (later calls, also after a resume: `"auto"`). */
  readonly toolChoice: ToolChoice
  /** The final answer's schema and its JSON Schema, and how often an answer that does not match is fed back. */
  readonly output: { readonly schema: Schema.Codec<any, any>; readonly format: OutputFormat; readonly retries: number } | undefined
  /** What each model call is sent of the conversation: all of it, or a view kept under a token limit (`ContextWindow`). */
  readonly context: ContextWindow.Policy<any>
  readonly slots: S
  readonly checkpointSecret: Redacted.Redacted<string> | undefined
  /** The middleware of each level, outermost first. */
  readonly middleware: Layers
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
export interface Any extends Agent<any, any, any> {}

/**
 * Everything `Agent.make` accepts.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Tools extends ReadonlyArray<Tool.Any>, S extends Slots, RG, RM, A = undefined, AI = unknown, RC = never> {
  /** Names the agent in checkpoints: a checkpoint resumes only with an agent of the same name. Default `"agent"`. */
  readonly name?: string
  /** The tools the model may call; assembled into the agent's metadata table (see `Toolkit.validate`). */
  readonly tools?: Tools
  /** The system prompt, sent with every model call (not stored in memory). */
  readonly system?: string
  /** Model calls per run before `MaxIterationsReached` (a positive integer). Default 10. */
  readonly maxIterations?: number
  /**
   * Decides per call, before a batch runs, with the call's decoded arguments (typed per tool).
   * Default `Gate.needsApproval`: pauses the calls whose tool's `needsApproval` says so.
   */
  readonly gate?: Gate.Gate<RG, Gate.InputOf<Tools[number]>>
  /** `"pause"`: a batch with `environment` failures pauses the run after it ran. Default `"report"`: the model is told the errors. */
  readonly onEnvironmentError?: "report" | "pause"
  /**
   * What a second message does while a turn runs on its conversation (one turn at a time per
   * conversation; see {@link OnConversationBusy}): `"fail"` (the default), `"wait"`, `"steer"`,
   * `"interrupt"` or `"rollback"`. The last three are the agent's: its running turns take steered
   * input, or can be cancelled, only when the agent says so. A resume on a busy conversation
   * fails with `ConversationBusy` under every policy but `"wait"`.
   */
  readonly onConversationBusy?: OnConversationBusy
  /**
   * What a run accepts of the model's calls; a call beyond a limit is not run, and the model
   * is told which limit it crossed (a `semantic` error) — the conversation stays usable.
   * `depth`: how deeply arguments and tool results may nest (default 64, at most 1000);
   * `argumentBytes`: the largest arguments of one call as JSON (default 1 MiB); `batchWidth`:
   * the most calls of one model answer that run (default 128).
   */
  readonly limits?: Partial<Limits>
  /**
   * The final answer's shape: the run completes with `value`, the answer decoded with this
   * schema (an object schema; `Schema.Struct`), and adapters ask their provider for it
   * natively. An answer that does not decode is fed back to the model with the problem (cut
   * after 2,000 characters), up to `outputRetries` times, then the run fails with
   * `InvalidOutput`; an answer nesting deeper than `limits.depth` is such an answer. The
   * count is the run's: its pauses and resumes go on with it (`Checkpoint.outputRetries`).
   */
  readonly output?: Schema.Codec<A, AI>
  /** How often an answer that does not match `output` is fed back (a non-negative integer). Default 2. */
  readonly outputRetries?: number
  /** What a run may spend before it stops with `BudgetExceeded` (resumable). Default: no limit. */
  readonly budget?: Budget.Budget
  /** Settings of every model call: temperature, top-p, max output tokens, stop sequences, parallel tool calls. */
  readonly settings?: ModelSettings
  /**
   * Whether the model may (`"auto"`, the default), must (`"required"`, or `{ tool }` for one
   * tool) or must not (`"none"`) call tools — on the first model call of a run only, then
   * `"auto"` (after a resume too): a model made to call tools at every call would never answer.
   */
  readonly toolChoice?: ToolChoice
  /** Typed run state. */
  readonly slots?: S
  /** Signs checkpoints (HMAC-SHA256) with a secret of at least 32 bytes; unsigned or altered checkpoints are then refused. */
  readonly checkpointSecret?: Redacted.Redacted<string>
  /** Wraps turns, iterations, model calls and tool calls; the first is the outermost. */
  readonly middleware?: ReadonlyArray<Middleware.Middleware<RM>>
  /**
   * Keeps each model call under a token limit: `ContextWindow.trim({ maxTokens })` leaves the
   * oldest messages out, `ContextWindow.summarize({ maxTokens, keepLast, model })` has them
   * summarized; a tool call always keeps its results, and the history keeps every message with
   * a `Compaction` entry where the view changed (docs/context.md). A summary model's service is
   * required by the agent. Default `ContextWindow.full`: every message is sent.
   * `RunOptions.context` overrides it for a run.
   */
  readonly context?: ContextWindow.Policy<RC>
}

/**
 * The state a run starts with: any subset of the slots (the others start at their initial value).
 *
 * @since 0.1.0
 * @category models
 */
export type InitialState<S extends Slots> = { readonly [K in keyof S]?: S[K]["initial"] }

/**
 * Assembles an agent, or refuses with one `InvalidAgent` that names every problem: tools
 * that `Toolkit.validate` refuses (duplicate names, bad timeouts, …), a `maxIterations` that is
 * not a positive integer, an unknown `onEnvironmentError`, slot names or values that are not
 * slots, a checkpoint secret shorter than 32 bytes, a bad name, a gate or middleware that is
 * not a function, an `output` schema that has no JSON Schema (a `Schema.BigInt` field).
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { Agent } from "@agentfx/core"
 *
 * const checked = Agent.validate({ name: "has spaces" })
 * if (Result.isFailure(checked)) console.error(checked.failure.message)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const validate = <
  const Tools extends ReadonlyArray<Tool.Any> = [],
  const S extends Slots = {},
  RG = never,
  RM = never,
  A = undefined,
  AI = unknown,
  RC = never
>(
  options: Options<Tools, S, RG, RM, A, AI, RC>
): Result.Result<Agent<S, Tool.Requirements<Tools[number]> | RG | RM | RC, A>, InvalidAgent> =>
  Result.map(
    Assemble.assemble(options as Options<ReadonlyArray<Tool.Any>, Slots, unknown, unknown, unknown, unknown, unknown>),
    (fields) => ({ [TypeId]: variance, ...fields }) as unknown as Agent<S, Tool.Requirements<Tools[number]> | RG | RM | RC, A>
  )

const variance = { _S: (_: never) => _, _R: (_: never) => _, _A: (_: never) => _ }

/**
 * Assembles an agent, like {@link validate}; throws its `InvalidAgent` (a tagged error naming
 * every problem), so that an agent can be defined at module level. Nothing effectful happens:
 * an agent is data, run with `Agent.run` under the Layers of the app.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Agent, Slot, Tool } from "@agentfx/core"
 *
 * const getWeather = Tool.make("get_weather", {
 *   description: "Current weather for a city",
 *   parameters: Schema.Struct({ city: Schema.String }),
 *   success: Schema.String,
 *   handler: ({ city }) => Effect.succeed(`Sunny in ${city}`)
 * })
 * export const weatherAgent = Agent.make({
 *   tools: [getWeather],
 *   system: "You are a weather assistant.",
 *   maxIterations: 5,
 *   onEnvironmentError: "pause",
 *   slots: { cities: Slot.append(Schema.String) }
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <
  const Tools extends ReadonlyArray<Tool.Any> = [],
  const S extends Slots = {},
  RG = never,
  RM = never,
  A = undefined,
  AI = unknown,
  RC = never
>(
  options: Options<Tools, S, RG, RM, A, AI, RC>
): Agent<S, Tool.Requirements<Tools[number]> | RG | RM | RC, A> => Result.getOrThrowWith(validate(options), (error) => error)

/**
 * A tool that runs `agent` as a sub-agent: the model sends `{ input }`, the child's answer is
 * the result. The child has its own manager (sequential unless `manager` says otherwise) and
 * an ephemeral conversation. Interrupting the call — its timeout, or the parent's
 * interruption — interrupts the child: its model call and tools stop (finalizers run); its
 * conversation, ephemeral, was never stored. A child that pauses suspends the call: the parent
 * pauses with the child's pending calls (ids `<call id>/<child call id>`), and the parent's
 * resume resumes the child. A child model failure is a `ToolError` (transient when the model
 * error is).
 *
 * @example
 * ```ts
 * import { Agent } from "@agentfx/core"
 *
 * declare const researcher: Agent.Agent
 * const research = Agent.toTool(researcher, {
 *   name: "research",
 *   description: "Researches a question and answers with sources",
 *   timeout: "2 minutes"
 * })
 * const lead = Agent.make({ tools: [research] })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const toTool: <S extends Slots, R>(
  agent: Agent<S, R>,
  options: ToolOptions
) => Tool.Tool<string, { readonly input: string }, string, R | ChatModel> = AgentTool.toTool

/**
 * The limits a run holds the model's calls to (see `Options.limits`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits extends AdmitLimits {}

/**
 * Options of {@link toTool}: the tool's name, description and tool options, and the manager
 * of the child's own tool calls.
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolOptions extends AgentTool.ToolOptions {}

/**
 * Options of one run.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions<S extends Slots> {
  /**
   * What the person says: text, or parts — text and files (images, documents; `Part.text`,
   * `Part.image`, `Part.file`) in order. Each file is checked as `Part.FilePart` decodes it and
   * held to the agent's `limits.fileBytes`, else `InvalidRunInput` names it.
   */
  readonly input: string | ReadonlyArray<Part.InputPart>
  /**
   * The run's id (its record's key in the `RunStore`). Default: a new unique id. Given, it must be
   * new to the store: a run id the store has, or had within its retention, is refused
   * (`InvalidRunInput`), so that a start delivered twice (by a queue, a cluster) runs once —
   * refused before it writes to its conversation. It is 1 to 256 characters, none of them a
   * control character or a lone surrogate, and neither `.` nor `..` (a URL path would resolve
   * them away: the inbox could not open the run).
   */
  readonly runId?: string
  /**
   * Continue this conversation (kept in `ChatMemory`): 1 to 256 characters, none of them a
   * control character or a lone surrogate (else `InvalidRunInput`). Without it the
   * conversation is ephemeral: it lives in the run and its checkpoints only, and never touches
   * `ChatMemory`.
   */
  readonly conversationId?: string
  /** Initial values of some slots. */
  readonly state?: InitialState<S>
  /**
   * When another turn holds the conversation: `"fail"` at once (`ConversationBusy`) or `"wait"`,
   * whatever the agent's policy; `"steer"`, `"interrupt"` or `"rollback"` only when it is the
   * agent's own (else `InvalidRunInput`: the running turn would not cooperate). Default: the
   * agent's `onConversationBusy`.
   */
  readonly onConversationBusy?: OnConversationBusy
  /** This run's budget: each limit given replaces the agent's (one given as `undefined` leaves it). Checked like the agent's (else `InvalidRunInput`). */
  readonly budget?: Budget.Budget
  /** This run's model settings: each field given replaces the agent's, also after a resume. Checked like the agent's. */
  readonly settings?: ModelSettings
  /** The run's first model call's tool choice, instead of the agent's (later calls, after a resume too: `"auto"`). Checked like the agent's. */
  readonly toolChoice?: ToolChoice
  /**
   * This run's context policy instead of the agent's, also after a resume (it is kept in the
   * checkpoint, like the settings). Checked like the agent's; it cannot name a summary model
   * (a checkpoint cannot keep a service): `summarize` then uses the run's `ChatModel`.
   */
  readonly context?: ContextWindow.Policy
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
 *   else console.log("paused for", exit.kind, exit.pending)
 * }).pipe(Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("Sunny.")])))
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const run = <S extends Slots, R, A>(
  agent: Agent<S, R, A>,
  options: RunOptions<S>
): Effect.Effect<AgentExit.AgentExit<Slot.StateOf<S>, A>, RunError, R | ChatModel> =>
  Run.startRun(agent, options) as Effect.Effect<AgentExit.AgentExit<any, any>, RunError, any>

/**
 * Continues a paused run (or one stopped by `MaxIterationsReached`) with a person's decision.
 * `target` is the run's id — its record in the `RunStore` is the authority — or a copy of its
 * checkpoint (the JSON value as stored; `JSON.parse` output works), which is imported into the
 * store on first use (its signature checked first when the agent has a `checkpointSecret`).
 *
 * Exactly one resume of a paused run proceeds: it claims the record atomically; any other —
 * a second tab, a retry, another process sharing the store, a replay of an old copy — fails
 * with `RunAlreadyResumed` and runs nothing. Everything is validated before the claim: a
 * refused resume (`InvalidCheckpoint`, `UnknownDecision`, `IncompleteDecisions`,
 * `InvalidEditedArguments`, `DecisionMismatch`, `InvalidRunInput` for a `continue` decision's
 * invalid `raise`, `ConversationDiverged`, `ConversationBusy`) leaves the run paused and
 * resumable. The run goes on with its own settings (`RunOptions.settings`). Only calls that a gate let through or that the decision
 * approves run; rejecting a call never skips the approved ones.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * const byId = Agent.resume(agent, "run-1", Decision.approveAll())
 * declare const stored: string // JSON.stringify(paused.checkpoint), from another process
 * const fromCopy = Agent.resume(agent, JSON.parse(stored), Decision.byCall({
 *   call_1: Decision.approve(),
 *   call_2: Decision.reject({ message: "not that folder" })
 * }))
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const resume = <S extends Slots, R, A>(
  agent: Agent<S, R, A>,
  target: string | Checkpoint.Encoded | unknown,
  decision: Decision.Decision,
  options?: ResumeOptions
): Effect.Effect<AgentExit.AgentExit<Slot.StateOf<S>, A>, ResumeError, R | ChatModel> =>
  ResumeRun.resumeRun(agent, target, decision, options ?? {}) as Effect.Effect<AgentExit.AgentExit<any, any>, ResumeError, any>

/**
 * Options of {@link resume}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResumeOptions {
  /** Who decides (a user id, an email): recorded with the claim, and named to every other claimant (`RunAlreadyResumed.decidedBy`). */
  readonly decidedBy?: string
  /**
   * The pause the decision was made on: the record's version it showed (`Checkpoint.revision`).
   * A run that is no longer paused at that revision — resumed and paused again meanwhile — is
   * refused with `RunAlreadyResumed`, and nothing is consumed: a decision never applies to a
   * pause its decider did not see.
   */
  readonly revision?: number
  /**
   * An id of this decision, unique to it (a message id, a UUID): recorded with the claim
   * (`RunRecord.decisionId`) until the run pauses again, so that a decision delivered twice — a
   * retry after its sender crashed — can be told apart from a second decision by the same person.
   * Nothing else reads it: a second resume is refused with `RunAlreadyResumed` all the same.
   */
  readonly decisionId?: string
}

/**
 * Takes over a run of a durable `RunStore` (SQLite, PostgreSQL) whose process crashed: a run
 * still recorded as running whose lease expired. A call whose result was recorded is never run
 * again; a call that was running at the crash runs again only when its tool is `idempotent`,
 * else the model is told it was cancelled; then the run goes on. The run is taken over
 * (`RunStore.takeOver`) before its batch is read, so that a process whose lease lapsed while it
 * was alive starts nothing more: each call runs once. A run that is alive elsewhere is
 * `RunAlreadyResumed`; an unknown one `RunNotFound`. (The next turn on a crashed run's
 * conversation also closes its calls with the recorded results.)
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, RunStore } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * const recoverAll = Effect.gen(function*() {
 *   const store = yield* RunStore.RunStore
 *   for (const record of yield* store.list({ status: "running", agent: agent.name })) {
 *     yield* Agent.recover(agent, record.runId).pipe(Effect.catchTag("RunAlreadyResumed", () => Effect.void))
 *   }
 * })
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const recover = <S extends Slots, R, A>(
  agent: Agent<S, R, A>,
  runId: string
): Effect.Effect<AgentExit.AgentExit<Slot.StateOf<S>, A>, ResumeError, R | ChatModel> =>
  ResumeRun.recoverRun(agent, runId) as Effect.Effect<AgentExit.AgentExit<any, any>, ResumeError, any>

/**
 * Cancels a run of this agent, from any process that shares its `RunStore`: a paused run ends
 * failed and its pending calls never run; a running one is taken over (`RunStore.takeOver`) and
 * ends failed. Its writer, wherever it runs, is refused at its next write to the record and its
 * run fails with `RunAlreadyResumed`: with a durable store (SQL) that is the next call's start
 * or result, so it starts no call after the cancel (a call it is running finishes in its
 * process, unrecorded); with the in-memory store, which records only pauses, it is the run's
 * next pause or its end. To stop a run's fiber at once, interrupt it as well. A run that
 * already finished is `RunAlreadyResumed` (naming how it ended); an unknown one, or another
 * agent's, `RunNotFound`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * const program = Agent.cancel(agent, "run-1", { cancelledBy: "ada" }).pipe(
 *   Effect.catchTag("RunAlreadyResumed", (e) => Effect.log(`already ${e.status}`))
 * )
 * ```
 *
 * @since 0.2.0
 * @category running
 */
export const cancel = (
  agent: Any,
  runId: string,
  options?: CancelOptions
): Effect.Effect<void, RunNotFound | RunAlreadyResumed | StoreError> => ResumeRun.cancelRun(agent, runId, options?.cancelledBy)

/**
 * Options of {@link cancel}.
 *
 * @since 0.2.0
 * @category models
 */
export interface CancelOptions {
  /** Who cancels: recorded as the run's `decidedBy`, and named to a later resume's refusal. */
  readonly cancelledBy?: string
}

/**
 * `Agent.run` as a `Stream` of its lifecycle events, ending with the `RunCompleted` or `RunPaused`
 * event that carries the exit (the stream fails with the run's error). When the model
 * streams, its text arrives as `TextDelta` events. Events are buffered without bound: a slow
 * consumer (of this stream alone, or merged with others) never stalls the run, its events wait
 * in memory until consumed. Ending the stream early (e.g. `Stream.take`) interrupts the run.
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
export const stream = <S extends Slots, R, A>(
  agent: Agent<S, R, A>,
  options: RunOptions<S>
): Stream.Stream<AgentEvent.AgentEvent, RunError, R | ChatModel> => Run.streamOf(run(agent, options))

/**
 * `Agent.resume` as a `Stream` of its lifecycle events (starting with `RunResumed`), like {@link stream}.
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
export const streamResume = <S extends Slots, R, A>(
  agent: Agent<S, R, A>,
  target: string | Checkpoint.Encoded | unknown,
  decision: Decision.Decision,
  options?: ResumeOptions
): Stream.Stream<AgentEvent.AgentEvent, ResumeError, R | ChatModel> => Run.streamOf(resume(agent, target, decision, options))
