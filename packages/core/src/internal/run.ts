/**
 * A turn: `Agent.run` starts a run. It reads its fiber once (memory, run store, event sinks,
 * tracer), builds the run's state, holds its conversation, and runs the loop inside what
 * observes the turn. Also: what every turn shares with a resumed one (`resumeRun.ts`), and a
 * run as the stream of its events.
 */
import type { Fiber } from "effect"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as Agent from "../Agent.js"
import type { Any, RunOptions, Slots } from "../Agent.js"
import { InvalidRunInput } from "../AgentError.js"
import type * as AgentEvent from "../AgentEvent.js"
import { withSink } from "../AgentEvent.js"
import type * as AgentExit from "../AgentExit.js"
import { ChatModel, emptyUsage, type ModelSettings, type ToolChoice } from "../ChatModel.js"
import { ChatMemory } from "../ChatMemory.js"
import type * as ContextWindow from "../ContextWindow.js"
import { danglingToolCalls, user, type UserMessage } from "../Message.js"
import { TextPart } from "../Part.js"
import { RunStore } from "../RunStore.js"
import type { Outcome } from "../ToolCall.js"
import { ToolCallingManager } from "../ToolCallingManager.js"
import { fileProblem, type Limits } from "./admit.js"
import { budgetProblems, contextProblems, settingsProblems, toolChoiceProblems } from "./assemble.js"
import { fixedOf } from "./compaction.js"
import { finishCrashed } from "./crashed.js"
import { ephemeralId, newId } from "./ids.js"
import { loop } from "./loop.js"
import { observerOf, untouched } from "./observe.js"
import { conversationBusyProblem } from "./options.js"
import { freshRunId, recorderOf } from "./record.js"
import { type CancelledTurn, cancellable, holdFor, rollBack } from "./busy.js"
import type { RunState } from "./runState.js"
import { appendMessages, noOutcomes, resultMessage } from "./runState.js"
import { sinksOf } from "./sinks.js"
import { isTraced } from "./traced.js"

/**
 * What is wrong with a run's options: state for undeclared slots, and what `Agent.make` checks
 * of an agent's budget, settings and tool choice, checked alike for the run's own.
 */
const optionProblems = (agent: Any, options: RunOptions<Slots>): Array<string> => {
  const problems: Array<string> = []
  const given = options.state
  if (given !== undefined) {
    const unknown = Object.keys(given).filter((name) => !Object.hasOwn(agent.slots, name))
    if (unknown.length > 0) {
      problems.push(`state for undeclared slot(s) ${unknown.map((n) => `"${n}"`).join(", ")}; declared: ${Object.keys(agent.slots).join(", ") || "none"}`)
    }
  }
  if (options.budget !== undefined) problems.push(...budgetProblems(options.budget, "budget"))
  if (options.settings !== undefined) problems.push(...settingsProblems(options.settings, "settings"))
  if (options.toolChoice !== undefined) problems.push(...toolChoiceProblems(options.toolChoice, agent.toolNames))
  if (options.context !== undefined) problems.push(...contextProblems(options.context, "context", fixedOf(agent), "run"))
  problems.push(...inputProblems(options.input, agent.limits))
  const busy = conversationBusyProblem(options.onConversationBusy)
  if (busy !== undefined) problems.push(busy)
  else if (!runPolicies.includes(options.onConversationBusy) && options.onConversationBusy !== agent.onConversationBusy) {
    problems.push(
      `onConversationBusy ${JSON.stringify(options.onConversationBusy)} is a policy of the agent, not of a run: this agent's is ${
        JSON.stringify(agent.onConversationBusy)
      } (its running turns take steered input, or can be cancelled, only when the agent says so); a run may say "fail" or "wait"`
    )
  }
  for (const key of ["runId", "conversationId"] as const) {
    const id = options[key]
    if (id !== undefined && !validId(id)) {
      problems.push(`${key} ${JSON.stringify(id)} must be a string of 1 to ${maxIdLength} characters, none of them a control character or a lone surrogate`)
    }
  }
  if (options.runId === "." || options.runId === "..") problems.push(dotRunIdProblem(options.runId))
  return problems
}

/** The policies a run may choose whatever its agent's: the others need the running turn's cooperation, which its agent declares. */
const runPolicies: ReadonlyArray<unknown> = [undefined, "fail", "wait"]

/** Why a run id `.` or `..` is refused: a URL path segment of it is normalised away, so a run page (the inbox's `/runs/:id`) could never be opened or decided. */
const dotRunIdProblem = (id: string): string =>
  `runId ${JSON.stringify(id)} cannot be "." or "..": a URL holding it is resolved to another path, so the run could not be opened or decided; choose another id`

/** What is wrong with a run's input given as parts: none, or a part that is neither text nor a file within the limits. */
const inputProblems = (input: RunOptions<Slots>["input"], limits: Limits): Array<string> => {
  if (typeof input === "string") return []
  if (!Array.isArray(input) || input.length === 0) return ["input must be a string, or a non-empty array of parts (Part.text, Part.image, Part.file)"]
  const problems: Array<string> = []
  for (const [i, part] of input.entries()) {
    const what = `input part ${i + 1}`
    if (isText(part)) continue
    const problem = (part as { readonly _tag?: unknown } | null)?._tag === "Text"
      ? `${what} is not a text part: its text must be a string`
      : fileProblem(part, limits, what)
    if (problem !== undefined) problems.push(problem)
  }
  return problems
}

const isText = Schema.is(TextPart)

const maxIdLength = 256

/** A UTF-16 surrogate without its pair: no UTF-8 has it, so a store keeps another string (U+FFFD) than the one given. */
export const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * A run or conversation id a store can key a record by and a log can show: 1 to 256
 * characters, no control character, no lone surrogate (PostgreSQL would make two such ids one).
 */
const validId = (id: unknown): boolean =>
  typeof id === "string" && id.length > 0 && id.length <= maxIdLength && !/[\u0000-\u001f\u007f]/.test(id) && !loneSurrogate.test(id)

/** The state of every run of an agent without slots: one frozen object, not one per run (a batch's writes make a new state); with `noOutcomes`: 88 B per suspended run (decision 169). */
const noSlots: { [slot: string]: unknown } = Object.freeze({})

/** The run's initial state: the slots given, the others at their initial value. */
const initialState = (agent: Any, given: { readonly [slot: string]: unknown } | undefined) => {
  let state: { [slot: string]: unknown } | undefined
  const slots = agent.slots as Slots
  for (const name in slots) (state ??= {})[name] = given !== undefined && Object.hasOwn(given, name) ? given[name] : slots[name]!.initial
  return state ?? noSlots
}

/**
 * The fields given a value: a setting or a limit set to `undefined` (from JavaScript) leaves the
 * agent's in place (a limit is not lifted), and is not checkpointed.
 */
export const definedOnly = <A extends object>(fields: A): A =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as A

/** The run's state, with who watches it (read from its fiber) and its observer; one object shape for every run. */
export const runState = (
  agent: Any,
  fiber: Fiber.Fiber<unknown, unknown>,
  fields: Pick<
    RunState,
    "runId" | "conversationId" | "ephemeral" | "history" | "state" | "iteration" | "modelCalls" | "budget" | "usage" | "outcomes" | "version"
  > & { readonly outputRetries?: number | undefined },
  turn: {
    readonly settings?: ModelSettings | undefined
    readonly toolChoice?: ToolChoice | undefined
    readonly context?: ContextWindow.Policy | undefined
  } = {}
): RunState => {
  const own = turn.settings === undefined ? undefined : definedOnly(turn.settings)
  const store = fiber.getRef(RunStore)
  const run: { -readonly [K in keyof RunState]: RunState[K] } = {
    runId: fields.runId,
    conversationId: fields.conversationId,
    ephemeral: fields.ephemeral,
    history: fields.history,
    state: fields.state,
    iteration: fields.iteration,
    modelCalls: fields.modelCalls,
    budget: fields.budget,
    runSettings: own,
    toolChoice: turn.toolChoice ?? agent.toolChoice,
    runContext: turn.context,
    compacted: undefined,
    tokenScale: 1,
    estimated: 0,
    outputRetries: fields.outputRetries ?? 0,
    usage: fields.usage,
    outcomes: fields.outcomes,
    sinks: sinksOf(fiber.context),
    traced: isTraced(fiber),
    agent,
    observe: untouched,
    store,
    recorder: recorderOf(store),
    model: Context.get(fiber.context as Context.Context<ChatModel>, ChatModel),
    manager: fiber.getRef(ToolCallingManager),
    version: fields.version,
    unrecorded: undefined,
    pendingBatch: undefined,
    callIds: undefined,
    unwritten: undefined
  }
  run.observe = observerOf(run)
  return run
}

/**
 * Starts a run, in one step that reads the fiber and builds the run state; the turn then
 * takes its place. A run on an ephemeral conversation and an in-memory store holds nothing
 * and writes nothing until it pauses: it is the loop alone.
 */
export const startRun = (agent: Any, options: RunOptions<Slots>): Effect.Effect<AgentExit.AgentExit, unknown, any> =>
  Effect.withFiber((fiber) => start(agent, options, fiber))

const start = (agent: Any, options: RunOptions<Slots>, fiber: Fiber.Fiber<unknown, unknown>): Effect.Effect<AgentExit.AgentExit, unknown, any> => {
  const problems = optionProblems(agent, options)
  if (problems.length > 0) return Effect.fail(new InvalidRunInput({ problems }))
  const state = initialState(agent, options.state)
  const runId = options.runId ?? newId()
  const run = runState(agent, fiber, {
    runId,
    conversationId: options.conversationId ?? ephemeralId(runId),
    ephemeral: options.conversationId === undefined,
    history: [],
    state,
    iteration: 0,
    modelCalls: 0,
    budget: options.budget === undefined ? agent.budget : { ...agent.budget, ...definedOnly(options.budget) },
    usage: emptyUsage,
    outcomes: noOutcomes,
    version: undefined
  }, options)
  const input = user(options.input)
  const files = input.parts?.filter((part) => part._tag === "File")
  const started = (): AgentEvent.Payload => ({ _tag: "RunStarted", agent: agent.name, input: input.text, ...(files === undefined ? {} : { files }) })
  // an ephemeral conversation starts empty, in the run only (decision 004)
  if (run.ephemeral) run.history = [input]
  if (run.ephemeral && !run.recorder.durable) {
    // the loop's first steps run when the turn runs its body (after its middleware and any id check), not now
    const body = Effect.suspend(() => loop(agent, run))
    // a given id must be new: a durable record's insert refuses a taken one atomically; here the run has no record until it pauses
    return run.observe.turn("run", started, options.runId === undefined ? body : Effect.andThen(freshRunId(run.store, runId), body))
  }
  const memory = fiber.getRef(ChatMemory)
  const policy = options.onConversationBusy ?? agent.onConversationBusy
  const body = run.recorder.recorded(run, Effect.suspend(() => loop(agent, run)))
  // a turn of an agent that lets a newer input cancel it: cancellable from its first model call on
  const turn = agent.onConversationBusy === "interrupt" || agent.onConversationBusy === "rollback"
    ? Effect.suspend(() => cancellable(run, { start: run.history.length - 1, input }, agent.onConversationBusy === "rollback", body))
    : body
  return run.observe.turn(
    "run",
    started,
    Effect.scoped(Effect.andThen(begin(agent, run, memory, input, policy, options.runId !== undefined), turn))
  )
}

/**
 * What a run holds and writes before its loop, for the scope of the turn: its conversation
 * (one turn at a time) with the input added, and its first record (a durable store's). A run
 * id the caller gave (`givenId`) is checked new once the conversation is held and before
 * anything is written to it: a start delivered twice must not add its input again, nor
 * supersede the run it repeats (paused on this very conversation). The record's insert still
 * refuses a taken id atomically, for starts on two conversations at once.
 */
const begin = Effect.fnUntraced(function*(
  agent: Any,
  run: RunState,
  memory: ChatMemory.Service,
  input: UserMessage,
  policy: Agent.OnConversationBusy,
  givenId: boolean
) {
  if (!run.ephemeral) {
    const cancelled = yield* holdFor(agent, run, input, policy)
    if (givenId) yield* freshRunId(run.store, run.runId)
    yield* loadConversation(agent, run, memory, input, policy === "rollback" ? cancelled : undefined)
  }
  yield* run.recorder.begin(agent, run)
})

/**
 * Loads a named conversation, closes the tool calls it left without a result, and adds the
 * input. The calls of a run that crashed are closed as `Agent.recover` closes them
 * (`crashed.ts`): a recorded result is kept (the call never runs again), a call cut off while
 * running is cancelled unless its tool is idempotent, the others run now; any other call gets a
 * neutral "cancelled" result, so that the model never sees a call without an answer. The crashed
 * runs (in a batch or in a model call), and the runs paused on the conversation, are marked
 * failed: this turn supersedes them (a paused one could no longer resume: its calls are
 * answered now; a crashed one could no longer be recovered over this turn). A paused one only
 * once the closed calls and the input are written: when that write fails, it stays resumable.
 */
const loadConversation = Effect.fnUntraced(function*(
  agent: Any,
  run: RunState,
  memory: ChatMemory.Service,
  input: UserMessage,
  rolledBack: CancelledTurn | undefined
) {
  // a rollback: the turn this one cancelled leaves no message behind
  if (rolledBack !== undefined) yield* rollBack(memory, run.conversationId, rolledBack)
  for (const message of yield* memory.get(run.conversationId)) run.history.push(message)
  const dangling = danglingToolCalls(run.history)
  const recorded = new Map<string, Outcome>()
  // this turn holds the conversation: a run still recorded as running on it has crashed — in a
  // batch (its calls dangle) or in a model call; either way this turn supersedes it, so that
  // a later `Agent.recover` cannot write its older conversation back over this one
  for (const crashed of yield* run.recorder.crashed(run.conversationId)) {
    const taken = yield* run.recorder.takeOverLatest(crashed)
    if (taken === undefined) continue
    if (dangling.length > 0) for (const outcome of yield* finishCrashed(agent, run, taken)) recorded.set(outcome.callId, outcome)
    yield* run.recorder.end(taken.runId, taken.version, "failed")
  }
  const results = dangling.map((call): Outcome => recorded.get(call.id) ?? { _tag: "Cancelled", callId: call.id, toolName: call.name })
  // one write: the closed calls and the input are in the conversation together, or neither is
  yield* appendMessages(run, [...results.map(resultMessage), input])
  // once this turn's input is written: a turn that fails before leaves them resumable
  for (const paused of yield* run.store.list({ conversationId: run.conversationId, status: "paused" })) {
    yield* run.recorder.supersede(paused)
  }
})

/** A run (or resume) as the stream of its events, ending with the exit's event. */
export const streamOf = <E, R>(program: Effect.Effect<AgentExit.AgentExit<any>, E, R>): Stream.Stream<AgentEvent.AgentEvent, E, R> =>
  Stream.callback<AgentEvent.AgentEvent, E, R>((queue) =>
    program.pipe(
      withSink((event) => void Queue.offerUnsafe(queue, event)),
      Effect.onExit((exit) => Effect.sync(() => Exit.isSuccess(exit) ? Queue.endUnsafe(queue) : Queue.failCauseUnsafe(queue, exit.cause))),
      Effect.forkScoped
    ))
