/**
 * A turn: `Agent.run` starts a run, `Agent.resume` continues a paused one. Either reads its
 * fiber once (memory, event sinks, tracer), builds the run's state, and runs the loop inside
 * what observes the turn. Also: a run as the stream of its events.
 */
import type { Fiber } from "effect"
import { Context, Effect, Exit, HashSet, Stream } from "effect"
import type { Any, RunOptions, Slots } from "../Agent.js"
import { ConversationDiverged, InvalidRunInput } from "../AgentError.js"
import type * as AgentEvent from "../AgentEvent.js"
import { currentSinks } from "../AgentEvent.js"
import type * as AgentExit from "../AgentExit.js"
import { emptyUsage } from "../ChatModel.js"
import { ChatMemory } from "../ChatMemory.js"
import type * as Decision from "../Decision.js"
import { danglingToolCalls, user } from "../Message.js"
import type { Outcome } from "../ToolCall.js"
import { executeBatch } from "./batch.js"
import * as CheckpointCodec from "./checkpoint.js"
import { ephemeralId, newId } from "./ids.js"
import { loop } from "./loop.js"
import { observerOf, untouched } from "./observe.js"
import * as Resume from "./resume.js"
import type { RunState } from "./runState.js"
import { appendMessages, resultMessage } from "./runState.js"
import { isTraced } from "./tracing.js"

/** The run's initial state, or the refusal naming undeclared slots. */
const initialState = (agent: Any, given: { readonly [slot: string]: unknown } | undefined) => {
  const unknown = given === undefined ? [] : Object.keys(given).filter((name) => !(name in agent.slots))
  if (unknown.length > 0) {
    return new InvalidRunInput({
      problems: [
        `state for undeclared slot(s) ${unknown.map((n) => `"${n}"`).join(", ")}; declared: ${Object.keys(agent.slots).join(", ") || "none"}`
      ]
    })
  }
  const state: { [slot: string]: unknown } = {}
  const slots = agent.slots as Slots
  for (const name in slots) state[name] = given !== undefined && name in given ? given[name] : slots[name]!.initial
  return state
}

const noSinks: ReadonlyArray<AgentEvent.Sink> = []

/** The run's state, with who watches it (read from its fiber) and its observer; one object shape for every run. */
const runState = (
  agent: Any,
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  fields: Omit<RunState, "sinks" | "traced" | "agentName" | "middleware" | "observe">
): RunState => {
  const sinks = fiber.getFiberRef(currentSinks)
  const run: { -readonly [K in keyof RunState]: RunState[K] } = {
    runId: fields.runId,
    conversationId: fields.conversationId,
    ephemeral: fields.ephemeral,
    history: fields.history,
    state: fields.state,
    iteration: fields.iteration,
    usage: fields.usage,
    outcomes: fields.outcomes,
    sinks: HashSet.size(sinks) === 0 ? noSinks : Array.from(sinks),
    traced: isTraced(fiber),
    agentName: agent.name,
    middleware: agent.middleware,
    observe: untouched
  }
  run.observe = observerOf(run)
  return run
}

/**
 * Starts a run, in one step that reads the fiber and builds the run state; the turn then
 * takes its place: a run suspended in a tool keeps no frame of its start.
 */
export const startRun = (agent: Any, options: RunOptions<Slots>) =>
  Effect.withFiberRuntime<AgentExit.AgentExit, unknown, any>((fiber) => {
    const state = initialState(agent, options.state)
    if (state instanceof InvalidRunInput) return Effect.fail(state)
    const runId = newId()
    const run = runState(agent, fiber, {
      runId,
      conversationId: options.conversationId ?? ephemeralId(runId),
      ephemeral: options.conversationId === undefined,
      history: [],
      state,
      iteration: 0,
      usage: emptyUsage,
      outcomes: []
    })
    const started = (): AgentEvent.Payload => ({ _tag: "RunStarted", agent: agent.name, input: options.input })
    // an ephemeral conversation starts empty, in the run only (decision 004)
    if (run.ephemeral) {
      run.history.push(user(options.input))
      return run.observe.turn("run", started, loop(agent, run))
    }
    const memory = Context.get(fiber.currentContext, ChatMemory)
    return run.observe.turn("run", started, Effect.zipRight(loadConversation(run, memory, options.input), loop(agent, run)))
  })

/**
 * Loads a named conversation, closes the tool calls it left without a result (a crash, an
 * interrupted run) with a neutral "cancelled" result, and adds the input.
 */
const loadConversation = Effect.fnUntraced(function*(run: RunState, memory: ChatMemory.Service, input: string) {
  for (const message of yield* memory.get(run.conversationId)) run.history.push(message)
  const dangling = danglingToolCalls(run.history)
  if (dangling.length > 0) {
    const cancelled = dangling.map((call): Outcome => ({ _tag: "Cancelled", callId: call.id, toolName: call.name }))
    yield* appendMessages(run, cancelled.map(resultMessage))
  }
  yield* appendMessages(run, [user(input)])
})

/**
 * Continues a paused run: validates the checkpoint and the decision before anything is
 * consumed, then finishes the paused batch (or iterates again, after `MaxIterationsReached`).
 */
export const resumeRun = Effect.fnUntraced(function*(agent: Any, checkpoint: unknown, decision: Decision.Decision) {
  const decoded = yield* CheckpointCodec.decode(agent, checkpoint)
  const cp = decoded.checkpoint
  const plan = yield* Resume.plan(agent, cp, decision)
  if (!cp.ephemeral) {
    const memory = yield* ChatMemory
    const stored = yield* memory.get(cp.conversationId)
    if (stored.length !== 0 && stored.length !== cp.messages.length) {
      return yield* new ConversationDiverged({
        conversationId: cp.conversationId,
        expectedMessages: cp.messages.length,
        foundMessages: stored.length
      })
    }
    yield* memory.replace(cp.conversationId, plan.messages)
  }
  const run = yield* Effect.withFiberRuntime<RunState>((fiber) =>
    Effect.succeed(runState(agent, fiber, {
      runId: cp.runId,
      conversationId: cp.conversationId,
      ephemeral: cp.ephemeral,
      history: [...plan.messages],
      state: decoded.state,
      iteration: plan.mode === "continue" ? 0 : cp.iteration,
      usage: cp.usage,
      outcomes: [...cp.outcomes]
    }))
  )
  const body = plan.mode === "batch"
    ? Effect.flatMap(executeBatch(agent, run, plan.batch, plan.environmentPause), (exit) => exit === undefined ? loop(agent, run) : Effect.succeed(exit))
    : loop(agent, run)
  return yield* run.observe.turn("resume", () => ({ _tag: "RunResumed", agent: agent.name, decision: decision._tag }), body)
})

/** A run (or resume) as the stream of its events, ending with the exit's event. */
export const streamOf = <E, R>(program: Effect.Effect<AgentExit.AgentExit<any>, E, R>): Stream.Stream<AgentEvent.AgentEvent, E, R> =>
  Stream.asyncPush<AgentEvent.AgentEvent, E, R>((emitter) =>
    Effect.locallyWith(program, currentSinks, HashSet.add<AgentEvent.Sink>((event) => void emitter.single(event))).pipe(
      Effect.onExit((exit) => Effect.sync(() => Exit.isSuccess(exit) ? emitter.end() : Exit.isFailure(exit) ? emitter.halt(exit.cause) : undefined)),
      Effect.forkScoped
    ), { bufferSize: "unbounded" })
