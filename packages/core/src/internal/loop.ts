/**
 * The loop: iterations until the run completes, pauses or runs out of iterations. One
 * iteration: the model call → the gates → the batch (`batch.ts`).
 */
import { Effect, Either, Stream } from "effect"
import type * as Agent from "../Agent.js"
import type { RunError } from "../AgentError.js"
import type * as AgentExit from "../AgentExit.js"
import { BudgetExceeded, MaxIterationsReached } from "../AgentError.js"
import type * as Budget from "../Budget.js"
import { reached } from "../Budget.js"
import type { ChatResponse } from "../ChatModel.js"
import { addUsage, ChatModel, ModelError, streams } from "../ChatModel.js"
import { match as matchVerdict } from "../Gate.js"
import { assistant } from "../Message.js"
import type { ModelInput } from "../Middleware.js"
import type { ToolCall } from "../ToolCall.js"
import type { ToolError } from "../ToolError.js"
import { admit } from "./admit.js"
import { executeBatch } from "./batch.js"
import { emit } from "./events.js"
import { decodeArguments } from "./executor.js"
import { finalAnswer, pause, pendingOf, recordBatch, recordStop } from "./exits.js"
import type { BatchItem, RunState } from "./runState.js"
import { appendMessages } from "./runState.js"
import { withService } from "./service.js"
import { settledEither } from "./settled.js"
import { annotate } from "./tracing.js"

/**
 * Iterates until the run completes, pauses, or has made `maxIterations` model calls. Each
 * iteration runs in the place of the last (`next`): a run waiting for its tools keeps no
 * frame per iteration.
 */
export const loop = (agent: Agent.Any, run: RunState): Effect.Effect<AgentExit.AgentExit, RunError, any> =>
  Effect.suspend(() => {
    if (run.iteration >= agent.maxIterations) return maxIterationsReached(agent, run)
    run.iteration += 1
    return Effect.flatMap(run.observe.iteration(run.iteration, Effect.flatten(iteration(agent, run))), (exit) => next(agent, run, exit))
  })

const next = (agent: Agent.Any, run: RunState, exit: AgentExit.AgentExit | undefined) =>
  exit === undefined ? loop(agent, run) : Effect.succeed(exit)

const maxIterationsReached = Effect.fnUntraced(function*(agent: Agent.Any, run: RunState) {
  const checkpoint = yield* recordStop(agent, run, "max-iterations", [], [])
  return yield* new MaxIterationsReached({ maxIterations: agent.maxIterations, checkpoint })
})

/**
 * One iteration: ask the model; a text answer completes the run; tool calls are gated, then
 * pause the run for a person or run as one batch. Returns what ends the iteration — its exit,
 * or the batch — which runs in the iteration's place (`Effect.flatten`): while the batch's
 * tools run, nothing of the iteration is kept. `undefined`: iterate again.
 */
const iteration = Effect.fnUntraced(function*(agent: Agent.Any, run: RunState) {
  const spent = run.budget === undefined ? undefined : reached(run.budget, spentOf(run))
  if (spent !== undefined) return budgetExceeded(agent, run, spent, [])
  const toolChoice = run.toolChoice
  run.toolChoice = "auto"
  run.modelCalls += 1
  const response = yield* run.observe.model({
    runId: run.runId,
    conversationId: run.conversationId,
    iteration: run.iteration,
    request: {
      system: agent.system,
      messages: run.history.slice(),
      tools: agent.toolDefinitions,
      toolChoice,
      settings: run.settings,
      output: agent.output?.format,
      runId: run.runId
    }
  }, callModel(run))
  run.usage = addUsage(run.usage, response.usage)
  const { calls, refused } = admit(response.toolCalls, agent.limits)
  yield* appendMessages(run, [assistant(response.text, calls)])
  if (calls.length === 0) return finalAnswer(agent, run, response.text, true)
  const { batch, pending } = yield* gate(agent, run, calls, refused)
  if (pending.length > 0) return pause(agent, run, "approval", batch, pendingOf(pending))
  const allowed = run.budget?.toolCalls
  if (allowed !== undefined) {
    const used = spentOf(run).toolCalls
    if (used + batch.filter((item) => item.outcome === undefined).length > allowed) {
      return budgetExceeded(agent, run, { limit: "toolCalls", allowed, used }, batch)
    }
  }
  yield* recordBatch(agent, run, batch)
  return executeBatch(agent, run, batch, agent.onEnvironmentError === "pause")
})

/** What the run has spent, in its budget's units. */
const spentOf = (run: RunState): Budget.Spent => ({
  tokens: run.usage.totalTokens,
  inputTokens: run.usage.inputTokens,
  outputTokens: run.usage.outputTokens,
  modelCalls: run.modelCalls,
  toolCalls: run.outcomes.filter((outcome) => outcome._tag === "Succeeded" || outcome._tag === "Failed" || outcome._tag === "Suspended").length
})

/** Stops the run at a limit of its budget: recorded (with the batch it did not run), then `BudgetExceeded`. */
const budgetExceeded = Effect.fnUntraced(function*(
  agent: Agent.Any,
  run: RunState,
  over: { readonly limit: Budget.Limit; readonly allowed: number; readonly used: number },
  batch: ReadonlyArray<BatchItem>
) {
  const checkpoint = yield* recordStop(agent, run, "budget", batch, [])
  return yield* new BudgetExceeded({ ...over, checkpoint })
})

/**
 * The model call: streamed when someone listens and the model really streams (text arrives
 * as `TextDelta` events); else one `generate`, whose text is one delta for listeners.
 */
const callModel = (run: RunState) => (input: ModelInput) =>
  withService(ChatModel, (model): Effect.Effect<ChatResponse, ModelError> =>
    run.traced && model.model !== undefined
      ? Effect.zipRight(annotate(true, () => ({ "gen_ai.request.model": model.model })), respond(run, model, input))
      : respond(run, model, input))

const respond = (run: RunState, model: ChatModel["Type"], { iteration, request }: ModelInput): Effect.Effect<ChatResponse, ModelError> => {
  if (run.sinks.length === 0) return model.generate(request)
  if (!streams(model)) {
    return Effect.tap(model.generate(request), (response) =>
      response.text.length === 0 ? Effect.void : emit(run, () => ({ _tag: "TextDelta", iteration, text: response.text })))
  }
  return Stream.runFoldEffect(
    model.stream(request),
    undefined as ChatResponse | undefined,
    (done, part) =>
      part._tag === "Done"
        ? Effect.succeed(part.response)
        : Effect.as(emit(run, () => ({ _tag: "TextDelta", iteration, text: part.text })), done)
  ).pipe(Effect.flatMap((response) =>
    response === undefined
      ? Effect.fail(new ModelError({ reason: "InvalidResponse", message: "the model's stream ended without a response" }))
      : Effect.succeed(response)
  ))
}

/**
 * Gates every call serially, in call order, before any of them runs. A call beyond the agent's
 * limits has its error already; a call's arguments are decoded first: a call of an unknown
 * tool, or whose arguments do not decode, reaches no gate and runs as a failure (the model is
 * told what was wrong). Returns the batch and its calls that wait for a person.
 */
const gate = Effect.fnUntraced(function*(
  agent: Agent.Any,
  run: RunState,
  calls: ReadonlyArray<ToolCall>,
  refused: ReadonlyMap<string, ToolError>
) {
  const batch: Array<BatchItem> = new Array(calls.length)
  const pending: Array<BatchItem> = []
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!
    const beyond = refused.size === 0 ? undefined : refused.get(call.id)
    if (beyond !== undefined) {
      batch[i] = { call, outcome: { _tag: "Failed", callId: call.id, toolName: call.name, error: beyond } }
      continue
    }
    const tool = agent.toolkit.entries.get(call.name)
    const args = tool === undefined ? undefined : decodeArguments(tool, call.args)
    const decoded = args === undefined ? undefined : settledEither(args) ?? (yield* Effect.either(args))
    if (tool === undefined || decoded === undefined || Either.isLeft(decoded)) {
      batch[i] = { call, verdict: "proceed" } // it runs as the failure that tells the model what was wrong
      continue
    }
    const verdict = yield* agent.gate({ name: call.name, call, args: decoded.right, tool, state: run.state })
    batch[i] = matchVerdict(verdict, {
      Proceed: (): BatchItem => ({ call, decoded: true, args: decoded.right, verdict: "proceed" }),
      Pause: (): BatchItem => {
        const item: BatchItem = { call, decoded: true, args: decoded.right, verdict: "pause" }
        pending.push(item)
        return item
      },
      Reject: ({ message }): BatchItem => ({
        call,
        outcome: { _tag: "Rejected", callId: call.id, toolName: call.name, ...(message === undefined ? {} : { message }) }
      }),
      Reply: ({ value }): BatchItem => ({ call, outcome: { _tag: "Replied", callId: call.id, toolName: call.name, value } })
    })
  }
  return { batch, pending }
})

