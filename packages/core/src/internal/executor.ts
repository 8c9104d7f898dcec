/**
 * The one place a tool call is decoded, timed, retried and encoded.
 */
import type { Duration, ParseResult } from "effect"
import { Cause, Effect, Option, Schema } from "effect"
import type { ParseOptions } from "effect/SchemaAST"
import { concurrently } from "./concurrently.js"
import type { JsonValue } from "../Json.js"
import { describeParseError } from "./parseError.js"
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

/**
 * Runs one call of a known tool: decode the model's arguments → handler under the timeout
 * (per attempt, inside the permit and, for a worker tool, inside the reservation of a ready
 * worker) → retry transient failures → encode the success value.
 * Never fails: every failure becomes a `Failed` result. Interruption is not caught.
 */
export const executeCall = <R>(
  entry: Toolkit.Entry,
  call: ToolCall.ToolCall,
  policy: ExecutionPolicy,
  state: StateSnapshot,
  resumption?: Resumption
): Effect.Effect<Executed, never, R> => {
  const prepared = prepare(entry)
  const timeout = effectiveTimeout(entry, policy)
  const handler = entry.tool.handler as (
    args: unknown,
    context: { callId: string; toolName: string; attempt: number; state: StateSnapshot; [ResumptionKey]?: Resumption }
  ) => Effect.Effect<unknown, ToolError, R>

  const attempts = (args: unknown): Effect.Effect<unknown, ToolFailure, R> => {
    let attempt = 0
    const once = Effect.suspend(() => {
      attempt += 1
      const context = { callId: call.id, toolName: entry.name, attempt, state }
      const body = handler(args, resumption === undefined ? context : { ...context, [ResumptionKey]: resumption })
      const timed = Option.isSome(timeout)
        ? Effect.timeoutFail(body, {
          duration: timeout.value,
          onTimeout: () => new ToolTimeout({ toolName: entry.name, timeout: timeout.value })
        })
        : body
      // permit → worker reservation (wait, spawn, import) → deadline → handler
      return policy.withPermit(prepared.reserve(timed) as Effect.Effect<unknown, ToolFailure, R>)
    })
    // a defect is not a failure: `Effect.retry` never retries it
    return prepared.retry === undefined ? once : Effect.retry(once, prepared.retry)
  }

  // one handler for every ending: interruption passes through, a failure (bad arguments, the
  // tool's error, a timeout) becomes a `Failed` result, a defect a logged `semantic` one
  return Effect.matchCauseEffect(
    Effect.flatMap(Effect.mapError(prepared.decodeArgs(call.args), (error) => invalidArguments(entry.name, error)), attempts),
    {
      onFailure: (cause): Effect.Effect<Executed> => {
        if (Cause.isInterrupted(cause)) return Effect.failCause(cause as Cause.Cause<never>)
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) return Effect.succeed(noWrites(failed(call, failure.value)))
        return Effect.as(
          Effect.logError(`Tool "${entry.name}" died`, cause),
          noWrites(failed(call, semantic(`Tool "${entry.name}" failed unexpectedly: ${Cause.pretty(cause)}`)))
        )
      },
      onSuccess: (output) => encode(prepared, entry, call, output)
    }
  )
}

/** The handler's output as the call's result: encoded with `success`, or a suspension, with its state writes. */
const encode = (prepared: Prepared, entry: Toolkit.Entry, call: ToolCall.ToolCall, output: unknown): Effect.Effect<Executed> => {
  if (isSuspension(output)) {
    const { checkpoint, pending, reason } = output.exit
    return Effect.succeed(noWrites({ _tag: "Suspended", callId: call.id, toolName: call.name, reason, pending, checkpoint: checkpoint as JsonValue }))
  }
  const [value, writes] = isResult(output) ? [output.value, output.writes] : [output, undefined]
  return Effect.matchEffect(prepared.encodeValue(value), {
    onFailure: (error) =>
      Effect.logError(`Tool "${entry.name}" returned a value its success schema rejects`, error).pipe(
        Effect.as(noWrites(failed(call, semantic(`Tool "${entry.name}" returned an invalid result: ${describeParseError(error)}`))))
      ),
    onSuccess: (encoded) =>
      Effect.succeed<Executed>({
        result: { _tag: "Succeeded", callId: call.id, toolName: call.name, value: encoded as JsonValue },
        writes
      })
  })
}

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

/**
 * Runs a batch with the manager's policy: calls concurrently as the manager allows (one
 * fiber per call, see `concurrently`), or one after another when any call's tool is
 * `serial`; a single call runs in the caller's fiber. Results come back in call order. `around`
 * wraps each call (middleware, events, spans), outside its permit and timeout.
 */
export const executeCalls = <R>(
  toolkit: Toolkit.Toolkit<R>,
  calls: ReadonlyArray<ToolCall.ToolCall>,
  policy: ExecutionPolicy & { readonly concurrency: number | "unbounded" },
  state: StateSnapshot,
  around?: (call: ToolCall.ToolCall, execute: ExecuteOne<R>) => Effect.Effect<Executed, never, R>,
  resumptions?: ReadonlyMap<string, Resumption>
): Effect.Effect<Array<Executed>, never, R> => {
  const serial = calls.some((call) => toolkit.entries.get(call.name)?.serial === true)
  const execute: ExecuteOne<R> = (call) => {
    const entry = toolkit.entries.get(call.name)
    return entry === undefined
      ? Effect.succeed(unknownToolResult(toolkit, call))
      : executeCall<R>(entry, call, policy, state, resumptions?.get(call.id))
  }
  const one = around === undefined ? execute : (call: ToolCall.ToolCall) => around(call, execute)
  if (calls.length === 1) return Effect.map(one(calls[0]!), (executed) => [executed])
  if (!serial && policy.concurrency === "unbounded") return concurrently(calls.map(one))
  return Effect.forEach(calls, one, { concurrency: serial ? 1 : policy.concurrency })
}
