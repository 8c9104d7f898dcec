/**
 * How a run ends, and what its record says: completed, or paused with its checkpoint (written
 * to the run store first: the record is the authority, the checkpoint a copy).
 */
import { Clock, Effect, Either, Option, Schema } from "effect"
import type * as Agent from "../Agent.js"
import { InvalidOutput, RunAlreadyResumed } from "../AgentError.js"
import type { MemoryError } from "../ChatMemory.js"
import { user } from "../Message.js"
import type * as AgentExit from "../AgentExit.js"
import type * as Checkpoint from "../Checkpoint.js"
import type { RunStore, StoreError } from "../RunStore.js"
import * as CheckpointCodec from "./checkpoint.js"
import { describeParseError } from "./parseError.js"
import type { BatchItem, RunState } from "./runState.js"
import { appendMessages } from "./runState.js"
import { nestedId } from "./suspension.js"

/** The run as a checkpoint at record version `revision`. */
export const checkpointOf = (
  agent: Agent.Any,
  run: RunState,
  reason: Checkpoint.Reason,
  batch: ReadonlyArray<BatchItem>,
  pending: ReadonlyArray<string>,
  revision: number,
  pausedAt: number
) =>
  CheckpointCodec.encode(agent, {
    runId: run.runId,
    revision,
    pausedAt,
    conversationId: run.conversationId,
    ephemeral: run.ephemeral,
    reason,
    iteration: run.iteration,
    modelCalls: run.modelCalls,
    ...(run.budget === undefined ? {} : { budget: run.budget }),
    ...(run.runSettings === undefined ? {} : { settings: run.runSettings }),
    ...(run.toolChoice === "auto" ? {} : { toolChoice: run.toolChoice }),
    messages: run.history,
    batch: batch.map((item) =>
      item.outcome !== undefined
        ? { call: item.call, outcome: item.outcome }
        : {
          call: item.call,
          ...(item.verdict === undefined ? {} : { verdict: item.verdict }),
          ...(item.verdict === "pause" && item.reason !== undefined ? { reason: item.reason } : {})
        }
    ),
    pending,
    usage: run.usage,
    outcomes: run.outcomes
  }, run.state)

/**
 * Records the run's stop in the store — a new paused record, or its running record turned
 * paused — and returns its checkpoint, a copy of the record's. A record that moved on meanwhile
 * (another process recovered the run) is `RunAlreadyResumed`.
 */
export const recordStop = Effect.fnUntraced(function*(
  agent: Agent.Any,
  run: RunState,
  reason: Exclude<Checkpoint.Reason, "running">,
  batch: ReadonlyArray<BatchItem>,
  pending: ReadonlyArray<string>
) {
  const now = yield* Clock.currentTimeMillis
  const revision = (run.version ?? 0) + 1
  const checkpoint = yield* checkpointOf(agent, run, reason, batch, pending, revision, now)
  if (run.version === undefined) {
    const inserted = yield* run.store.insert({
      runId: run.runId,
      agent: agent.name,
      conversationId: run.conversationId,
      ephemeral: run.ephemeral,
      status: "paused",
      version: revision,
      createdAt: now,
      updatedAt: now,
      checkpoint
    })
    if (!inserted) return yield* new RunAlreadyResumed({ runId: run.runId, status: "finished" })
  } else {
    const next = yield* run.store.transition(run.runId, {
      from: { status: "running", version: run.version },
      to: "paused",
      checkpoint
    })
    if (next === undefined) return yield* lost(run)
  }
  run.version = revision
  return checkpoint
})

/**
 * A durable store's record of the batch a run is about to execute — the history up to the
 * model's calls, each call's verdict or outcome — so that a crash during the batch can be
 * recovered (`Agent.recover`); each call's result is recorded as it ends (`batch.ts`). Nothing
 * for a store that is not durable.
 */
export const recordBatch = (agent: Agent.Any, run: RunState, batch: ReadonlyArray<BatchItem>): Effect.Effect<void, RunAlreadyResumed | StoreError> =>
  !run.store.durable || run.version === undefined ? Effect.void : recordDurableBatch(agent, run, batch, run.version)

const recordDurableBatch = Effect.fnUntraced(function*(agent: Agent.Any, run: RunState, batch: ReadonlyArray<BatchItem>, version: number) {
  const now = yield* Clock.currentTimeMillis
  const checkpoint = yield* checkpointOf(agent, run, "running", batch, [], version + 1, now)
  const next = yield* run.store.transition(run.runId, { from: { status: "running", version }, to: "running", checkpoint })
  if (next === undefined) return yield* lost(run)
  run.version = next.version
})

/**
 * The refusal of a run that someone else resumed: where it is now and who decided, from its
 * record (`finished` when the store no longer keeps it). `claimed`: the status to report while
 * the record still says paused (the winner holds the run but has not written its claim yet).
 */
export const alreadyDecided = (
  store: RunStore.Service,
  runId: string,
  claimed: "running" | "paused" = "paused"
): Effect.Effect<never, RunAlreadyResumed | StoreError> =>
  Effect.flatMap(store.get(runId), (record) =>
    record._tag === "None"
      ? Effect.flatMap(store.finished(runId), (finished) =>
        Effect.fail(new RunAlreadyResumed({ runId, ...Option.getOrElse(finished, () => ({ status: "finished" as const })) })))
      : Effect.fail(new RunAlreadyResumed({
          runId,
          status: record.value.status === "paused" ? claimed : record.value.status,
          decidedBy: record.value.decidedBy
        })))

/** The refusal for a run whose record another process took over. */
export const lost = (run: RunState): Effect.Effect<never, RunAlreadyResumed | StoreError> => alreadyDecided(run.store, run.runId)

/** Pauses the run: recorded, then a value, not an error. */
export const pause = (
  agent: Agent.Any,
  run: RunState,
  reason: "approval" | "environment",
  batch: ReadonlyArray<BatchItem>,
  pending: ReadonlyArray<AgentExit.PendingCall>
): Effect.Effect<AgentExit.Paused, RunAlreadyResumed | StoreError> =>
  Effect.map(
    recordStop(agent, run, reason, batch, pending.map((p) => p.call.id)),
    (checkpoint): AgentExit.Paused => ({
      _tag: "Paused",
      runId: run.runId,
      conversationId: run.conversationId,
      reason,
      pending,
      checkpoint
    })
  )

/** The calls of a batch that a person must decide: suspended calls' children (with nested ids), or the calls themselves. */
export const pendingOf = (items: ReadonlyArray<BatchItem>): Array<AgentExit.PendingCall> =>
  items.flatMap((item): Array<AgentExit.PendingCall> => {
    const outcome = item.outcome
    if (outcome?._tag === "Suspended") {
      return outcome.pending.map((child) => ({ ...child, call: { ...child.call, id: nestedId(item.call.id, child.call.id) } }))
    }
    if (outcome?._tag === "Failed") return [{ call: item.call, error: outcome.error }]
    return [item.reason === undefined ? { call: item.call } : { call: item.call, reason: item.reason }]
  })

/**
 * The run's final answer: completed with `text` — and, for an agent with an `output` schema,
 * `value`, the text decoded with it. An answer that does not decode is fed back to the model
 * (`retry`: while the agent's `outputRetries` allow; `undefined`: iterate again), else the run
 * fails with `InvalidOutput`.
 */
export const finalAnswer = (
  agent: Agent.Any,
  run: RunState,
  text: string,
  retry: boolean
): Effect.Effect<AgentExit.Completed | undefined, InvalidOutput | MemoryError> => {
  if (agent.output === undefined) return Effect.succeed(completed(run, text, undefined))
  const decoded = decodeOutput(agent.output.schema, text)
  if (Either.isRight(decoded)) return Effect.succeed(completed(run, text, decoded.right))
  if (!retry || run.outputRetries >= agent.output.retries) return Effect.fail(new InvalidOutput({ problem: decoded.left, text }))
  run.outputRetries += 1
  return Effect.as(
    appendMessages(run, [user(`Your answer does not match the required output: ${decoded.left}. Answer again with only the JSON.`)]),
    undefined
  )
}

/** The answer as JSON decoded with the output schema, or what is wrong with it. */
const decodeOutput = (schema: Schema.Schema<any, any>, text: string): Either.Either<unknown, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Either.left("it is not JSON")
  }
  return Either.mapLeft(Schema.decodeUnknownEither(schema, { errors: "all" })(json), describeParseError)
}

/** The run, completed with `text` (and `value`, the text decoded with the agent's `output` schema). */
export const completed = (run: RunState, text: string, value: unknown): AgentExit.Completed => ({
  _tag: "Completed",
  runId: run.runId,
  conversationId: run.conversationId,
  text,
  value,
  messages: run.history,
  state: run.state,
  toolCalls: run.outcomes,
  usage: run.usage
})
