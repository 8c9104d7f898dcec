/**
 * The one place a tool call is decoded, timed, retried and encoded — for the loop, for
 * `ToolCallingManager.executeBatch` and for `ToolCallingManager.call` alike.
 */
import type { Duration } from "effect"
import * as Cause from "effect/Cause"
import * as Effectable from "effect/Effectable"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ParseOptions } from "effect/SchemaAST"
import type { JsonValue } from "../Json.js"
import type { FilePart } from "../Part.js"
import { isOutput } from "../Tool.js"
import type * as Tool from "../Tool.js"
import type * as ToolCall from "../ToolCall.js"
import { semantic, ToolError, ToolTimeout } from "../ToolError.js"
import type { ToolFailure } from "../ToolError.js"
import type * as Toolkit from "../Toolkit.js"
import { unknownToolMessage } from "./beforeHandler.js"
import { HandlerKey } from "./handler.js"
import { decodeJson } from "./jsonForm.js"
import { invalidArguments, invalidResult } from "./parseError.js"
import { settledResult } from "./settled.js"
import { settledExit } from "./settledExit.js"
import type { Resumption } from "./suspension.js"
import { isSuspension, ResumptionKey } from "./suspension.js"
import { reserveWorker } from "./workerTool.js"
import { concurrently } from "./concurrently.js"

/** What one call produced: its result, and the state writes of a successful handler. */
export interface Executed {
  readonly result: ToolCall.Result
  readonly writes: { readonly [slot: string]: unknown } | undefined
}

/**
 * What follows a call, given its result (`ended`). An object that holds what it needs rather
 * than a closure: a run waiting in a tool keeps it, and a closure with its context is twice
 * the size (docs/performance.md, round 6).
 */
export interface Then<B, E2, R2> {
  readonly ended: (executed: Executed) => Effect.Effect<B, E2, R2>
}

/** The call's result, as it is. */
const returned: Then<Executed, never, never> = { ended: Effect.succeed }

/** The run state every call of a batch reads. */
export type StateSnapshot = { readonly [slot: string]: unknown }

/** How the manager running a call shapes it. */
export interface ExecutionPolicy {
  /** Used when the tool declares no timeout of its own. */
  readonly defaultTimeout: Option.Option<Duration.Duration>
  /** Wraps each attempt of the handler, outside its timeout (a bounded manager's permit). */
  readonly withPermit: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** What a tool's calls need, built once per metadata row. */
interface Prepared {
  readonly decode: (u: unknown) => Effect.Effect<unknown, Schema.SchemaError>
  readonly encode: (a: unknown) => Effect.Effect<unknown, Schema.SchemaError>
  /** For a worker tool: the reservation of a ready worker around each attempt; else identity. */
  readonly reserve: ReturnType<typeof reserveWorker>
  /** `Effect.retry` options for transient failures, when the tool declares retries. */
  readonly retry: Effect.Retry.Options<ToolFailure> | undefined
}

const preparedCache = new WeakMap<Toolkit.Entry, Prepared>()

/** Every problem of the arguments is told to the model, not only the first, with the values it sent. */
const decodeOptions: ParseOptions = { errors: "all", reportInput: true }

const isTransient = (failure: ToolFailure) => failure.isTransient

const prepare = (entry: Toolkit.Entry): Prepared => {
  const cached = preparedCache.get(entry)
  if (cached !== undefined) return cached
  const prepared: Prepared = {
    // what the model sends is JSON: read as the schema's encoded side, else as its JSON form (decision 121)
    decode: decodeJson(entry.tool.parameters, decodeOptions),
    encode: Schema.encodeEffect(entry.tool.success, { reportInput: true }),
    reserve: reserveWorker(entry.isolation, entry.name),
    retry: entry.retryTimes === 0 ? undefined : {
      times: entry.retryTimes,
      while: isTransient,
      ...Option.match(entry.retrySchedule, { onNone: () => ({}), onSome: (schedule) => ({ schedule }) })
    }
  }
  preparedCache.set(entry, prepared)
  return prepared
}

/** Resolves the deadline: the tool's own timeout, else the manager's default, else none. */
export const effectiveTimeout = (entry: Toolkit.Entry, policy: ExecutionPolicy): Option.Option<Duration.Duration> =>
  Option.isSome(entry.timeout) ? entry.timeout : policy.defaultTimeout

/**
 * Decodes a call's arguments with the JSON form of the tool's `parameters`. A synchronous schema
 * gives an `Exit` (an effect that is already settled: read it with `settledResult`).
 */
export const decodeArguments = (entry: Toolkit.Entry, args: unknown): Effect.Effect<unknown, ToolError> => {
  const decoded = prepare(entry).decode(args)
  const now = settledExit(decoded)
  // decoded at once: the success is the decoding itself, a failure is told as the model reads it
  if (now !== undefined && Exit.isSuccess(now)) return now as Exit.Exit<unknown>
  const failure = settledResult(decoded)
  if (failure === undefined) return Effect.mapError(decoded, (error) => invalidArguments(entry.name, error))
  return Result.isFailure(failure) ? Exit.fail(invalidArguments(entry.name, failure.failure)) : Exit.succeed(failure.success)
}

/**
 * One call's attempts of its handler, as an effect: each run of it is one attempt — the
 * handler called then (after the permit, the worker and any earlier call of the batch), under
 * the deadline, inside the worker reservation and the permit; a tool with retries runs it again
 * (`retried`). It also holds what the call's frame goes on with (`endingOf`). An object rather
 * than an `Effect.suspend`, its closure and the closures around it: a run waiting in a tool
 * keeps it as its frame's effect (on Effect 4 the closures keep 239 B more per suspended run:
 * C 3,543 → 3,782 B, decision 169).
 */
class Attempt<B, E2, R2> extends Effectable.Class<unknown, ToolFailure, any> {
  /** The attempts started so far (the handler's `attempt`). */
  made = 0
  constructor(
    readonly entry: Toolkit.Entry,
    readonly policy: ExecutionPolicy,
    readonly callId: string,
    readonly state: StateSnapshot,
    readonly resumption: Resumption | undefined,
    readonly args: unknown,
    readonly started: Effect.Effect<void, ToolFailure> | undefined,
    /** What follows the call, given its result. */
    readonly then: Then<B, E2, R2>
  ) {
    super()
  }

  asEffect(): Effect.Effect<unknown, ToolFailure, any> {
    this.made += 1
    const { entry, made } = this
    const timeout = effectiveTimeout(entry, this.policy)
    const handler = entry.tool[HandlerKey] as (
      args: unknown,
      context: Tool.CallContext & { readonly [ResumptionKey]?: Resumption }
    ) => Effect.Effect<unknown, ToolError, any>
    const context = { callId: this.callId, toolName: entry.name, attempt: made, state: this.state }
    const body = handler(this.args, this.resumption === undefined ? context : { ...context, [ResumptionKey]: this.resumption })
    const timed = Option.isSome(timeout) ? Effect.timeoutOrElse(body, deadline(entry.name, timeout.value)) : body
    // the first attempt's start is recorded once it holds what it waited for, right before the handler
    const starting = this.started !== undefined && made === 1 ? Effect.andThen(this.started, timed) : timed
    // permit → worker reservation (wait, spawn, import) → (start recorded) → deadline → handler
    return this.policy.withPermit(prepare(entry).reserve(starting) as Effect.Effect<unknown, ToolFailure, any>)
  }
}

/** Every attempt of the call: one, or as many as the tool's retries allow for transient failures. A defect is not a failure: `Effect.retry` never retries it. */
const retried = (attempt: Attempt<unknown, unknown, unknown>): Effect.Effect<unknown, ToolFailure, any> => {
  const retry = prepare(attempt.entry).retry
  return retry === undefined ? attempt : Effect.retry(attempt, retry)
}

const deadline = (toolName: string, duration: Duration.Duration) => ({
  duration,
  orElse: () => Effect.fail(new ToolTimeout({ toolName, timeout: duration }))
})

/** What a handler may fail with; anything else it fails with is told as a defect is. */
const isToolFailure = (error: unknown): error is ToolFailure => error instanceof ToolError || error instanceof ToolTimeout

const failed = (callId: string, toolName: string, error: ToolFailure): Executed => ({
  result: { _tag: "Failed", callId, toolName, error },
  writes: undefined
})

/** A defect's own message, without its stack. */
const defectMessage = (cause: Cause.Cause<unknown>) => {
  const defect = Cause.squash(cause)
  return defect instanceof Error ? defect.message : String(defect)
}

/**
 * The `semantic` failure a defect (or the handler's own interruption, or a failure that is not a
 * `ToolError` — from JavaScript or a cast) becomes: a short, fixed message for the model (the
 * defect's own message only when the tool exposes defects); the full cause goes to the log (and,
 * with a tracer, to the call's span).
 */
const died = (entry: Toolkit.Entry, cause: Cause.Cause<unknown>) =>
  Effect.as(
    Effect.logError(
      Cause.hasFails(cause) ? `Tool "${entry.name}" failed with something that is not a ToolError` : `Tool "${entry.name}" died`,
      cause
    ),
    semantic(
      entry.tool.exposeDefects
        ? `Tool "${entry.name}" failed unexpectedly: ${defectMessage(cause)}`
        : `Tool "${entry.name}" failed unexpectedly`
    )
  )

/** The `semantic` failure of a value the tool's `success` schema rejects; logged. */
const rejectedResult = (entry: Toolkit.Entry, error: Schema.SchemaError) =>
  Effect.as(
    Effect.logError(`Tool "${entry.name}" returned a value its success schema rejects`, error),
    invalidResult(entry.name, error)
  )

/**
 * Runs one call of a known tool: its arguments decoded (unless `args` holds them already) →
 * the handler's attempts → the success value encoded. Never fails: every failure becomes a
 * `Failed` result. An interruption from outside is not caught; the handler's own interruption
 * is the call's failure (`endingOf`).
 *
 * Not a generator: while the handler runs, the call keeps one frame alive — the
 * `matchCauseEffect` below, whose handlers encode the value or turn the failure into a result
 * and then go on with `then` (what follows the call: the rest of its batch and run) in that
 * frame's place. Every run suspended in a tool keeps this frame and its `Attempt`, and nothing
 * else of agentfx when its batch is one call (docs/performance.md); a decode or an encode by a
 * synchronous schema is read at once, without a frame of its own.
 */
export const executeCall = <R, B = Executed, E2 = never, R2 = never>(
  entry: Toolkit.Entry,
  call: ToolCall.ToolCall,
  policy: ExecutionPolicy,
  state: StateSnapshot,
  options?: CallToRun,
  then: Then<B, E2, R2> = returned as never
): Effect.Effect<B, E2, R | R2> => {
  const attemptOf = (args: unknown) =>
    new Attempt(entry, policy, call.id, state, options?.resumption, args, options?.started, then)
  if (options?.decoded === true) return attemptsThen(attemptOf(options.args))
  const decoded = decodeArguments(entry, call.args)
  const now = settledResult(decoded)
  if (now === undefined) {
    // an asynchronous schema: its failure ends the call as an attempt's would; once decoded, the attempts take its place
    return Effect.matchCauseEffect(decoded, {
      onFailure: (attemptFailed<B, E2, R2>).bind(attemptOf(undefined)),
      onSuccess: (args) => attemptsThen(attemptOf(args))
    })
  }
  return Result.isFailure(now) ? then.ended(failed(call.id, call.name, now.failure)) : attemptsThen(attemptOf(now.success))
}

/** The call's attempts in its one frame. */
const attemptsThen = <B, E2, R2>(attempt: Attempt<B, E2, R2>): Effect.Effect<B, E2, R2> =>
  Effect.matchCauseEffect(retried(attempt), endingOf(attempt))

/**
 * The handlers of the call's one frame: a failure, a defect, the handler's own interruption or
 * the encoded value becomes the call's result, and the attempt's `then` goes on with it. An
 * interruption from outside (the run's, or a failing sibling's) never reaches them:
 * Effect's run loop skips a frame's failure handler while its fiber is being interrupted, so an
 * interrupted cause seen here is the handler's own (`Effect.interrupt`, or a join of a fiber
 * it interrupted) — a failure of the call, not of the run. Bound to the attempt, not closures
 * over it: a waiting call's frame keeps them, and a bound function has no context of its own.
 */
const endingOf = <B, E2, R2>(attempt: Attempt<B, E2, R2>) => ({
  onFailure: (attemptFailed<B, E2, R2>).bind(attempt),
  onSuccess: (attemptSucceeded<B, E2, R2>).bind(attempt)
})

function attemptFailed<B, E2, R2>(this: Attempt<B, E2, R2>, cause: Cause.Cause<ToolFailure>): Effect.Effect<B, E2, R2> {
  const { callId, entry, then } = this
  const failure = Cause.findErrorOption(cause)
  return Option.isSome(failure) && isToolFailure(failure.value)
    ? then.ended(failed(callId, entry.name, failure.value))
    : endedWith(then, Effect.map(died(entry, cause), (e) => failed(callId, entry.name, e)))
}

function attemptSucceeded<B, E2, R2>(this: Attempt<B, E2, R2>, output: unknown): Effect.Effect<B, E2, R2> {
  return endedWith(this.then, succeeded(this, output))
}

/** `then` of the call's result: at once when the result is settled. */
const endedWith = <B, E2, R2>(then: Then<B, E2, R2>, result: Effect.Effect<Executed>): Effect.Effect<B, E2, R2> => {
  const now = settledExit(result)
  return now !== undefined && Exit.isSuccess(now) ? then.ended(now.value) : Effect.flatMap(result, (executed) => then.ended(executed))
}

/** A handler's output as a result: a suspension (a delegate's child paused), or the value encoded with `success`. */
const succeeded = (attempt: Attempt<unknown, unknown, unknown>, output: unknown): Effect.Effect<Executed> => {
  if (isSuspension(output)) {
    const { checkpoint, kind, pending } = output.exit
    return Effect.succeed({
      result: { _tag: "Suspended", callId: attempt.callId, toolName: attempt.entry.name, kind, pending, checkpoint: checkpoint as JsonValue },
      writes: undefined
    })
  }
  if (!isOutput(output)) return encodedResult(attempt, output, undefined, undefined)
  return encodedResult(attempt, output.value, output.writes, output.files)
}

/** The value encoded with `success` as the call's result, with the handler's writes and files. */
const encodedResult = (
  { callId, entry }: Attempt<unknown, unknown, unknown>,
  value: unknown,
  writes: Executed["writes"],
  files: ReadonlyArray<FilePart> | undefined
): Effect.Effect<Executed> => {
  const encoded = prepare(entry).encode(value)
  // a synchronous schema's encode is an Either: read at once
  const now = settledResult(encoded)
  if (now !== undefined) {
    return Result.isSuccess(now)
      ? Effect.succeed(succeededWith(callId, entry.name, now.success, writes, files))
      : Effect.map(rejectedResult(entry, now.failure), (e) => failed(callId, entry.name, e))
  }
  return Effect.matchEffect(encoded, {
    onFailure: (error) => Effect.map(rejectedResult(entry, error), (e) => failed(callId, entry.name, e)),
    onSuccess: (value) => Effect.succeed(succeededWith(callId, entry.name, value, writes, files))
  })
}

const succeededWith = (
  callId: string,
  toolName: string,
  encoded: unknown,
  writes: Executed["writes"],
  files: ReadonlyArray<FilePart> | undefined
): Executed => ({
  result: files === undefined || files.length === 0
    ? { _tag: "Succeeded", callId, toolName, value: encoded as JsonValue }
    : { _tag: "Succeeded", callId, toolName, value: encoded as JsonValue, files },
  writes
})

/** The result for a call naming a tool the toolkit does not have. */
export const unknownTool = (toolkit: Toolkit.Any, call: ToolCall.ToolCall): Executed =>
  failed(call.id, call.name, semantic(unknownToolMessage(call.name, [...toolkit.entries.keys()])))

/**
 * Calls one tool outside any run (`ToolCallingManager.call`): the same decode, deadline,
 * permit, retries and encode as a call of the loop; the typed success value, or the failure.
 * `Tool.output` writes are dropped: run state belongs to an agent run.
 */
export const callTool = <R>(
  entry: Toolkit.Entry,
  args: unknown,
  policy: ExecutionPolicy
): Effect.Effect<unknown, ToolFailure, R> => {
  const prepared = prepare(entry)
  return decodeArguments(entry, args).pipe(
    Effect.flatMap((decoded) => retried(new Attempt(entry, policy, "direct", {}, undefined, decoded, undefined, returned))),
    Effect.catchDefect((defect) => Effect.flatMap(died(entry, Cause.die(defect)), Effect.fail)),
    // the handler's own interruption (an interruption from outside skips this handler)
    Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.flatMap(died(entry, cause), Effect.fail) : Effect.failCause(cause)),
    Effect.flatMap((output) => {
      const value = isOutput(output) ? output.value : output
      return Effect.matchEffect(prepared.encode(value), {
        onFailure: (error) => Effect.flatMap(rejectedResult(entry, error), Effect.fail),
        onSuccess: () => Effect.succeed(value)
      })
    })
  )
}

const singleton = <A>(a: A): Array<A> => [a]

/** A call to run: the model's call, its arguments once decoded (`decoded: true`), and what a suspended call resumes from. */
export interface CallToRun {
  readonly call: ToolCall.ToolCall
  readonly decoded?: true | undefined
  readonly args?: unknown
  readonly resumption?: Resumption | undefined
  /**
   * Records the call's start (a durable store), right before its first attempt's handler; a
   * failure is the call's result, and its handler does not run (the error is not transient).
   */
  readonly started?: Effect.Effect<void, ToolFailure> | undefined
}

/** Runs one call to run: its tool's `executeCall`, or the unknown-tool failure. */
export const runCall = <R, B = Executed, E2 = never, R2 = never>(
  toolkit: Toolkit.Toolkit<R>,
  item: CallToRun,
  policy: ExecutionPolicy,
  state: StateSnapshot,
  then: Then<B, E2, R2> = returned as never
): Effect.Effect<B, E2, R | R2> => {
  const entry = toolkit.entries.get(item.call.name)
  return entry === undefined ? then.ended(unknownTool(toolkit, item.call)) : executeCall(entry, item.call, policy, state, item, then)
}

/**
 * Runs calls with the manager's policy and returns what each produced, in call order: one
 * after another when any call's tool is `serial` or the manager is sequential, else
 * concurrently (one fiber per call, see `concurrently`); a single call runs in the caller's
 * fiber. `run` runs one call (wrapped, in a run, by what observes it).
 */
export const executeCalls = <R>(
  toolkit: Toolkit.Toolkit<any>,
  items: ReadonlyArray<CallToRun>,
  concurrency: number | "unbounded",
  run: (item: CallToRun) => Effect.Effect<Executed, never, R>
): Effect.Effect<Array<Executed>, never, R> => {
  if (items.length === 1) return Effect.map(run(items[0]!), singleton)
  const serial = items.some((item) => toolkit.entries.get(item.call.name)?.serial === true)
  return !serial && concurrency === "unbounded"
    ? concurrently(items.map(run))
    : Effect.forEach(items, run, { concurrency: serial ? 1 : concurrency })
}
