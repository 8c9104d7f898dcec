/**
 * Running and resuming a turn: the run state, healing, the turn's span, events and
 * middleware, and the event stream.
 */
import { Context, Effect, Exit, HashSet, Stream } from "effect"
import type { Any, ResumeError, RunOptions, Slots } from "../Agent.js"
import { ConversationDiverged, InvalidRunInput } from "../AgentError.js"
import type * as AgentEvent from "../AgentEvent.js"
import { currentSinks } from "../AgentEvent.js"
import type * as AgentExit from "../AgentExit.js"
import { emptyUsage } from "../ChatModel.js"
import { ChatMemory } from "../ChatMemory.js"
import type * as Decision from "../Decision.js"
import { danglingToolCalls, user } from "../Message.js"
import type { Outcome } from "../ToolCall.js"
import * as CheckpointCodec from "./checkpoint.js"
import { compose, emit } from "./events.js"
import { ephemeralId, newId } from "./ids.js"
import { executeBatch } from "./batch.js"
import { loop, untilDone } from "./loop.js"
import type { RunState } from "./runState.js"
import { appendMessages, resultMessage } from "./runState.js"
import * as Resume from "./resume.js"
import { annotate, isTraced, withSpan } from "./tracing.js"

/** The run's initial state, or the refusal naming undeclared slots. */
const initialState = (agent: Any, given: { readonly [slot: string]: unknown } | undefined) => {
  const unknown = given === undefined ? [] : Object.keys(given).filter((name) => !(name in agent.slots))
  if (unknown.length > 0) {
    return new InvalidRunInput({
      problems: [`state for undeclared slot(s) ${unknown.map((n) => `"${n}"`).join(", ")}; declared: ${Object.keys(agent.slots).join(", ") || "none"}`]
    })
  }
  const state: { [slot: string]: unknown } = {}
  const slots = agent.slots as Slots
  for (const name in slots) state[name] = given !== undefined && name in given ? given[name] : slots[name]!.initial
  return state
}

const noSinks: ReadonlyArray<AgentEvent.Sink> = []
const sinksOf = (sinks: HashSet.HashSet<AgentEvent.Sink>) => HashSet.size(sinks) === 0 ? noSinks : Array.from(sinks)

/** One turn: its span, its first event, the turn middleware around `body`, the final `Completed`/`Paused` event. */
const turn = (
  agent: Any,
  run: RunState,
  kind: "run" | "resume",
  started: () => AgentEvent.Payload,
  body: Effect.Effect<AgentExit.AgentExit, ResumeError, any>
): Effect.Effect<AgentExit.AgentExit, ResumeError, any> =>
  run.sinks.length === 0 && !run.traced && agent.middleware.turn.length === 0
    ? body
    : withSpan(run.traced, "agentfx.run", () => ({
      "agentfx.agent": agent.name,
      "agentfx.run.id": run.runId,
      "agentfx.conversation.id": run.conversationId,
      "agentfx.run.kind": kind
    }))(observedTurn(agent, run, kind, started, body))

const observedTurn = Effect.fnUntraced(
  function*(
    agent: Any,
    run: RunState,
    kind: "run" | "resume",
    started: () => AgentEvent.Payload,
    body: Effect.Effect<AgentExit.AgentExit, ResumeError, any>
  ) {
    yield* emit(run, started)
    const exit = agent.middleware.turn.length === 0 ? yield* body : yield* compose(agent.middleware.turn, () => body)({
      agent: agent.name,
      runId: run.runId,
      conversationId: run.conversationId,
      kind
    })
    yield* emit(run, () => exit._tag === "Completed" ? { _tag: "Completed", exit } : { _tag: "Paused", exit })
    yield* annotate(run.traced, () => ({ "agentfx.run.outcome": exit._tag, "agentfx.run.iterations": run.iteration }))
    return exit
  }
)

/**
 * Closes tool calls left without a result (a crash, an interrupted run) with a neutral
 * "cancelled" result, so that the model never sees a call without an answer.
 */
const heal = (run: RunState) => {
  const dangling = danglingToolCalls(run.history)
  if (dangling.length === 0) return Effect.void
  const cancelled = dangling.map((call): Outcome => ({ _tag: "Cancelled", callId: call.id, toolName: call.name }))
  return appendMessages(run, cancelled.map(resultMessage))
}

/** What a resume reads of its fiber: event sinks, and whether a tracer is installed. */
const observers = Effect.withFiberRuntime<{ readonly sinks: ReadonlyArray<AgentEvent.Sink>; readonly traced: boolean }>((fiber) =>
  Effect.succeed({ sinks: sinksOf(fiber.getFiberRef(currentSinks)), traced: isTraced(fiber) })
)

/**
 * Starts a run: one step that reads the fiber (memory, sinks, tracer) and builds the run
 * state, then the turn in its place: a run suspended in a tool keeps no frame of its start.
 */
export const startRun = (agent: Any, options: RunOptions<Slots>) =>
  Effect.withFiberRuntime<AgentExit.AgentExit, ResumeError, any>((fiber) => {
    const state = initialState(agent, options.state)
    if (state instanceof InvalidRunInput) return Effect.fail(state)
    const runId = newId()
    const run: RunState = {
      runId,
      conversationId: options.conversationId ?? ephemeralId(runId),
      sinks: sinksOf(fiber.getFiberRef(currentSinks)),
      traced: isTraced(fiber),
      ephemeral: options.conversationId === undefined,
      history: [],
      state,
      iteration: 0,
      usage: emptyUsage,
      outcomes: []
    }
    // an ephemeral conversation starts empty, in the run only (decision 004)
    if (run.ephemeral) run.history.push(user(options.input))
    return turn(
      agent,
      run,
      "run",
      () => ({ _tag: "RunStarted", agent: agent.name, input: options.input }),
      run.ephemeral
        ? loop(agent, run)
        : Effect.zipRight(prepareTurn(run, Context.get(fiber.currentContext, ChatMemory), options.input), loop(agent, run))
    )
  })

/** Loads a named conversation, heals it, adds the input. */
const prepareTurn = (run: RunState, memory: ChatMemory.Service, input: string) =>
  Effect.flatMap(memory.get(run.conversationId), (stored) => {
    for (const message of stored) run.history.push(message)
    return Effect.zipRight(heal(run), appendMessages(run, [user(input)]))
  })

/** Continues a paused run: validates everything before anything is consumed, then finishes the paused batch (or iterates again). */
export const resumeRun = Effect.fnUntraced(
  function*(agent: Any, checkpoint: unknown, decision: Decision.Decision) {
    const decoded = yield* CheckpointCodec.decode(agent, checkpoint)
    const cp = decoded.checkpoint
    const plan = yield* Resume.plan(agent, cp, decision)
    if (!cp.ephemeral) {
      const memory = yield* ChatMemory
      const stored = yield* memory.get(cp.conversationId)
      if (stored.length !== 0 && stored.length !== cp.messages.length) {
        return yield* Effect.fail(
          new ConversationDiverged({
            conversationId: cp.conversationId,
            expectedMessages: cp.messages.length,
            foundMessages: stored.length
          })
        )
      }
      yield* memory.replace(cp.conversationId, plan.messages)
    }
    const run: RunState = {
      runId: cp.runId,
      conversationId: cp.conversationId,
      ...(yield* observers),
      ephemeral: cp.ephemeral,
      history: [...plan.messages],
      state: decoded.state,
      iteration: plan.mode === "continue" ? 0 : cp.iteration,
      usage: cp.usage,
      outcomes: [...cp.outcomes]
    }
    return yield* turn(
      agent,
      run,
      "resume",
      () => ({ _tag: "Resumed", agent: agent.name, decision: decision._tag }),
      plan.mode === "batch"
        ? executeBatch(agent, run, plan.batch, plan.environmentPause, untilDone)
        : loop(agent, run)
    )
  }
)

/** A run (or resume) as the stream of its events, ending with the exit's event. */
export const streamOf = <E, R>(program: Effect.Effect<AgentExit.AgentExit<any>, E, R>): Stream.Stream<AgentEvent.AgentEvent, E, R> =>
  Stream.asyncPush<AgentEvent.AgentEvent, E, R>((emitter) =>
    Effect.locallyWith(program, currentSinks, HashSet.add<AgentEvent.Sink>((event) => void emitter.single(event))).pipe(
      Effect.onExit((exit) => Effect.sync(() => Exit.isSuccess(exit) ? emitter.end() : Exit.isFailure(exit) ? emitter.halt(exit.cause) : undefined)),
      Effect.forkScoped
    ), { bufferSize: "unbounded" })

