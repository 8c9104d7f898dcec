/**
 * The one place a tool call is decoded, timed, retried and encoded.
 */
import type { Duration, ParseResult } from "effect"
import { Cause, Effect, Option, Schema } from "effect"
import type { ParseOptions } from "effect/SchemaAST"
import { concurrently } from "./concurrently.js"
import type { JsonValue } from "../Json.js"
import { describeParseError } from "./parseError.js"
import { settledEither } from "./settled.js"
import { reserveWorker } from "./workerTool.js"
import type * as ToolCall from "../ToolCall.js"
import { semantic, ToolTimeout } from "../ToolError.js"
import type { ToolError, ToolFailure } from "../ToolError.js"
import { isTransient } from "../ToolError.js"
import type * as Toolkit from "../Toolkit.js"
import { isResult } from "../Tool.js"
import type { Resumption } from "./suspension.js"
import { isSuspension, ResumptionKey } from "./suspension.js"

/** What one call produced: its result, and the state writes of a successful handler. */
export interface Executed {
  readonly result: ToolCall.Result
  readonly writes: { readonly [slot: string]: unknown } | undefined
}

/** The run state every call of a batch reads. */
export type StateSnapshot = { readonly [slot: string]: unknown }

const noWrites = (result: ToolCall.Result): Executed => ({ result, writes: undefined })

/** How the manager running a call shapes it. */
export interface ExecutionPolicy {
  /** Used when the tool declares no timeout of its own. */
  readonly defaultTimeout: Option.Option<Duration.Duration>
  /** Wraps each attempt of the handler, outside its timeout (a bounded manager's permit). */
  readonly withPermit: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/** What a tool's calls need, built once per metadata row. */
interface Prepared {
  readonly decodeArgs: (u: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
  readonly encodeValue: (a: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
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

const prepare = (entry: Toolkit.Entry): Prepared => {
  const cached = preparedCache.get(entry)
  if (cached !== undefined) return cached
  const prepared: Prepared = {
    decodeArgs: Schema.decodeUnknown(entry.tool.parameters, decodeOptions),
    encodeValue: Schema.encode(entry.tool.success),
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
export const effectiveTimeout = (
  entry: Toolkit.Entry,
  policy: ExecutionPolicy
): Option.Option<Duration.Duration> => Option.orElse(entry.timeout, () => policy.defaultTimeout)

const failed = (call: ToolCall.ToolCall, error: ToolFailure): ToolCall.Result => ({
  _tag: "Failed",
  callId: call.id,
  toolName: call.name,
  error
})

/** What follows an executed call: the rest of its batch (and run), or `Effect.succeed`. */
export type Then<B, E, R> = (executed: Executed) => Effect.Effect<B, E, R>

/**
 * Runs one call of a known tool: decode the model's arguments → handler under the timeout
 * (per attempt, inside the permit and, for a worker tool, inside the reservation of a ready
 * worker) → retry transient failures → encode the success value, then `then` with what the
 * call produced (outside every one of those regions).
 * Never fails: every failure becomes a `Failed` result. Interruption is not caught.
 *
 * A run suspended in a tool keeps one continuation frame of this function alive: decoding
 * and encoding by synchronous schemas run inline, and `then` runs in the frame's place
 * (docs/performance.md). The closures built per call are anonymous (see `endingsOf`).
 */
export const executeCall = <R, B = Executed, E2 = never, R2 = never>(
  entry: Toolkit.Entry,
  call: ToolCall.ToolCall,
  policy: ExecutionPolicy,
  state: StateSnapshot,
  resumption: Resumption | undefined,
  then: Then<B, E2, R2> = Effect.succeed as unknown as Then<B, E2, R2>
): Effect.Effect<B, E2, R | R2> => {
  const prepared = prepare(entry)
  const decoded = prepared.decodeArgs(call.args)
  const now = settledEither(decoded)
  if (now !== undefined) {
    return now._tag === "Left"
      ? then(noWrites(failed(call, invalidArguments(entry.name, now.left))))
      : Effect.matchCauseEffect(attempts<R>(prepared, entry, call, policy, state, resumption, now.right), endingsOf(prepared, entry, call, then))
  }
  return Effect.matchCauseEffect(
    Effect.flatMap(
      Effect.mapError(decoded, (error) => invalidArguments(entry.name, error)),
      attemptsOf<R>(prepared, entry, call, policy, state, resumption)
    ),
    endingsOf(prepared, entry, call, then)
  )
}

type Handler<R> = (
  args: unknown,
  context: { callId: string; toolName: string; attempt: number; state: StateSnapshot; [ResumptionKey]?: Resumption }
) => Effect.Effect<unknown, ToolError, R>

const attemptsOf = <R>(
  prepared: Prepared,
  entry: Toolkit.Entry,
  call: ToolCall.ToolCall,
  policy: ExecutionPolicy,
  state: StateSnapshot,
  resumption: Resumption | undefined
) =>
(args: unknown) => attempts<R>(prepared, entry, call, policy, state, resumption, args)

/** The handler's attempts: each one inside `Effect.suspend` (the handler is called when the attempt runs), retried when the tool says so. */
const attempts = <R>(
  prepared: Prepared,
  entry: Toolkit.Entry,
  call: ToolCall.ToolCall,
  policy: ExecutionPolicy,
  state: StateSnapshot,
  resumption: Resumption | undefined,
  args: unknown
): Effect.Effect<unknown, ToolFailure, R> => {
  const timeout = effectiveTimeout(entry, policy)
  let attempt = 0
  const once = Effect.suspend(() => {
    attempt += 1
    const context = { callId: call.id, toolName: entry.name, attempt, state }
    const body = (entry.tool.handler as Handler<R>)(
      args,
      resumption === undefined ? context : { ...context, [ResumptionKey]: resumption }
    )
    const timed = Option.isSome(timeout) ? Effect.timeoutFail(body, timeoutOf(entry.name, timeout.value)) : body
    // permit → worker reservation (wait, spawn, import) → deadline → handler
    return policy.withPermit(prepared.reserve(timed) as Effect.Effect<unknown, ToolFailure, R>)
  })
  // a defect is not a failure: `Effect.retry` never retries it
  return prepared.retry === undefined ? once : Effect.retry(once, prepared.retry)
}

/** `Effect.timeoutFail` options for a deadline: the closure is built here, anonymous (see `endingsOf`). */
const timeoutOf = (toolName: string, duration: Duration.Duration) => ({
  duration,
  onTimeout: timeoutError(toolName, duration)
})

const timeoutError = (toolName: string, timeout: Duration.Duration) => () => new ToolTimeout({ toolName, timeout })

/**
 * One handler for every ending: interruption passes through, a failure (bad arguments, the
 * tool's error, a timeout) becomes a `Failed` result, a defect a logged `semantic` one; a
 * success is encoded. Built by a function so that its closures stay anonymous: tsx
 * (esbuild `keepNames`) gives every named closure a property array of its own (256 B).
 */
const endingsOf = <B, E2, R2>(prepared: Prepared, entry: Toolkit.Entry, call: ToolCall.ToolCall, then: Then<B, E2, R2>) => ({
  onFailure: failureOf(entry, call, then),
  onSuccess: successOf(prepared, entry, call, then)
})

const failureOf = <B, E2, R2>(entry: Toolkit.Entry, call: ToolCall.ToolCall, then: Then<B, E2, R2>) =>
(cause: Cause.Cause<ToolFailure>): Effect.Effect<B, E2, R2> => {
  if (Cause.isInterrupted(cause)) return Effect.failCause(cause as Cause.Cause<never>)
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return then(noWrites(failed(call, failure.value)))
  return Effect.zipRight(
    Effect.logError(`Tool "${entry.name}" died`, cause),
    Effect.suspend(() => then(noWrites(failed(call, semantic(`Tool "${entry.name}" failed unexpectedly: ${Cause.pretty(cause)}`)))))
  )
}

const successOf = <B, E2, R2>(prepared: Prepared, entry: Toolkit.Entry, call: ToolCall.ToolCall, then: Then<B, E2, R2>) =>
(output: unknown): Effect.Effect<B, E2, R2> => {
  if (isSuspension(output)) {
    const { checkpoint, pending, reason } = output.exit
    return then(noWrites({ _tag: "Suspended", callId: call.id, toolName: call.name, reason, pending, checkpoint: checkpoint as JsonValue }))
  }
  const [value, writes] = isResult(output) ? [output.value, output.writes] : [output, undefined]
  const encoded = prepared.encodeValue(value)
  const now = settledEither(encoded)
  if (now !== undefined) {
    return now._tag === "Right" ? then(succeeded(call, now.right, writes)) : invalidResult(entry, call, now.left, then)
  }
  return Effect.matchEffect(encoded, {
    onFailure: (error) => invalidResult(entry, call, error, then),
    onSuccess: (value) => then(succeeded(call, value, writes))
  })
}

const succeeded = (call: ToolCall.ToolCall, value: unknown, writes: Executed["writes"]): Executed => ({
  result: { _tag: "Succeeded", callId: call.id, toolName: call.name, value: value as JsonValue },
  writes
})

/** A value the tool's `success` schema rejects: logged, and a `semantic` failure for the model. */
const invalidResult = <B, E2, R2>(
  entry: Toolkit.Entry,
  call: ToolCall.ToolCall,
  error: ParseResult.ParseError,
  then: Then<B, E2, R2>
): Effect.Effect<B, E2, R2> =>
  Effect.zipRight(
    Effect.logError(`Tool "${entry.name}" returned a value its success schema rejects`, error),
    Effect.suspend(() => then(noWrites(failed(call, semantic(`Tool "${entry.name}" returned an invalid result: ${describeParseError(error)}`)))))
  )

/** The semantic error for arguments the tool's `parameters` schema rejects. */
export const invalidArguments = (toolName: string, error: ParseResult.ParseError): ToolError =>
  semantic(`Invalid arguments for tool "${toolName}": ${describeParseError(error)}`)

/** The result for a call naming a tool the toolkit does not have. */
export const unknownToolResult = (toolkit: Toolkit.Any, call: ToolCall.ToolCall): Executed =>
  noWrites(failed(
    call,
    semantic(`Unknown tool "${call.name}". Available tools: ${[...toolkit.entries.keys()].join(", ") || "none"}`)
  ))

/** Runs one call: the tool's `executeCall`, or the unknown-tool failure. */
export type ExecuteOne<R> = (call: ToolCall.ToolCall) => Effect.Effect<Executed, never, R>

/** Runs one call with `executeCall`, or gives it the unknown-tool failure. */
const executeOneOf = <R>(
  toolkit: Toolkit.Toolkit<R>,
  policy: ExecutionPolicy,
  state: StateSnapshot,
  resumptions: ReadonlyMap<string, Resumption> | undefined
): ExecuteOne<R> =>
(call) => {
  const entry = toolkit.entries.get(call.name)
  return entry === undefined
    ? Effect.succeed(unknownToolResult(toolkit, call))
    : executeCall<R>(entry, call, policy, state, resumptions?.get(call.id))
}

const wrappedBy = <R>(
  around: (call: ToolCall.ToolCall, execute: ExecuteOne<R>) => Effect.Effect<Executed, never, R>,
  execute: ExecuteOne<R>
): ExecuteOne<R> =>
(call) => around(call, execute)

/**
 * Runs a batch with the manager's policy, then `then` with the results in call order: calls
 * concurrently as the manager allows (one fiber per call, see `concurrently`), or one after
 * another when any call's tool is `serial`; a single call runs in the caller's fiber, and
 * `then` in place of its last frame, given the one result as is (no array: one allocation
 * and one closure less per step). `around` wraps each call (middleware, events, spans),
 * outside its permit and timeout.
 */
export const executeCalls = <R, B, E2, R2>(
  toolkit: Toolkit.Toolkit<R>,
  calls: ReadonlyArray<ToolCall.ToolCall>,
  policy: ExecutionPolicy & { readonly concurrency: number | "unbounded" },
  state: StateSnapshot,
  around: ((call: ToolCall.ToolCall, execute: ExecuteOne<R>) => Effect.Effect<Executed, never, R>) | undefined,
  resumptions: ReadonlyMap<string, Resumption> | undefined,
  then: (executed: Executed | Array<Executed>) => Effect.Effect<B, E2, R2>
): Effect.Effect<B, E2, R | R2> => {
  if (calls.length === 1 && around === undefined) {
    const call = calls[0]!
    const entry = toolkit.entries.get(call.name)
    return entry === undefined
      ? then(unknownToolResult(toolkit, call))
      : executeCall<R, B, E2, R2>(entry, call, policy, state, resumptions?.get(call.id), then)
  }
  const execute = executeOneOf(toolkit, policy, state, resumptions)
  const one = around === undefined ? execute : wrappedBy(around, execute)
  if (calls.length === 1) return Effect.flatMap(one(calls[0]!), then)
  const serial = calls.some((call) => toolkit.entries.get(call.name)?.serial === true)
  return Effect.flatMap(
    !serial && policy.concurrency === "unbounded"
      ? concurrently(calls.map(one))
      : Effect.forEach(calls, one, { concurrency: serial ? 1 : policy.concurrency }),
    then
  )
}
