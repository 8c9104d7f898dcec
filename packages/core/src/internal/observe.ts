/**
 * What watches a run — spans, lifecycle events, middleware — at its four levels: the turn,
 * each iteration, each model call, each tool call. Decided once, when the run starts: a level
 * that nobody observes runs its body untouched, so an unobserved run pays nothing.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as AgentEvent from "../AgentEvent.js"
import type * as AgentExit from "../AgentExit.js"
import type { ChatRequest, ChatResponse, ModelError } from "../ChatModel.js"
import type * as Middleware from "../Middleware.js"
import type { Result } from "../ToolCall.js"
import type { Executed } from "./executor.js"
import { compose, emit, type Emitter, now } from "./events.js"
import { annotate, withSpan } from "./tracing.js"

/** The middleware of each level, outermost first. */
export interface Layers {
  readonly turn: ReadonlyArray<NonNullable<Middleware.Middleware<any>["turn"]>>
  readonly iteration: ReadonlyArray<NonNullable<Middleware.Middleware<any>["iteration"]>>
  readonly model: ReadonlyArray<NonNullable<Middleware.Middleware<any>["model"]>>
  readonly tool: ReadonlyArray<NonNullable<Middleware.Middleware<any>["tool"]>>
}

/** Who watches a run: its event sinks, whether a tracer is installed, its agent's middleware. */
export interface Watchers extends Emitter {
  readonly traced: boolean
  /** Model calls made so far (read when the turn ends). */
  readonly iteration: number
  /** The agent: its name, and its middleware. */
  readonly agent: { readonly name: string; readonly middleware: Layers }
}

/** The four levels, each wrapping its body in what observes it. */
export interface Observer {
  readonly turn: <E, R>(
    kind: Middleware.TurnInput["kind"],
    started: () => AgentEvent.Payload,
    body: Effect.Effect<AgentExit.AgentExit, E, R>
  ) => Effect.Effect<AgentExit.AgentExit, E, R>
  /**
   * One iteration: `steps` runs it and, given a continuation, goes on with it; `next` follows
   * the iteration. Unobserved, `steps` is given `next`: the batch's end calls it in the
   * executor's place — a run waiting for its tools keeps no frame of the iteration, and an
   * iteration ends without a step of its own.
   */
  readonly iteration: <E, R>(
    iteration: number,
    steps: (
      then: ((exit: AgentExit.AgentExit | undefined) => Effect.Effect<AgentExit.AgentExit, E, R>) | undefined
    ) => Effect.Effect<AgentExit.AgentExit | undefined, E, R>,
    next: (exit: AgentExit.AgentExit | undefined) => Effect.Effect<AgentExit.AgentExit, E, R>
  ) => Effect.Effect<AgentExit.AgentExit, E, R>
  readonly model: <R>(
    input: Middleware.ModelInput,
    call: (input: Middleware.ModelInput) => Effect.Effect<ChatResponse, ModelError, R>
  ) => Effect.Effect<ChatResponse, ModelError, R>
  readonly tool: <R>(
    input: Middleware.ToolInput,
    timeout: Option.Option<Duration.Duration>,
    execute: (input: Middleware.ToolInput) => Effect.Effect<Executed, never, R>
  ) => Effect.Effect<Executed, never, R>
}

export const untouched: Observer = {
  turn: (_kind, _started, body) => body,
  iteration: (_iteration, steps, next) => steps(next) as Effect.Effect<AgentExit.AgentExit, any, any>,
  model: (input, call) => call(input),
  tool: (input, _timeout, execute) => execute(input)
}

/** The observer of a run: `untouched` when nobody listens, traces or wraps anything. */
export const observerOf = (watchers: Watchers): Observer => {
  const { agent: { middleware }, sinks, traced } = watchers
  const listened = sinks.length > 0
  if (!listened && !traced && Object.values(middleware).every((level) => level.length === 0)) return untouched
  return {
    turn: listened || traced || middleware.turn.length > 0 ? (kind, started, body) => turn(watchers, kind, started, body) : untouched.turn,
    iteration: traced || middleware.iteration.length > 0
      ? (n, steps, next) => Effect.flatMap(iteration(watchers, n, Effect.suspend(() => steps(undefined))), next)
      : untouched.iteration,
    model: listened || traced || middleware.model.length > 0 ? (input, call) => model(watchers, input, call) : untouched.model,
    tool: listened || traced || middleware.tool.length > 0 ? (input, timeout, execute) => tool(watchers, input, timeout, execute) : untouched.tool
  }
}

const turn = <E, R>(
  watchers: Watchers,
  kind: Middleware.TurnInput["kind"],
  started: () => AgentEvent.Payload,
  body: Effect.Effect<AgentExit.AgentExit, E, R>
) =>
  withSpan(watchers.traced, "agentfx.run", () => ({
    "agentfx.agent": watchers.agent.name,
    "agentfx.run.id": watchers.runId,
    "agentfx.conversation.id": watchers.conversationId,
    "agentfx.run.kind": kind,
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": watchers.agent.name,
    "gen_ai.conversation.id": watchers.conversationId
  }))(Effect.gen(function*() {
    yield* emit(watchers, started)
    const exit = yield* compose(watchers.agent.middleware.turn, () => body as Effect.Effect<AgentExit.AgentExit<any>, any, any>)({
      agent: watchers.agent.name,
      runId: watchers.runId,
      conversationId: watchers.conversationId,
      kind
    }) as Effect.Effect<AgentExit.AgentExit, E, R>
    yield* emit(watchers, () => exit._tag === "Completed" ? { _tag: "RunCompleted", exit } : { _tag: "RunPaused", exit })
    yield* annotate(watchers.traced, () => ({ "agentfx.run.outcome": exit._tag, "agentfx.run.iterations": watchers.iteration }))
    return exit
  }))

/** Iteration middleware sees `Some(exit)` when the iteration ended the run, `None` when the loop goes on. */
const iteration = <E, R>(watchers: Watchers, n: number, body: Effect.Effect<AgentExit.AgentExit | undefined, E, R>) =>
  withSpan(watchers.traced, "agentfx.iteration", () => ({ "agentfx.iteration": n }))(
    Effect.map(
      compose(
        watchers.agent.middleware.iteration,
        () => Effect.map(body, Option.fromNullishOr) as Effect.Effect<Option.Option<AgentExit.AgentExit<any>>, any, any>
      )({
        runId: watchers.runId,
        conversationId: watchers.conversationId,
        iteration: n
      }),
      Option.getOrUndefined
    ) as Effect.Effect<AgentExit.AgentExit | undefined, E, R>
  )

const model = <R>(
  watchers: Watchers,
  input: Middleware.ModelInput,
  call: (input: Middleware.ModelInput) => Effect.Effect<ChatResponse, ModelError, R>
) =>
  withSpan(watchers.traced, "agentfx.model", () => ({
    "agentfx.iteration": input.iteration,
    "agentfx.model.purpose": input.purpose,
    "gen_ai.operation.name": "chat",
    ...settingsAttributes(input.request.settings)
  }))(Effect.gen(function*() {
    yield* emit(watchers, () => ({
      _tag: "ModelCalled",
      iteration: input.iteration,
      messages: input.request.messages.length,
      purpose: input.purpose
    }))
    const started = yield* now(watchers)
    const response = yield* compose(watchers.agent.middleware.model, call)(input) as Effect.Effect<ChatResponse, ModelError, R>
    const finished = yield* now(watchers)
    yield* emit(watchers, () => ({
      _tag: "ModelResponded",
      iteration: input.iteration,
      purpose: input.purpose,
      text: response.text,
      toolCalls: response.toolCalls.length,
      finishReason: response.finishReason,
      usage: response.usage,
      durationMillis: finished - started,
      ...(response.model === undefined ? {} : { model: response.model }),
      ...(response.provider === undefined ? {} : { provider: response.provider }),
      ...(response.files === undefined || response.files.length === 0 ? {} : { files: response.files }),
      ...readableReasoning(response)
    }))
    yield* annotate(watchers.traced, () => ({
      "agentfx.model.finish_reason": response.finishReason,
      "agentfx.model.tool_calls": response.toolCalls.length,
      // who answered (a fallback's step): over what the model service named before the call
      ...(response.model === undefined ? {} : { "gen_ai.request.model": response.model }),
      ...(response.provider === undefined ? {} : { "gen_ai.provider.name": response.provider }),
      "gen_ai.response.finish_reasons": response.providerFinishReasons ?? [response.finishReason],
      "gen_ai.usage.input_tokens": response.usage.inputTokens,
      "gen_ai.usage.output_tokens": response.usage.outputTokens
    }))
    return response
  }))

/** The request's settings as GenAI attributes (`gen_ai.request.*`); the ones not set are left out. */
/** `{ reasoning }`: the response's readable reasoning (the parts that have text), or nothing when it has none. */
const readableReasoning = (response: ChatResponse): { readonly reasoning?: string } => {
  if (response.reasoning === undefined) return {}
  const text = response.reasoning.map((part) => part.text).filter((part) => part.length > 0).join("\n\n")
  return text === "" ? {} : { reasoning: text }
}

const settingsAttributes = (settings: ChatRequest["settings"]): Record<string, unknown> => {
  if (settings === undefined) return {}
  const attributes: Record<string, unknown> = {}
  if (settings.temperature !== undefined) attributes["gen_ai.request.temperature"] = settings.temperature
  if (settings.topP !== undefined) attributes["gen_ai.request.top_p"] = settings.topP
  if (settings.maxOutputTokens !== undefined) attributes["gen_ai.request.max_tokens"] = settings.maxOutputTokens
  if (settings.stop !== undefined) attributes["gen_ai.request.stop_sequences"] = settings.stop
  return attributes
}

const toolEvent = (result: Exclude<Result, { readonly _tag: "Suspended" }>, durationMillis: number) => (): AgentEvent.Payload =>
  result._tag === "Succeeded"
    ? {
      _tag: "ToolSucceeded",
      callId: result.callId,
      toolName: result.toolName,
      value: result.value,
      ...(result.files === undefined ? {} : { files: result.files }),
      durationMillis
    }
    : result.error._tag === "ToolTimeout"
    ? {
      _tag: "ToolTimedOut",
      callId: result.callId,
      toolName: result.toolName,
      timeoutMillis: Duration.toMillis(result.error.timeout),
      durationMillis
    }
    : { _tag: "ToolFailed", callId: result.callId, toolName: result.toolName, error: result.error, durationMillis }

/**
 * A tool call in its span, between its events, inside the tool middleware (outside the call's
 * permit and timeout). State writes pass through the middleware untouched; they apply when
 * the result the middleware returns is a success.
 */
const tool = <R>(
  watchers: Watchers,
  input: Middleware.ToolInput,
  timeout: Option.Option<Duration.Duration>,
  execute: (input: Middleware.ToolInput) => Effect.Effect<Executed, never, R>
) =>
  withSpan(watchers.traced, "agentfx.tool", () => ({
    "agentfx.tool.name": input.call.name,
    "agentfx.tool.call_id": input.call.id,
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": input.call.name,
    "gen_ai.tool.call.id": input.call.id,
    ...(Option.isSome(timeout) ? { "agentfx.tool.timeout_ms": Duration.toMillis(timeout.value) } : {})
  }))(Effect.gen(function*() {
    let writes: Executed["writes"]
    const call = compose<Middleware.ToolInput, Result, never>(watchers.agent.middleware.tool, (i) =>
      Effect.map(execute(i), (executed) => {
        writes = executed.writes
        return executed.result
      }))
    yield* emit(watchers, () => ({ _tag: "ToolStarted", callId: input.call.id, toolName: input.call.name, args: input.call.args }))
    const started = yield* now(watchers)
    const result = yield* call(input) as Effect.Effect<Result, never, R>
    const finished = yield* now(watchers)
    if (result._tag !== "Suspended") yield* emit(watchers, toolEvent(result, finished - started))
    yield* annotate(watchers.traced, () => ({
      "agentfx.tool.outcome": result._tag === "Failed" ? result.error._tag : result._tag === "Succeeded" ? "success" : "suspended"
    }))
    return { result, writes }
  }))
