/**
 * Continuing a run: `Agent.resume` claims a paused run — by run id, or from a copy of its
 * checkpoint, imported into the store on first use — and `Agent.recover` takes over a run of
 * a durable store whose process crashed. The record in the store is the authority: exactly
 * one claimant proceeds; nothing runs that no verdict allowed.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { Any } from "../Agent.js"
import { InvalidCheckpoint, InvalidRunInput, RunAlreadyResumed, RunNotFound } from "../AgentError.js"
import type * as Checkpoint from "../Checkpoint.js"
import { ChatMemory } from "../ChatMemory.js"
import * as Decision from "../Decision.js"
import type { RunRecord, StoreError } from "../RunStore.js"
import { RunStore } from "../RunStore.js"
import { recordedBatch } from "./crashed.js"
import * as CheckpointCodec from "./checkpoint.js"
import { divergence } from "./diverged.js"
import { continueRun } from "./loop.js"
import { capped, describeParseError } from "./parseError.js"
import { alreadyDecided, recorderOf } from "./record.js"
import * as Resume from "./resume.js"
import { holdConversation } from "./busy.js"
import { loneSurrogate, runState } from "./run.js"
import type { RunState } from "./runState.js"

/**
 * The paused record a resume claims, decoded: by run id, or from a checkpoint (imported when the
 * store does not have it) — at `revision` when the decision names the pause it was made on. By
 * run id, its conversation is held in the same step where the store can (`held`).
 */
const pausedRecord = Effect.fnUntraced(function*(agent: Any, store: RunStore.Service, target: unknown, revision: number | undefined) {
  if (typeof target === "string") {
    const { held, record } = store.getHolding === undefined ? { record: yield* store.get(target), held: false } : yield* store.getHolding(target)
    if (Option.isNone(record)) {
      const finished = yield* store.finished(target)
      return yield* Option.isSome(finished)
        ? Effect.fail(new RunAlreadyResumed({ runId: target, ...finished.value }))
        : Effect.fail(new RunNotFound({ runId: target }))
    }
    if (record.value.status !== "paused" || (revision !== undefined && record.value.version !== revision)) {
      return yield* new RunAlreadyResumed({ runId: target, status: record.value.status, decidedBy: record.value.decidedBy })
    }
    return { record: record.value, decoded: yield* CheckpointCodec.decode(agent, record.value.checkpoint), trusted: true, held }
  }
  const decoded = yield* CheckpointCodec.decode(agent, target)
  const { checkpoint } = decoded
  if (revision !== undefined && checkpoint.revision !== revision) {
    return yield* new InvalidCheckpoint({
      reason: "revision",
      detail: `the decision was made on revision ${revision}, the checkpoint is revision ${checkpoint.revision}`
    })
  }
  const record = yield* store.get(checkpoint.runId)
  if (Option.isSome(record)) {
    if (record.value.status !== "paused" || record.value.version !== checkpoint.revision) {
      return yield* new RunAlreadyResumed({ runId: checkpoint.runId, status: record.value.status, decidedBy: record.value.decidedBy })
    }
    if (record.value.conversationId !== checkpoint.conversationId) {
      return yield* new InvalidCheckpoint({
        reason: "conversation",
        detail: `run ${checkpoint.runId} belongs to conversation "${record.value.conversationId}", not "${checkpoint.conversationId}"`
      })
    }
    // the record is the authority; the copy only named it
    return { record: record.value, decoded: yield* CheckpointCodec.decode(agent, record.value.checkpoint), trusted: true, held: false }
  }
  const finished = yield* store.finished(checkpoint.runId)
  if (Option.isSome(finished)) return yield* new RunAlreadyResumed({ runId: checkpoint.runId, ...finished.value })
  // on the store's clock, as the pause was stamped and the finished run is forgotten: whatever this host's clock says
  const now = yield* store.now
  // a run that finished as it paused is forgotten once the retention has passed: so is its copy
  if (now - checkpoint.pausedAt >= store.retentionMillis) {
    return yield* new InvalidCheckpoint({
      reason: "expired",
      detail: `paused ${Duration.format(Duration.millis(now - checkpoint.pausedAt))} ago, no shorter than the run store remembers finished runs (${
        Duration.format(Duration.millis(store.retentionMillis))
      }): it can no longer be told apart from a replay`
    })
  }
  return { record: undefined, decoded, trusted: agent.checkpointSecret !== undefined, input: target, held: false }
})

const validateDecision = Schema.decodeUnknownResult(Schema.toType(Decision.Decision), { reportInput: true })

/** A call decision without the value checked later: edited arguments, a reply's value. */
const callShapeOf = (decision: unknown): unknown =>
  Predicate.isTagged(decision, "Approve")
    ? { ...decision, args: undefined }
    : Predicate.isTagged(decision, "Reply") && Predicate.hasProperty(decision, "value")
    ? { ...decision, value: null }
    : decision

/**
 * `decision` without the values checked later, by `Resume.plan`, with messages that name what
 * they concern: edited arguments and a reply's value (`InvalidEditedArguments`, per call: beyond
 * the agent's limits, not JSON, not decoding), a `continue`'s `raise` (`InvalidRunInput`, every
 * limit that is wrong). What is left is the decision's shape.
 */
const shapeOf = (decision: unknown): unknown => {
  if (Predicate.isTagged(decision, "Continue")) return { ...decision, raise: undefined }
  if (Predicate.isTagged(decision, "ByCall") && Predicate.hasProperty(decision, "decisions") && decision.decisions instanceof Map) {
    return { ...decision, decisions: new Map(Array.from(decision.decisions, ([id, call]) => [id, callShapeOf(call)])) }
  }
  return decision
}

/**
 * Fails when `decision` is not a `Decision` (its type: `ByCall`'s decisions a `Map` of call
 * decisions) — a plain object from an HTTP body given as is, say — rather than dying on it
 * later. Nothing is read or consumed before.
 */
const checkShape = (decision: unknown): Effect.Effect<void, InvalidRunInput> => {
  const valid = validateDecision(shapeOf(decision))
  return Result.isSuccess(valid) ? Effect.void : Effect.fail(
    new InvalidRunInput({
      problems: [
        `the decision is not a Decision: ${
          capped(describeParseError(valid.failure))
        } (build one with Decision.approveAll, Decision.byCall, …; decode an HTTP body with Schema.decodeUnknownEffect(Decision.Decision))`
      ]
    })
  )
}

/**
 * Continues a paused run with a decision: checks that it is one (`checkShape`), validates the
 * checkpoint, the decision and the conversation before anything is consumed, claims the record
 * (`paused@v → running@v+1`: one claimant only), then finishes the paused batch (or iterates
 * again, after `MaxIterationsReached`).
 */
export const resumeRun = (
  agent: Any,
  target: unknown,
  decision: Decision.Decision,
  { decidedBy, decisionId, revision }: {
    readonly decidedBy?: string | undefined
    readonly decisionId?: string | undefined
    readonly revision?: number | undefined
  }
) =>
  Effect.scoped(Effect.gen(function*() {
    yield* checkShape(decision)
    for (const [name, value, what] of [["decidedBy", decidedBy, "name"], ["decisionId", decisionId, "id"]] as const) {
      if (value !== undefined && (typeof value !== "string" || loneSurrogate.test(value))) {
        return yield* new InvalidRunInput({
          problems: [`${name} ${JSON.stringify(value)} must be a string without a lone surrogate (a store would record another ${what})`]
        })
      }
    }
    const store = yield* RunStore
    const found = yield* pausedRecord(agent, store, target, revision)
    const cp = found.decoded.checkpoint
    const plan = yield* Resume.plan(agent, cp, found.decoded.state, decision, found.trusted)
    const run = yield* runOf(agent, cp, found.decoded.state, {
      history: [...plan.messages],
      iteration: plan.mode === "continue" && cp.kind === "max-iterations" ? 0 : cp.iteration,
      budget: plan.budget,
      version: cp.revision
    })
    if (!run.ephemeral && !found.held) yield* holdConversation(run, agent.onConversationBusy === "wait")
    const memory = yield* ChatMemory
    const stored = run.ephemeral ? [] : yield* memory.get(run.conversationId)
    const diverged = stored.length === 0 ? undefined : divergence(run.conversationId, stored, cp.messages)
    if (diverged !== undefined) {
      // a concurrent resume of this run may have claimed and finished it since it was read
      const now = yield* store.get(cp.runId)
      if (Option.isSome(now) ? now.value.status !== "paused" || now.value.version !== cp.revision : found.record !== undefined) {
        return yield* alreadyDecided(store, cp.runId)
      }
      return yield* diverged
    }
    // a copy from elsewhere: imported as the run's paused record; a concurrent import wins once
    if (found.record === undefined) yield* run.recorder.importCopy(agent, cp, found.input)
    const batch = plan.mode === "batch" ? plan.batch : []
    yield* run.recorder.claim(agent, run, batch, { decidedBy, decisionId })
    const rewritten = !run.ephemeral && (stored.length === 0 || plan.messages !== cp.messages)
      ? pausedAgainOnFailure(agent, run, found.decoded, memory.replace(run.conversationId, plan.messages))
      : Effect.void
    const body = Effect.andThen(rewritten, Effect.suspend(() => continueRun(agent, run, batch, plan.environmentPause)))
    return yield* run.observe.turn(
      "resume",
      () => ({ _tag: "RunResumed", agent: agent.name, decision: decision._tag }),
      run.recorder.recorded(run, body)
    )
  }))

/**
 * A step of a claimed resume before anything of the run ran (writing its conversation back):
 * when it fails, the run is paused again as it was (at the next version: resumable by id; a
 * copy of the old checkpoint is refused), then the failure is returned. Should the pause
 * itself fail, the run ends failed (`recorded`).
 */
const pausedAgainOnFailure = <E>(
  agent: Any,
  run: RunState,
  decoded: { readonly checkpoint: Checkpoint.Checkpoint; readonly state: { [slot: string]: unknown } },
  step: Effect.Effect<void, E>
) =>
  Effect.catch(step, (error) =>
    run.recorder.pauseAgain(agent, run, decoded.checkpoint, decoded.state).pipe(
      Effect.catch((cause) => Effect.logError(`Run ${run.runId}: it could not be paused again after a failed resume`, cause)),
      Effect.andThen(Effect.fail(error))
    ))

/**
 * The state of a run continued from its checkpoint, read from the fiber like a new run's: the
 * run's own settings over the agent's, and the tool choice its next model call had (`"auto"`
 * once the run made a model call: a resume goes on with the run, it starts no new one).
 */
const runOf = (
  agent: Any,
  cp: Checkpoint.Checkpoint,
  state: { [slot: string]: unknown },
  fields: Pick<RunState, "history" | "iteration" | "budget" | "version">
) =>
  Effect.withFiber<RunState>((fiber) =>
    Effect.succeed(runState(agent, fiber, {
      runId: cp.runId,
      conversationId: cp.conversationId,
      ephemeral: cp.ephemeral,
      state,
      modelCalls: cp.modelCalls,
      outputRetries: cp.outputRetries,
      usage: cp.usage,
      outcomes: [...cp.outcomes],
      ...fields
    }, { settings: cp.settings, toolChoice: cp.toolChoice ?? "auto", context: cp.context }))
  )

/**
 * Takes over a run of a durable store whose process crashed in a batch (its lease expired):
 * the calls whose results were recorded are not run again; a call that was running at the
 * crash runs again only when its tool is `idempotent`, else the model is told it was
 * cancelled; a call that had not started runs (`crashed.ts`). Then the run goes on as if it
 * had never stopped.
 */
export const recoverRun = (agent: Any, runId: string) =>
  Effect.scoped(Effect.gen(function*() {
    const store = yield* RunStore
    const record: RunRecord | undefined = Option.getOrUndefined(yield* store.get(runId))
    if (record === undefined) return yield* new RunNotFound({ runId })
    if (record.status !== "running" || record.checkpoint === undefined) {
      return yield* new RunAlreadyResumed({ runId, status: record.status })
    }
    // alive elsewhere: its owner still holds the run
    if (!(yield* recorderOf(store).hold(runId, `recover:${runId}`))) {
      return yield* new RunAlreadyResumed({ runId, status: "running" })
    }
    const decoded = yield* CheckpointCodec.decode(agent, record.checkpoint)
    const cp: Checkpoint.Checkpoint = decoded.checkpoint
    const run = yield* runOf(agent, cp, decoded.state, {
      history: [...cp.messages],
      iteration: cp.iteration,
      budget: cp.budget,
      version: record.version
    })
    if (!run.ephemeral) yield* holdConversation(run, agent.onConversationBusy === "wait")
    // its writer, should it still be alive, records nothing after this: what is read next is all it did
    const taken = yield* run.recorder.takeOver(runId, record.version)
    if (taken === undefined) return yield* alreadyDecided(store, runId)
    run.version = taken.version
    const batch = yield* recordedBatch(agent, store, runId, cp.batch)
    if (!run.ephemeral) yield* Effect.flatMap(ChatMemory, (memory) => memory.replace(run.conversationId, cp.messages))
    const body = Effect.suspend(() => continueRun(agent, run, batch, agent.onEnvironmentError === "pause"))
    return yield* run.observe.turn(
      "resume",
      () => ({ _tag: "RunResumed", agent: agent.name, decision: "Recover" }),
      run.recorder.recorded(run, body)
    )
  }))

/**
 * Cancels a run of `agent` (see `Agent.cancel`): paused, it ends failed; running, it is taken
 * over and ends failed. A record that moved meanwhile (a resume claimed it, a batch ended) is
 * read again and cancelled as it is now, until it has finished.
 */
export const cancelRun = (agent: Any, runId: string, cancelledBy: string | undefined) =>
  Effect.flatMap(RunStore, (store) => {
    const attempt: Effect.Effect<void, RunNotFound | RunAlreadyResumed | StoreError> = Effect.flatMap(store.get(runId), (record) => {
      if (Option.isNone(record) || record.value.agent !== agent.name) {
        return Effect.flatMap(store.finished(runId), (finished): Effect.Effect<never, RunNotFound | RunAlreadyResumed> =>
          Option.isSome(finished) && Option.isNone(record)
            ? Effect.fail(new RunAlreadyResumed({ runId, ...finished.value }))
            : Effect.fail(new RunNotFound({ runId })))
      }
      const { status } = record.value
      if (status === "completed" || status === "failed") return alreadyDecided(store, runId)
      return Effect.catchIf(
        recorderOf(store).cancel(record.value, cancelledBy),
        (error) => error._tag === "RunAlreadyResumed" && (error.status === "paused" || error.status === "running"),
        () => attempt
      )
    })
    return attempt
  })
