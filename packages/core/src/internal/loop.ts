/**
 * The loop: iterations until the run completes, pauses or runs out of iterations. One
 * iteration: the model call → the gates → the batch (`batch.ts`).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import type * as Agent from "../Agent.js"
import type { RunError } from "../AgentError.js"
import type * as AgentExit from "../AgentExit.js"
import { BudgetExceeded, MaxIterationsReached } from "../AgentError.js"
import type * as Budget from "../Budget.js"
import { reached } from "../Budget.js"
import type { ChatResponse, ModelMessage } from "../ChatModel.js"
import { type ChatModel, ModelError, streams } from "../ChatModel.js"
import type * as Gate from "../Gate.js"
import { assistant } from "../Message.js"
import type { ModelInput } from "../Middleware.js"
import type { Outcome, ToolCall } from "../ToolCall.js"
import type { ToolError } from "../ToolError.js"
import type * as Toolkit from "../Toolkit.js"
import { admit } from "./admit.js"
import { failedBeforeHandler } from "./beforeHandler.js"
import { runBatch } from "./batch.js"
import { takeSteered } from "./busy.js"
import { calibrate, windowOf } from "./compaction.js"
import { emit } from "./events.js"
import { decodeArguments } from "./executor.js"
import type { BatchItem } from "./batchItem.js"
import { Runnable, runs, Done, Waiting } from "./batchItem.js"
import { finalAnswer, pause, pendingOf } from "./exits.js"
import type { RunState } from "./runState.js"
import { appendMessages, callIdsOf, spend } from "./runState.js"
import { andThen, settledResult, succeeded } from "./settled.js"
import { settledExit } from "./settledExit.js"
import { withModelAttributes } from "./tracing.js"

/**
 * Iterates until the run completes, pauses, or has made `maxIterations` model calls. Each
 * iteration runs in the place of the last (`next`): a run waiting for its tools keeps no
 * frame per iteration. Called when the run is to iterate: it reads and counts the iteration
 * at once and, unobserved, starts it (the model is asked for its call's effect) — so it is
 * called where its effect runs next: in a continuation (`next`), or inside `Effect.suspend`.
 */
export const loop = (agent: Agent.Any, run: RunState): Effect.Effect<AgentExit.AgentExit, RunError, any> => {
  if (run.iteration >= agent.maxIterations) return maxIterationsReached(agent, run)
  run.iteration += 1
  return run.observe.iteration(run.iteration, (then) => iteration(agent, run, then), nextOf(agent, run))
}

/**
 * What follows an iteration: the run's exit, or the next iteration. Built where it is given,
 * not kept by the run: a batch keeps only the loop to go on with (`runBatch`).
 */
const nextOf = (agent: Agent.Any, run: RunState): Next => (exit: AgentExit.AgentExit | undefined) =>
  exit === undefined ? loop(agent, run) : Effect.succeed(exit)

/**
 * Goes on with a run that stopped in a batch (resumed, or recovered): finishes the batch — checked
 * against the run's budget first, then its calls still waiting for a person (a budget stop held
 * them before anyone was asked) asked for, like any batch (`stopBefore`) — then iterates. No
 * batch: iterates at once.
 */
export const continueRun = (
  agent: Agent.Any,
  run: RunState,
  batch: ReadonlyArray<BatchItem>,
  environmentPause: boolean
): Effect.Effect<AgentExit.AgentExit, RunError, any> => {
  if (batch.length === 0) return loop(agent, run)
  const stop = stopBefore(agent, run, batch, batch.filter((item) => item._tag === "Waiting"))
  if (stop !== undefined) return stop
  // its end goes on with the run: its exit, or its next iteration
  return runBatch(agent, run, batch, environmentPause, loop) as Effect.Effect<AgentExit.AgentExit, RunError, any>
}

const maxIterationsReached = Effect.fnUntraced(function*(agent: Agent.Any, run: RunState) {
  const checkpoint = yield* run.recorder.stop(agent, run, "max-iterations", [], [])
  return yield* new MaxIterationsReached({ maxIterations: agent.maxIterations, checkpoint })
})

/**
 * One iteration: ask the model; a text answer completes the run; tool calls are gated, then
 * pause the run for a person or run as one batch. `undefined`: iterate again. Given `then`,
 * what ends the iteration goes on with it: the batch's end calls it in the executor's place.
 *
 * Plain functions, one per step that may wait (the window's compaction, the model call, the
 * memory's append, an asynchronous gate, the batch's record), each handing on to the next
 * at once when what it waited for is settled (decision 105). While the batch's tools run,
 * nothing of the iteration is kept: the batch runs in the place of the model call's
 * continuation. One generator for the iteration was measured on Effect 4: 3 run-loop operations
 * and 0.5 KB more per step, A ~+19% (decision 169).
 */
const iteration = (agent: Agent.Any, run: RunState, then: Next | undefined): Step => {
  // an agent that steers: the inputs steered into its conversation join the history first
  const steering = agent.onConversationBusy === "steer" && !run.ephemeral ? run.store.steering : undefined
  return steering === undefined ? modelStep(agent, run, then) : Effect.flatMap(takeSteered(agent, run, steering), () => modelStep(agent, run, then))
}

/** The iteration's model call, once the history is what it is sent: stopped by the budget, or made over the window. */
const modelStep = (agent: Agent.Any, run: RunState, then: Next | undefined): Step => {
  const spent = modelCallOverBudget(run)
  if (spent !== undefined) return endsWith(stopBeforeModelCall(agent, run, spent), then)
  const modelCalls = run.modelCalls
  const window = windowOf(agent, run)
  return isWindow(window)
    ? askModel(agent, run, modelCalls, window, then)
    : Effect.flatMap(window, (messages) => askModel(agent, run, modelCalls, messages, then))
}

/** What an iteration comes to: its exit (`undefined`: iterate again), or, given `then`, what `then` makes of it. */
type Step = Effect.Effect<AgentExit.AgentExit | undefined, RunError, any>

/** The model call, once the window is known; `modelCalls`: the run's count before the window was made. */
const askModel = (agent: Agent.Any, run: RunState, modelCalls: number, messages: ReadonlyArray<ModelMessage>, then: Next | undefined): Step => {
  // a summary call was made: its tokens and the call count before the run's own call
  const compacted = run.modelCalls === modelCalls ? undefined : modelCallOverBudget(run)
  if (compacted !== undefined) return endsWith(stopBeforeModelCall(agent, run, compacted), then)
  const toolChoice = run.toolChoice
  run.toolChoice = "auto"
  run.modelCalls += 1
  const response = run.observe.model({
    runId: run.runId,
    conversationId: run.conversationId,
    iteration: run.iteration,
    purpose: "answer",
    request: {
      system: agent.system,
      messages,
      tools: agent.toolDefinitions,
      toolChoice,
      settings: run.runSettings === undefined ? agent.settings : { ...agent.settings, ...run.runSettings },
      output: agent.output?.format,
      runId: run.runId
    }
  }, callModel(run))
  return Effect.flatMap(response, (response) => answered(agent, run, response, then))
}

/** What a text answer admits. */
const noCalls = { calls: [], refused: undefined } as const

/** The model's answer: counted, its calls admitted, appended to the history; then its end or its gated batch. */
const answered = (agent: Agent.Any, run: RunState, response: ChatResponse, then: Next | undefined): Step => {
  spend(run, response.usage)
  calibrate(run, response.usage)
  const { calls, refused } = response.toolCalls.length === 0 ? noCalls : admit(response.toolCalls, agent.limits, callIdsOf(run))
  const appended = appendMessages(run, [assistant(response.text, calls, response.reasoning, response.files)])
  // an ephemeral run's history is its own: appended already
  const next = () =>
    run.ephemeral
      ? afterAppend(agent, run, response.text, calls, refused, then)
      : Effect.flatMap(appended, () => afterAppend(agent, run, response.text, calls, refused, then))
  return calls.length > agent.limits.batchWidth ? Effect.andThen(truncated(run, agent.limits.batchWidth, calls), Effect.suspend(next)) : next()
}

/** Tells the developer that the answer's calls past `batchWidth` are not run (`BatchTruncated`), before any call is gated. */
const truncated = (run: RunState, batchWidth: number, calls: ReadonlyArray<ToolCall>) =>
  emit(run, () => ({
    _tag: "BatchTruncated",
    iteration: run.iteration,
    batchWidth,
    calls: calls.length,
    notRun: calls.slice(batchWidth).map((call) => ({ callId: call.id, toolName: call.name }))
  }))

/** Once the answer is in the history: a text answer completes the run; tool calls are gated. */
const afterAppend = (
  agent: Agent.Any,
  run: RunState,
  text: string,
  calls: ReadonlyArray<ToolCall>,
  refused: ReadonlyMap<string, ToolError> | undefined,
  then: Next | undefined
): Step => {
  if (calls.length === 0) return endsWith(finalAnswer(agent, run, text, true), then)
  const gating = gate(agent, run, calls, refused)
  return "batch" in gating ? gated(agent, run, gating, then) : Effect.flatMap(gating, (ready) => gated(agent, run, ready, then))
}

/** A gated batch: stopped (budget, approval) or recorded, then run. */
const gated = (agent: Agent.Any, run: RunState, { batch, pending }: Gated, then: Next | undefined): Step => {
  const stop = stopBefore(agent, run, batch, pending)
  if (stop !== undefined) return endsWith(stop, then)
  const recorded = run.recorder.batch(agent, run, batch)
  const environmentPause = agent.onEnvironmentError === "pause"
  // a run nothing records goes on at once; given `then` (the run's next step), the batch's end goes on with the loop
  const iterate = then === undefined ? undefined : loop
  return succeeded(recorded)
    ? runBatch(agent, run, batch, environmentPause, iterate)
    : Effect.flatMap(recorded, () => runBatch(agent, run, batch, environmentPause, iterate))
}

/** What follows an iteration: the run's exit, or the next iteration (`nextOf`). */
type Next = (exit: AgentExit.AgentExit | undefined) => Effect.Effect<AgentExit.AgentExit, any, any>

/** `effect`, then `then` when given (at once when the effect is a success already). */
const endsWith = <A, E>(
  effect: Effect.Effect<A, E, any>,
  then: Next | undefined
): Effect.Effect<A | AgentExit.AgentExit, E | RunError, any> =>
  then === undefined ? effect : andThen(effect as Effect.Effect<AgentExit.AgentExit | undefined, E, any>, then)

/** The limit of the run's budget that stops its next model call, if any: tool calls are counted before a batch, so that a model call that may only answer is never refused for them. */
const modelCallOverBudget = (run: RunState): Over | undefined =>
  run.budget === undefined ? undefined : reached({ ...run.budget, toolCalls: undefined }, spentOf(run))

/** Stops the run before the iteration's own model call: the iteration is not counted (a continue makes it). */
const stopBeforeModelCall = (agent: Agent.Any, run: RunState, over: Over) => {
  run.iteration -= 1
  return budgetExceeded(agent, run, over, [])
}

const isWindow = (u: ReadonlyArray<ModelMessage> | Effect.Effect<ReadonlyArray<ModelMessage>, unknown, unknown>): u is ReadonlyArray<ModelMessage> =>
  Array.isArray(u)

/** What the run has spent, in its budget's units: its tool calls are those whose handler was called (`ranHandler`). */
const spentOf = (run: RunState): Budget.Spent => ({
  tokens: run.usage.totalTokens,
  inputTokens: run.usage.inputTokens,
  outputTokens: run.usage.outputTokens,
  modelCalls: run.modelCalls,
  toolCalls: countOf(run.outcomes, ranHandler)
})

const countOf = <A>(items: ReadonlyArray<A>, counts: (item: A) => boolean): number => {
  let n = 0
  for (const item of items) if (counts(item)) n += 1
  return n
}

/**
 * Whether an outcome is that of a call whose handler was called: it succeeded, was suspended,
 * or failed — not before its handler. Rejected, replied and cancelled calls never ran.
 */
const ranHandler = (outcome: Outcome): boolean =>
  outcome._tag === "Succeeded" || outcome._tag === "Suspended" ||
  (outcome._tag === "Failed" && !failedBeforeHandler(outcome.toolName, outcome.error))

/**
 * Whether a call of a batch about to run would call its handler — a call waiting for a person
 * counted as if approved. A call without decoded arguments (the gate's for an unknown tool or
 * arguments that do not decode; one a person approved; one of a checkpoint) has them decoded
 * here: a call of an unknown tool, or whose arguments do not decode, fails before its handler.
 * An asynchronous schema's decoding is not waited for: its call is counted.
 */
const callsHandler = (toolkit: Toolkit.Any) => (item: BatchItem): boolean => {
  if (item._tag === "Done") return false
  if (item._tag !== "Runnable" || item.decoded === true) return true
  const tool = toolkit.entries.get(item.call.name)
  if (tool === undefined) return false
  const decoded = settledResult(decodeArguments(tool, item.call.args))
  return decoded === undefined || Result.isSuccess(decoded)
}

/**
 * What stops a gated batch before it runs, if anything: the budget (`batchOverBudget`), then
 * the calls that wait for a person (`pending`, an approval pause) — in this order, so that a
 * person is never asked to approve calls the budget would then stop, and asked again after the
 * raise (decision 067). A batch a budget stop held keeps its waiting calls: the resume that
 * raises the budget asks for them then (`continueRun`).
 */
export const stopBefore = (
  agent: Agent.Any,
  run: RunState,
  batch: ReadonlyArray<BatchItem>,
  pending: ReadonlyArray<BatchItem>
): Effect.Effect<AgentExit.AgentExit, RunError> | undefined => {
  const over = batchOverBudget(run, batch)
  if (over !== undefined) return budgetExceeded(agent, run, over, batch)
  return pending.length > 0 ? pause(agent, run, "approval", batch, pendingOf(pending)) : undefined
}

/**
 * The limit a batch about to run is stopped at: a token limit the run has reached (the model
 * call that asked for the batch may have crossed it), or the tool-call limit its calls would
 * pass — the calls whose handler would be called (`callsHandler`), those that wait for a person
 * counted as if approved; a call that fails before its handler is not. Model calls are counted before
 * a model call only. `undefined`: the batch runs; so does one with no call to run. (A batch that
 * resumes a delegate's paused child is never stopped: it passed this check before it first ran,
 * and the run has spent nothing since.)
 */
export const batchOverBudget = (run: RunState, batch: ReadonlyArray<BatchItem>): Over | undefined => {
  const budget = run.budget
  if (budget === undefined) return undefined
  if (!batch.some((item) => runs(item) || item._tag === "Waiting")) return undefined
  const spent = spentOf(run)
  const tokens = reached({ tokens: budget.tokens, inputTokens: budget.inputTokens, outputTokens: budget.outputTokens }, spent)
  if (tokens !== undefined) return tokens
  const allowed = budget.toolCalls
  if (allowed === undefined) return undefined
  const toRun = countOf(batch, callsHandler(run.agent.toolkit))
  return toRun > 0 && spent.toolCalls + toRun > allowed ? { limit: "toolCalls", allowed, used: spent.toolCalls } : undefined
}

/** A limit of a run's budget that stops it: what it allows, and what the run has used. */
type Over = { readonly limit: Budget.Limit; readonly allowed: number; readonly used: number }

/** Stops the run at a limit of its budget: recorded (with the batch it did not run), then `BudgetExceeded`. */
export const budgetExceeded = Effect.fnUntraced(function*(
  agent: Agent.Any,
  run: RunState,
  over: Over,
  batch: ReadonlyArray<BatchItem>
) {
  const checkpoint = yield* run.recorder.stop(agent, run, "budget", batch, [])
  return yield* new BudgetExceeded({ ...over, checkpoint })
})

/**
 * The model call: streamed when someone listens and the model really streams (text arrives
 * as `TextDelta` events); else one `generate`, whose text is one delta for listeners.
 */
const callModel = (run: RunState) => (input: ModelInput): Effect.Effect<ChatResponse, ModelError> =>
  withModelAttributes(run.traced, run.model, respond(run, run.model, input))

const respond = (run: RunState, model: ChatModel["Service"], { iteration, request }: ModelInput): Effect.Effect<ChatResponse, ModelError> => {
  if (run.sinks.length === 0) return model.generate(request)
  if (!streams(model)) {
    return Effect.tap(model.generate(request), (response) =>
      response.text.length === 0 ? Effect.void : emit(run, () => ({ _tag: "TextDelta", iteration, text: response.text })))
  }
  return Stream.runFoldEffect(
    model.stream(request),
    (): ChatResponse | undefined => undefined,
    (done, part) =>
      part._tag === "Done"
        ? Effect.succeed(part.response)
        : Effect.as(emit(run, () => ({ _tag: "TextDelta", iteration, text: part.text })), done)
  ).pipe(Effect.flatMap((response) =>
    response === undefined
      ? Effect.fail(new ModelError({ reason: "invalid-response", message: "the model's stream ended without a response" }))
      : Effect.succeed(response)
  ))
}

/** The calls of a batch once gated, and those that wait for a person. */
interface Gated {
  readonly batch: Array<BatchItem>
  readonly pending: Array<BatchItem>
}

/**
 * Gates every call serially, in call order, before any of them runs. A call beyond the agent's
 * limits has its error already; a call's arguments are decoded first: a call of an unknown
 * tool, or whose arguments do not decode, reaches no gate and runs as a failure (the model is
 * told what was wrong). A call that a decoding or a gate settles at once (a synchronous
 * schema, `Gate.proceed()`) is gated without a step of its own — when all are, the batch comes
 * back as a value; from the first that does not, the rest are gated in order by `gateRest`.
 */
const gate = (
  agent: Agent.Any,
  run: RunState,
  calls: ReadonlyArray<ToolCall>,
  refused: ReadonlyMap<string, ToolError> | undefined
): Gated | Effect.Effect<Gated, never, any> => {
  const gated: Gated = { batch: new Array(calls.length), pending: [] }
  for (let i = 0; i < calls.length; i++) {
    const item = gateOne(agent, run, calls[i]!, refused)
    if (!isItem(item)) return gateRest(agent, run, calls, refused, gated, i, item)
    place(gated, i, item)
  }
  return gated
}

const gateRest = Effect.fnUntraced(function*(
  agent: Agent.Any,
  run: RunState,
  calls: ReadonlyArray<ToolCall>,
  refused: ReadonlyMap<string, ToolError> | undefined,
  gated: Gated,
  from: number,
  first: Effect.Effect<BatchItem, never, any>
) {
  place(gated, from, yield* first)
  for (let i = from + 1; i < calls.length; i++) {
    const item = gateOne(agent, run, calls[i]!, refused)
    place(gated, i, isItem(item) ? item : yield* item)
  }
  return gated
})

const isItem = (u: BatchItem | Effect.Effect<BatchItem, never, any>): u is BatchItem => "call" in u

const place = (gated: Gated, i: number, item: BatchItem) => {
  gated.batch[i] = item
  if (item._tag === "Waiting") gated.pending.push(item)
}

/** One call, gated: its batch item, or the effect that decides it (an asynchronous decoding or gate). */
const gateOne = (
  agent: Agent.Any,
  run: RunState,
  call: ToolCall,
  refused: ReadonlyMap<string, ToolError> | undefined
): BatchItem | Effect.Effect<BatchItem, never, any> => {
  const beyond = refused?.get(call.id)
  if (beyond !== undefined) return Done({ call, outcome: { _tag: "Failed", callId: call.id, toolName: call.name, error: beyond } })
  const tool = agent.toolkit.entries.get(call.name)
  // it runs as the failure that tells the model what was wrong
  if (tool === undefined) return Runnable({ call })
  const decoding = decodeArguments(tool, call.args)
  const decoded = settledResult(decoding)
  if (decoded === undefined) {
    return Effect.flatMap(Effect.result(decoding), (args) => {
      const item = judged(agent, run, call, tool, args)
      return isItem(item) ? Effect.succeed(item) : item
    })
  }
  return judged(agent, run, call, tool, decoded)
}

/** A call with its decoded arguments (or their failure) and the gate's verdict. */
const judged = (
  agent: Agent.Any,
  run: RunState,
  call: ToolCall,
  tool: Toolkit.Entry,
  args: Result.Result<unknown, ToolError>
): BatchItem | Effect.Effect<BatchItem, never, any> => {
  if (Result.isFailure(args)) return Runnable({ call })
  const verdict = agent.gate({ name: call.name, call, args: args.success, tool, state: run.state })
  const now = settledExit(verdict)
  if (now !== undefined && Exit.isSuccess(now)) return itemOf(call, args.success, now.value)
  return Effect.map(verdict, (v) => itemOf(call, args.success, v))
}

const itemOf = (call: ToolCall, args: unknown, verdict: Gate.Verdict): BatchItem => {
  // a switch, not `Gate.match`: its cases would be an object and four closures per call
  switch (verdict._tag) {
    case "Proceed":
      return Runnable({ call, decoded: true, args })
    case "Pause":
      return Waiting({ call, why: verdict.why })
    case "Reject":
      return Done({
        call,
        outcome: { _tag: "Rejected", callId: call.id, toolName: call.name, ...(verdict.message === undefined ? {} : { message: verdict.message }) }
      })
    case "Reply":
      return Done({ call, outcome: { _tag: "Replied", callId: call.id, toolName: call.name, value: verdict.value } })
  }
}
