/**
 * The one place a tool call is decoded, timed, retried and encoded — for the loop, for
 * `ToolCallingManager.executeBatch` and for `ToolCallingManager.call` alike.
 */
import type { Duration, ParseResult } from "effect"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ParseOptions } from "effect/SchemaAST"
import type { JsonValue } from "../Json.js"
import type { FilePart } from "../Part.js"
import { isOutput } from "../Tool.js"
import type * as Tool from "../Tool.js"
import type * as ToolCall from "../ToolCall.js"
import { semantic, ToolTimeout } from "../ToolError.js"
import type { ToolError, ToolFailure } from "../ToolError.js"
import type * as Toolkit from "../Toolkit.js"
import { HandlerKey } from "./handler.js"
import { invalidArguments, invalidResult } from "./parseError.js"
import { andThen, settledEither } from "./settled.js"
import type { Resumption } from "./suspension.js"
import { isSuspension, ResumptionKey } from "./suspension.js"
import { reserveWorker } from "./workerTool.js"
import { concurrently } from "./concurrently.js"

/** What one call produced: its result, and the state writes of a successful handler. */
export interface Executed {
  readonly result: ToolCall.Result
  readonly writes: { readonly [slot: string]: unknown } | undefined
}

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
  readonly decode: (u: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
  readonly encode: (a: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
  /** For a worker tool: the reservation of a ready worker around each attempt; else identity. */
  readonly reserve: ReturnType<typeof reserveWorker>
  /** `Effect.retry` options for transient failures, when the tool declares retries. */
  readonly retry: Effect.Retry.Options<ToolFailure> | undefined
}

const preparedCache = new WeakMap<Toolkit.Entry, Prepared>()

/**
 * `errors: "all"`, plus the `isEffectAllowed: true` that `Schema.decodeUnknown` adds to its
 * options on every call (`{ ...options, isEffectAllowed: true }`). Given up front, the options
 * are the same, but V8 (Node 20) no longer takes a slow object-spread path: 1 µs → 70 ns per
 * decode (docs/performance.md). Asynchronous parameter schemas still decode (pinned by a test).
 */
const decodeOptions = { errors: "all", isEffectAllowed: true } as ParseOptions

const isTransient = (failure: ToolFailure) => failure.isTransient

const prepare = (entry: Toolkit.Entry): Prepared => {
  const cached = preparedCache.get(entry)
  if (cached !== undefined) return cached
  const prepared: Prepared = {
    decode: Schema.decodeUnknown(entry.tool.parameters, decodeOptions),
    encode: Schema.encode(entry.tool.success),
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
  Option.orElse(entry.timeout, () => policy.defaultTimeout)

/**
 * Decodes a call's arguments with the tool's `parameters`. A synchronous schema gives an
 * `Either` (an effect that is already settled: read it with `settledEither`).
 */
export const decodeArguments = (entry: Toolkit.Entry, args: unknown): Effect.Effect<unknown, ToolError> => {
  const decoded = prepare(entry).decode(args)
  const now = settledEither(decoded)
  if (now === undefined) return Effect.mapError(decoded, (error) => invalidArguments(entry.name, error))
  return Either.isLeft(now) ? Either.left(invalidArguments(entry.name, now.left)) : now as Either.Either<unknown, never>
}

/**
 * The handler's attempts with decoded `args`: each attempt inside `Effect.suspend` (the handler
 * is called when the attempt runs), under the deadline, inside the worker reservation and the
 * permit; transient failures retried when the tool says so. A defect is not a failure:
 * `Effect.retry` never retries it.
 */
const attempts = <R>(
  entry: Toolkit.Entry,
  prepared: Prepared,
  policy: ExecutionPolicy,
  callId: string,
  state: StateSnapshot,
  resumption: Resumption | undefined,
  args: unknown,
  started: Effect.Effect<void, ToolFailure> | undefined
) => {
  const timeout = effectiveTimeout(entry, policy)
  const handler = entry.tool[HandlerKey] as (
    args: unknown,
    context: Tool.CallContext & { readonly [ResumptionKey]?: Resumption }
  ) => Effect.Effect<unknown, ToolError, R>
  let attempt = 0
  const once = Effect.suspend(() => {
    attempt += 1
    const context = { callId, toolName: entry.name, attempt, state }
    const body = handler(args, resumption === undefined ? context : { ...context, [ResumptionKey]: resumption })
    const timed = Option.isSome(timeout) ? Effect.timeoutFail(body, deadline(entry.name, timeout.value)) : body
    // the first attempt's start is recorded once it holds what it waited for, right before the handler
    const starting = started !== undefined && attempt === 1 ? Effect.zipRight(started, timed) : timed
    // permit → worker reservation (wait, spawn, import) → (start recorded) → deadline → handler
    return policy.withPermit(prepared.reserve(starting) as Effect.Effect<unknown, ToolFailure, R>)
  })
  return prepared.retry === undefined ? once : Effect.retry(once, prepared.retry)
}

const deadline = (toolName: string, duration: Duration.Duration) => ({
  duration,
  onTimeout: () => new ToolTimeout({ toolName, timeout: duration })
})

const failed = (call: ToolCall.ToolCall, error: ToolFailure): Executed => ({
  result: { _tag: "Failed", callId: call.id, toolName: call.name, error },
  writes: undefined
})

/** A defect's own message, without its stack. */
const defectMessage = (cause: Cause.Cause<unknown>) => {
  const defect = Cause.squash(cause)
  return defect instanceof Error ? defect.message : String(defect)
}

/**
 * The `semantic` failure a defect becomes: a short, fixed message for the model (the defect's
 * own message only when the tool exposes defects); the full cause goes to the log (and, with a
 * tracer, to the call's span).
 */
const died = (entry: Toolkit.Entry, cause: Cause.Cause<unknown>) =>
  Effect.as(
    Effect.logError(`Tool "${entry.name}" died`, cause),
    semantic(
      entry.tool.exposeDefects
        ? `Tool "${entry.name}" failed unexpectedly: ${defectMessage(cause)}`
        : `Tool "${entry.name}" failed unexpectedly`
    )
  )

/** The `semantic` failure of a value the tool's `success` schema rejects; logged. */
const rejectedResult = (entry: Toolkit.Entry, error: ParseResult.ParseError) =>
  Effect.as(
    Effect.logError(`Tool "${entry.name}" returned a value its success schema rejects`, error),
    invalidResult(entry.name, error)
  )

/**
 * Runs one call of a known tool: its arguments decoded (unless `args` holds them already) →
 * the handler's attempts → the success value encoded. Never fails: every failure becomes a
 * `Failed` result. Interruption is not caught.
 *
 * Not a generator: while the handler runs, the call keeps one frame alive — the
 * `matchCauseEffect` below, whose handlers encode the value or turn the failure into a result
 * and then go on with `then` (what follows the call: the rest of its batch and run) in that
 * frame's place. Every run suspended in a tool keeps this frame, and nothing else of agentfx
 * when its batch is one call (docs/performance.md); a decode or an encode by a synchronous
 * schema is read at once, without a frame of its own.
 */
export const executeCall = <R, B = Executed, E2 = never, R2 = never>(
  entry: Toolkit.Entry,
  call: ToolCall.ToolCall,
  policy: ExecutionPolicy,
  state: StateSnapshot,
  options?: CallToRun,
  then: (executed: Executed) => Effect.Effect<B, E2, R2> = Effect.succeed as never
): Effect.Effect<B, E2, R | R2> => {
  const prepared = prepare(entry)
  const resumption = options?.resumption
  const ending = endingOf(entry, prepared, call, then)
  if (options?.decoded === true) {
    return Effect.matchCauseEffect(attempts<R>(entry, prepared, policy, call.id, state, resumption, options.args, options.started), ending)
  }
  const decoded = decodeArguments(entry, call.args)
  const now = settledEither(decoded)
  if (now === undefined) {
    return Effect.matchCauseEffect(
      Effect.flatMap(decoded, (args) => attempts<R>(entry, prepared, policy, call.id, state, resumption, args, options?.started)),
      ending
    )
  }
  return Either.isLeft(now)
    ? then(failed(call, now.left))
    : Effect.matchCauseEffect(attempts<R>(entry, prepared, policy, call.id, state, resumption, now.right, options?.started), ending)
}

/**
 * The handlers of the call's one frame: interruption passes; a failure, a defect or the
 * encoded value becomes the call's result, and `then` goes on with it. Built apart from
 * `executeCall`, so that the frame a waiting call keeps holds these four and nothing else.
 */
const endingOf = <B, E2, R2>(
  entry: Toolkit.Entry,
  prepared: Prepared,
  call: ToolCall.ToolCall,
  then: (executed: Executed) => Effect.Effect<B, E2, R2>
) => ({
  onFailure: (cause: Cause.Cause<ToolFailure>): Effect.Effect<B, E2, R2> => {
    if (Cause.isInterrupted(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    const failure = Cause.failureOption(cause)
    return Option.isSome(failure) ? then(failed(call, failure.value)) : andThen(Effect.map(died(entry, cause), (e) => failed(call, e)), then)
  },
  onSuccess: (output: unknown) => andThen(succeeded(entry, prepared, call, output), then)
})

/** A handler's output as a result: a suspension (a delegate's child paused), or the value encoded with `success`. */
const succeeded = (entry: Toolkit.Entry, prepared: Prepared, call: ToolCall.ToolCall, output: unknown): Effect.Effect<Executed> => {
  if (isSuspension(output)) {
    const { checkpoint, pending, reason } = output.exit
    return Effect.succeed({
      result: { _tag: "Suspended", callId: call.id, toolName: call.name, reason, pending, checkpoint: checkpoint as JsonValue },
      writes: undefined
    })
  }
  if (!isOutput(output)) return encodedResult(entry, prepared, call, output, undefined, undefined)
  return encodedResult(entry, prepared, call, output.value, output.writes, output.files)
}

/** The value encoded with `success` as the call's result, with the handler's writes and files. */
const encodedResult = (
  entry: Toolkit.Entry,
  prepared: Prepared,
  call: ToolCall.ToolCall,
  value: unknown,
  writes: Executed["writes"],
  files: ReadonlyArray<FilePart> | undefined
): Effect.Effect<Executed> => {
  const encoded = prepared.encode(value)
  // a synchronous schema's encode is an Either: read at once
  const now = settledEither(encoded)
  if (now !== undefined) {
    return Either.isRight(now)
      ? Effect.succeed(succeededWith(call, now.right, writes, files))
      : Effect.map(rejectedResult(entry, now.left), (e) => failed(call, e))
  }
  return Effect.matchEffect(encoded, {
    onFailure: (error) => Effect.map(rejectedResult(entry, error), (e) => failed(call, e)),
    onSuccess: (value) => Effect.succeed(succeededWith(call, value, writes, files))
  })
}

const succeededWith = (
  call: ToolCall.ToolCall,
  encoded: unknown,
  writes: Executed["writes"],
  files: ReadonlyArray<FilePart> | undefined
): Executed => ({
  result: files === undefined || files.length === 0
    ? { _tag: "Succeeded", callId: call.id, toolName: call.name, value: encoded as JsonValue }
    : { _tag: "Succeeded", callId: call.id, toolName: call.name, value: encoded as JsonValue, files },
  writes
})

/** The result for a call naming a tool the toolkit does not have. */
export const unknownTool = (toolkit: Toolkit.Any, call: ToolCall.ToolCall): Executed =>
  failed(call, semantic(`Unknown tool "${call.name}". Available tools: ${[...toolkit.entries.keys()].join(", ") || "none"}`))

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
    Effect.flatMap((decoded) => attempts<R>(entry, prepared, policy, "direct", {}, undefined, decoded, undefined)),
    Effect.catchAllDefect((defect) => Effect.flatMap(died(entry, Cause.die(defect)), Effect.fail)),
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
  then: (executed: Executed) => Effect.Effect<B, E2, R2> = Effect.succeed as never
): Effect.Effect<B, E2, R | R2> => {
  const entry = toolkit.entries.get(item.call.name)
  return entry === undefined ? then(unknownTool(toolkit, item.call)) : executeCall(entry, item.call, policy, state, item, then)
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
