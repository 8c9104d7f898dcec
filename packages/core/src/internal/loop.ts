/**
 * The loop: iterations until the run completes, pauses or runs out of iterations. One
 * iteration: the model call → the gates → the batch (`batch.ts`).
 */
import { Effect, Either, Stream } from "effect"
import type * as Agent from "../Agent.js"
import { MaxIterationsReached } from "../AgentError.js"
import type { ChatResponse } from "../ChatModel.js"
import { addUsage, ChatModel, ModelError, streams } from "../ChatModel.js"
import { match as matchVerdict } from "../Gate.js"
import { assistant } from "../Message.js"
import type { ModelInput } from "../Middleware.js"
import type { ToolCall } from "../ToolCall.js"
import { executeBatch } from "./batch.js"
import { emit } from "./events.js"
import { decodeArguments } from "./executor.js"
import { checkpointOf, completed, pause, pendingOf } from "./exits.js"
import type { BatchItem, RunState } from "./runState.js"
import { appendMessages } from "./runState.js"
import { withService } from "./service.js"
import { settledEither } from "./settled.js"

/** Iterates until the run completes, pauses, or has made `maxIterations` model calls. */
export const loop = Effect.fnUntraced(function*(agent: Agent.Any, run: RunState) {
  while (run.iteration < agent.maxIterations) {
    run.iteration += 1
    const exit = yield* run.observe.iteration(run.iteration, iteration(agent, run))
    if (exit !== undefined) return exit
  }
  const checkpoint = yield* checkpointOf(agent, run, "max-iterations", [], [])
  return yield* Effect.fail(new MaxIterationsReached({ maxIterations: agent.maxIterations, checkpoint }))
})

/**
 * One iteration: ask the model; a text answer completes the run; tool calls are gated, then
 * pause the run for a person or run as one batch. `undefined`: iterate again.
 */
const iteration = Effect.fnUntraced(function*(agent: Agent.Any, run: RunState) {
  const request = { system: agent.system, messages: run.history.slice(), tools: agent.toolDefinitions, toolChoice: "auto" as const }
  const input: ModelInput = { runId: run.runId, conversationId: run.conversationId, iteration: run.iteration, request }
  const response = yield* run.observe.model(input, (input) => callModel(run, input))
  run.usage = addUsage(run.usage, response.usage)
  yield* appendMessages(run, [assistant(response.text, response.toolCalls)])
  if (response.toolCalls.length === 0) return completed(run, response.text)
  const { batch, pending } = yield* gate(agent, run, response.toolCalls)
  if (pending.length > 0) return yield* pause(agent, run, "approval", batch, pendingOf(pending))
  return yield* executeBatch(agent, run, batch, agent.onEnvironmentError === "pause")
})

/**
 * The model call: streamed when someone listens and the model really streams (text arrives
 * as `TextDelta` events); else one `generate`, whose text is one delta for listeners.
 */
const callModel = (run: RunState, { iteration, request }: ModelInput) =>
  withService(ChatModel, (model): Effect.Effect<ChatResponse, ModelError> => {
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
  })

/**
 * Gates every call serially, in call order, before any of them runs. A call's arguments are
 * decoded first: a call of an unknown tool, or whose arguments do not decode, reaches no gate
 * and runs as a failure (the model is told what was wrong). Returns the batch and its calls
 * that wait for a person.
 */
const gate = Effect.fnUntraced(function*(agent: Agent.Any, run: RunState, calls: ReadonlyArray<ToolCall>) {
  const batch: Array<BatchItem> = new Array(calls.length)
  const pending: Array<BatchItem> = []
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!
    const tool = agent.toolkit.entries.get(call.name)
    const args = tool === undefined ? undefined : decodeArguments(tool, call.args)
    const decoded = args === undefined ? undefined : settledEither(args) ?? (yield* Effect.either(args))
    if (tool === undefined || decoded === undefined || Either.isLeft(decoded)) {
      batch[i] = { call }
      continue
    }
    const verdict = yield* agent.gate({ name: call.name, call, args: decoded.right, tool, state: run.state })
    batch[i] = matchVerdict(verdict, {
      Proceed: (): BatchItem => ({ call, args: { value: decoded.right } }),
      Pause: (): BatchItem => {
        const item = { call, args: { value: decoded.right } }
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

