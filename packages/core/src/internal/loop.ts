/**
 * The one loop: model call → gates → batch → fold state → results → next iteration.
 */
import { Effect, Exit, Option, Stream } from "effect"
import type * as Agent from "../Agent.js"
import { MaxIterationsReached } from "../AgentError.js"
import type * as AgentExit from "../AgentExit.js"
import { addUsage, ChatModel, ModelError, streams } from "../ChatModel.js"
import type { ChatRequest, ChatResponse } from "../ChatModel.js"
import type * as Gate from "../Gate.js"
import type { IterationInput, ModelInput } from "../Middleware.js"
import { assistant } from "../Message.js"
import type { ToolCall } from "../ToolCall.js"
import { executeBatch } from "./batch.js"
import { compose, emit, now } from "./events.js"
import { checkpointOf, completed, pause, pendingOf } from "./exits.js"
import type { BatchItem, Next, RunState } from "./runState.js"
import { appendThen } from "./runState.js"
import { withService } from "./service.js"
import { settledExit } from "./settled.js"
import { annotate, withSpan } from "./tracing.js"

/** The calls of a batch once gated: each with its outcome when the gate decided one, and the ids of those to pause for. */
interface Gated {
  readonly batch: Array<BatchItem>
  readonly pending: Array<string>
}

const addVerdict = (gated: Gated, i: number, call: ToolCall, verdict: Gate.Verdict) => {
  switch (verdict._tag) {
    case "Proceed":
      gated.batch[i] = { call }
      break
    case "Pause":
      gated.batch[i] = { call }
      gated.pending.push(call.id)
      break
    case "Reject":
      gated.batch[i] = { call, outcome: { _tag: "Rejected", callId: call.id, toolName: call.name, ...(verdict.reason === undefined ? {} : { reason: verdict.reason }) } }
      break
    case "Reply":
      gated.batch[i] = { call, outcome: { _tag: "Replied", callId: call.id, toolName: call.name, value: verdict.value } }
      break
  }
}

/**
 * Gates every call serially, in call order, before any of them runs, then `then`. A verdict
 * the gate returns as a completed effect (`Gate.proceed`, `Gate.pause`, …) is read at once.
 */
const gateBatch = <A, E, R>(
  agent: Agent.Any,
  run: RunState,
  calls: ReadonlyArray<ToolCall>,
  then: (gated: Gated) => Effect.Effect<A, E, R>,
  // the batch at its final size: it lives as long as its calls run (a grown array keeps 17 slots)
  gated: Gated = { batch: new Array(calls.length), pending: [] },
  from = 0
): Effect.Effect<A, E, any> => {
  for (let i = from; i < calls.length; i++) {
    const call = calls[i]!
    const verdict = agent.gate({ call, tool: agent.toolkit.entries.get(call.name), state: run.state })
    const now = settledExit(verdict)
    if (now === undefined) {
      return Effect.flatMap(verdict, (v) => {
        addVerdict(gated, i, call, v)
        return gateBatch(agent, run, calls, then, gated, i + 1)
      })
    }
    if (Exit.isFailure(now)) return Effect.failCause(now.cause)
    addVerdict(gated, i, call, now.value)
  }
  return then(gated)
}

/**
 * The model call: streamed when someone listens and the model really streams (text arrives
 * as `TextDelta` events); else one `generate`, whose text is one delta for listeners.
 */
const callModel = (run: RunState, request: ChatRequest, iteration: number) =>
  withService(ChatModel, (model) => {
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

const callModelWithMiddleware = (agent: Agent.Any, run: RunState, input: ModelInput) =>
  agent.middleware.model.length === 0
    ? callModel(run, input.request, input.iteration)
    : compose(agent.middleware.model, (i: ModelInput) => callModel(run, i.request, i.iteration))(input)

const modelCall = Effect.fnUntraced(
  function*(agent: Agent.Any, run: RunState, input: ModelInput) {
    yield* emit(run, () => ({ _tag: "ModelCalled", iteration: input.iteration, messages: input.request.messages.length }))
    const started = yield* now(run)
    const response = yield* callModelWithMiddleware(agent, run, input)
    const finished = yield* now(run)
    yield* emit(run, () => ({
      _tag: "ModelResponded",
      iteration: input.iteration,
      text: response.text,
      toolCalls: response.toolCalls.length,
      finishReason: response.finishReason,
      usage: response.usage,
      durationMillis: finished - started
    }))
    yield* annotate(run.traced, () => ({ "agentfx.model.finish_reason": response.finishReason, "agentfx.model.tool_calls": response.toolCalls.length }))
    return response
  })

/**
 * The model call in its span, between its events; just the call when nobody observes, and
 * with no middleware input built when no middleware takes one. `input` is the iteration
 * middleware's (`undefined` when there is none).
 */
const modelStep = (agent: Agent.Any, run: RunState, input: IterationInput | undefined, request: ChatRequest) => {
  const observed = run.sinks.length > 0 || run.traced
  if (!observed && agent.middleware.model.length === 0) return callModel(run, request, run.iteration)
  const modelInput: ModelInput = input === undefined
    ? { runId: run.runId, conversationId: run.conversationId, iteration: run.iteration, request }
    : { ...input, request }
  return observed
    ? withSpan(run.traced, "agentfx.model", () => ({ "agentfx.iteration": modelInput.iteration }))(modelCall(agent, run, modelInput))
    : callModelWithMiddleware(agent, run, modelInput)
}

/** After the model answered: complete, pause for approval, or run the batch; then `next`. */
const afterResponse = <A>(
  agent: Agent.Any,
  run: RunState,
  response: ChatResponse,
  next: Next<A>
): Effect.Effect<A, Agent.RunError, any> => {
  if (response.toolCalls.length === 0) return next(agent, run, completed(run, response.text))
  return gateBatch(agent, run, response.toolCalls, ({ batch, pending }) => {
    if (pending.length === 0) return executeBatch(agent, run, batch, agent.onEnvironmentError === "pause", next)
    const paused = batch.filter((item) => pending.includes(item.call.id))
    return Effect.flatMap(pause(agent, run, "approval", batch, pendingOf(paused)), (exit) => next(agent, run, exit))
  })
}

/**
 * The work of one iteration: model call, gates, batch; then `next`. Plain chains, not
 * generators, each step in its predecessor's place: a run suspended in a tool keeps no frame
 * of them alive (docs/performance.md).
 */
const iterationBody = <A>(agent: Agent.Any, run: RunState, input: IterationInput | undefined, next: Next<A>) =>
  Effect.flatMap(
    modelStep(agent, run, input, { system: agent.system, messages: run.history.slice(), tools: agent.toolDefinitions, toolChoice: "auto" }),
    (response) => {
      run.usage = addUsage(run.usage, response.usage)
      return appendThen(run, [assistant(response.text, response.toolCalls)], () => afterResponse(agent, run, response, next))
    }
  )

const exitOption: Next<Option.Option<AgentExit.AgentExit>> = (_agent, _run, exit) => Effect.succeed(Option.fromNullable(exit))

/**
 * The next iteration, in the place of the last step of this one: without iteration
 * middleware and tracer, nothing wraps an iteration, and the loop is one chain that keeps no
 * frame per iteration. Otherwise each iteration runs in its span and middleware, which see
 * `None` for "iterate again".
 */
const iterate = (agent: Agent.Any, run: RunState): Effect.Effect<AgentExit.AgentExit, Agent.RunError, any> => {
  if (run.iteration >= agent.maxIterations) {
    return Effect.flatMap(
      checkpointOf(agent, run, "max-iterations", [], []),
      (checkpoint) => Effect.fail(new MaxIterationsReached({ maxIterations: agent.maxIterations, checkpoint }))
    )
  }
  run.iteration += 1
  if (agent.middleware.iteration.length === 0 && !run.traced) return iterationBody(agent, run, undefined, untilDone)
  const input: IterationInput = { runId: run.runId, conversationId: run.conversationId, iteration: run.iteration }
  const body = agent.middleware.iteration.length === 0
    ? iterationBody(agent, run, undefined, exitOption)
    : compose(agent.middleware.iteration, (i: IterationInput) => iterationBody(agent, run, i, exitOption))(input)
  return Effect.flatMap(
    withSpan(run.traced, "agentfx.iteration", () => ({ "agentfx.iteration": input.iteration }))(body),
    (exit) => Option.isSome(exit) ? Effect.succeed(exit.value) : loop(agent, run)
  )
}

/** Ends the run with its exit, or iterates again. */
export const untilDone: Next<AgentExit.AgentExit> = (agent, run, exit) =>
  exit === undefined ? loop(agent, run) : Effect.succeed(exit)

/** Iterates until the run completes, pauses or fails. */
export const loop = (agent: Agent.Any, run: RunState): Effect.Effect<AgentExit.AgentExit, Agent.RunError, any> =>
  Effect.suspend(() => iterate(agent, run))
