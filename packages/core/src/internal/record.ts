/**
 * Every write a run makes to its record in the run store: the exactly-once protocol in one
 * place. A run's recorder is chosen once, from its store, when the run starts — as its
 * observer is (`observe.ts`):
 * - `durable` (a SQL store): a run is recorded from its start (running, held alive by a
 *   lease), each batch before it runs, each call's start before its handler and its result as
 *   it ends — so that a crash is recovered without running a finished call again;
 * - `pausesOnly` (the in-memory store): a run has a record once it pauses; a resume claims it.
 *
 * A durable run whose store writes its conversations (`RunStore.conversations` is its
 * `ChatMemory`) writes its new messages with its next record write — a batch, a stop, its end —
 * in one step with it: the record, not the memory, is what a crash is recovered from, and a
 * call's result is recorded as it ends either way. The write that ends a turn (a stop, the end)
 * lets go of the turn's leases with it; a claim holds the run alive in its own step where the
 * store can (decision 161).
 *
 * Every time a record or a checkpoint is stamped with is the store's (`RunStore.now`: a SQL
 * store's is the database's), never this host's: processes whose clocks disagree agree on when
 * a finished run is forgotten (decision 056).
 *
 * Either way the record is the authority. Every change names the version it expects
 * (compare-and-set): a run whose record moved on (claimed by another resume, taken over by a
 * recovery) is refused with `RunAlreadyResumed` and records, and starts, nothing more.
 */
import type { Scope } from "effect"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Agent from "../Agent.js"
import { InvalidRunInput, RunAlreadyResumed } from "../AgentError.js"
import type * as AgentExit from "../AgentExit.js"
import type * as Checkpoint from "../Checkpoint.js"
import type { RunRecord, RunStore, Status, StoreError, Transition } from "../RunStore.js"
import type { Outcome, ToolCall } from "../ToolCall.js"
import { semantic, type ToolError } from "../ToolError.js"
import * as BatchItem from "./batchItem.js"
import * as CheckpointCodec from "./checkpoint.js"
import type { RunState } from "./runState.js"

/** The kind of stop a decision ends (a pause, or a limit a decision may lift). */
export type StopKind = Exclude<Checkpoint.Kind, "running">

/**
 * Where a batch's progress is written: a run's record, at the version its writer holds, and
 * the first write that failed or was refused (the batch then fails with it, once every call
 * has ended: calls never fail). A run is its own recording; a crashed run's batch, finished by
 * the turn that supersedes it, is recorded in the crashed run's record.
 */
export interface Recording {
  readonly runId: string
  readonly version: number | undefined
  unrecorded: StoreError | RunAlreadyResumed | undefined
  /** The batch's own write, held back to ride on its first call's start (a run's own batch, on a store that can). */
  pendingBatch?: PendingBatch | undefined
}

/**
 * A batch's write held back until its first call starts: made with that call's start in one
 * step, right before the call's handler (a store whose `transitionStarts` is `true`). The batch's
 * other calls — their starts, any result — wait for it; a batch whose calls all ended without
 * starting writes it alone at its end.
 */
export interface PendingBatch {
  /** The write, carrying the start of call `started` when given. */
  readonly write: (started: string | undefined) => Effect.Effect<void, RunAlreadyResumed | StoreError>
  /** The write's exit, once made. */
  readonly done: Deferred.Deferred<void, RunAlreadyResumed | StoreError>
  taken: boolean
}

/** What records each call of a batch: its start, right before its handler; its result, as it ends. */
export interface CallRecorder {
  /** Fails — and the call does not run — when the start was not recorded (the batch then fails too). */
  readonly started: (recording: Recording, call: ToolCall) => Effect.Effect<void, ToolError>
  /** Whether the result was recorded; when not, why is kept in `recording.unrecorded`. */
  readonly result: (recording: Recording, outcome: Outcome) => Effect.Effect<boolean>
}

/** The writes of one run to its record (and, for the turn that supersedes them, to older runs' records). */
export interface Recorder {
  /** Whether the run's progress is recorded as it happens (its store is durable): what `Agent.recover` needs. */
  readonly durable: boolean
  /**
   * A new run's first record — running, at version 1 — held alive for the scope; nothing when
   * not durable. A run id the store has already is refused (`InvalidRunInput`), atomically.
   */
  readonly begin: (agent: Agent.Any, run: RunState) => Effect.Effect<void, InvalidRunInput | StoreError, Scope.Scope>
  /** The batch the run is about to execute — each call's verdict or outcome — for a recovery; nothing when not durable. */
  readonly batch: (agent: Agent.Any, run: RunState, batch: ReadonlyArray<BatchItem.BatchItem>) => Effect.Effect<void, RunAlreadyResumed | StoreError>
  /** What records each call of a batch; `undefined` when calls are not recorded. */
  readonly calls: CallRecorder | undefined
  /**
   * The runs recorded as running on a conversation, for a turn that holds it: they crashed (a
   * live run holds its conversation). None when not durable: such a store's running records are
   * live runs of this process.
   */
  readonly crashed: (conversationId: string) => Effect.Effect<ReadonlyArray<RunRecord>, StoreError>
  /**
   * The run's stop — a new paused record, or its running record turned paused, with its
   * unwritten messages and the turn's leases let go of — and its checkpoint, a copy of the record's.
   */
  readonly stop: (
    agent: Agent.Any,
    run: RunState,
    kind: StopKind,
    batch: ReadonlyArray<BatchItem.BatchItem>,
    pending: ReadonlyArray<string>
  ) => Effect.Effect<Checkpoint.Encoded, RunAlreadyResumed | StoreError>
  /** A copy of a checkpoint from elsewhere, as the run's paused record: on first use only (a concurrent import wins once). */
  readonly importCopy: (agent: Agent.Any, checkpoint: Checkpoint.Checkpoint, copy: unknown) => Effect.Effect<void, RunAlreadyResumed | StoreError>
  /**
   * Claims the paused run for its resume (`paused@v → running@v+1`: one claimant only), with who
   * decided and the decision's id; a durable store's running record holds the batch to run, and
   * the run is held alive.
   */
  readonly claim: (
    agent: Agent.Any,
    run: RunState,
    batch: ReadonlyArray<BatchItem.BatchItem>,
    decided: { readonly decidedBy: string | undefined; readonly decisionId: string | undefined }
  ) => Effect.Effect<void, RunAlreadyResumed | StoreError, Scope.Scope>
  /** A claimed run paused again as its checkpoint was (a step of the resume failed before anything ran): resumable by id. */
  readonly pauseAgain: (agent: Agent.Any, run: RunState, paused: Checkpoint.Checkpoint, state: { readonly [slot: string]: unknown }) => Effect.Effect<void, StoreError>
  /** Holds the run alive for the scope: `false` when another owner holds it (its process is alive). */
  readonly hold: (runId: string, owner: string) => Effect.Effect<boolean, StoreError, Scope.Scope>
  /**
   * Takes over a running run whose writer is gone (`RunStore.takeOver`): from then on its writer,
   * should it be alive, records and starts nothing more. `undefined` (nothing written): the
   * record is no longer running at `version`.
   */
  readonly takeOver: (runId: string, version: number) => Effect.Effect<RunRecord | undefined, StoreError>
  /** {@link takeOver}, of a record its writer may be moving (ending a batch): read again and taken over as it is now; `undefined` once no longer running. */
  readonly takeOverLatest: (record: RunRecord) => Effect.Effect<RunRecord | undefined, StoreError>
  /** Ends a running record this writer holds at `version` (a run superseded, or finished). */
  readonly end: (runId: string, version: number, to: "completed" | "failed") => Effect.Effect<void, StoreError>
  /** Ends a paused run that a new turn on its conversation superseded (its calls are answered by that turn). */
  readonly supersede: (record: RunRecord) => Effect.Effect<void, StoreError>
  /**
   * Cancels a run: paused, it ends failed; running, it is taken over and ends failed (its
   * writer records and starts nothing more). Refused with where it is when it finished meanwhile.
   */
  readonly cancel: (record: RunRecord, cancelledBy: string | undefined) => Effect.Effect<void, RunAlreadyResumed | StoreError>
  /**
   * The run's record follows the end of `body` (with its unwritten messages, the turn's leases let
   * go of): completed; failed on a typed error or a defect;
   * on interruption, failed too unless durable (the run stays running, for `Agent.recover`). A
   * pause has already turned the record paused, and is left as it is.
   */
  readonly recorded: <E, R>(run: RunState, body: Effect.Effect<AgentExit.AgentExit, E, R>) => Effect.Effect<AgentExit.AgentExit, E | StoreError, R>
}

/** The run as a checkpoint at record version `revision`. */
export const checkpointOf = (
  agent: Agent.Any,
  run: RunState,
  kind: Checkpoint.Kind,
  batch: ReadonlyArray<BatchItem.BatchItem>,
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
    kind,
    iteration: run.iteration,
    modelCalls: run.modelCalls,
    ...(run.outputRetries === 0 ? {} : { outputRetries: run.outputRetries }),
    ...(run.budget === undefined ? {} : { budget: run.budget }),
    ...(run.runSettings === undefined ? {} : { settings: run.runSettings }),
    ...(run.toolChoice === "auto" ? {} : { toolChoice: run.toolChoice }),
    ...(run.runContext === undefined ? {} : { context: run.runContext }),
    messages: run.history,
    batch: batch.map(BatchItem.toCheckpoint),
    pending,
    usage: run.usage,
    outcomes: run.outcomes
  }, run.state)

/** A record as a run (or a copy of its checkpoint) first writes it. */
const newRecord = (
  agent: Agent.Any,
  run: { readonly runId: string; readonly conversationId: string; readonly ephemeral: boolean },
  status: Status,
  version: number,
  now: number,
  checkpoint: unknown
): RunRecord => ({
  runId: run.runId,
  agent: agent.name,
  conversationId: run.conversationId,
  ephemeral: run.ephemeral,
  status,
  version,
  createdAt: now,
  updatedAt: now,
  checkpoint
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

/** The refusal of a run id the store has, or had: a start delivered twice runs once. */
export const runIdTaken = (store: RunStore.Service, runId: string): Effect.Effect<never, InvalidRunInput | StoreError> =>
  Effect.flatMap(store.get(runId), (record) =>
    Effect.flatMap(
      Option.isSome(record) ? Effect.succeed(Option.some(record.value.status)) : Effect.map(store.finished(runId), Option.map((f) => f.status)),
      (status) =>
        Effect.fail(new InvalidRunInput({
          problems: [`run id ${JSON.stringify(runId)} is taken: the run store has a run with this id${Option.match(status, { onNone: () => "", onSome: (s) => ` (${s})` })}`]
        }))
    ))

/** Fails with {@link runIdTaken} when the store has, or had, a run with this id. */
export const freshRunId = (store: RunStore.Service, runId: string): Effect.Effect<void, InvalidRunInput | StoreError> =>
  Effect.flatMap(store.get(runId), (record) =>
    Option.isSome(record)
      ? runIdTaken(store, runId)
      : Effect.flatMap(store.finished(runId), (finished) => Option.isSome(finished) ? runIdTaken(store, runId) : Effect.void))

/** The refusal for a run whose record moved on without it (claimed, or taken over by another process). */
const lost = (run: RunState): Effect.Effect<never, RunAlreadyResumed | StoreError> => alreadyDecided(run.store, run.runId)

/**
 * The leases the run's turn holds (its run alive; its conversation, unless ephemeral): let go of
 * by the write that ends the turn, in one step with it (`Transition.letGo`), else when its scope closes.
 */
const heldBy = (run: RunState): ReadonlyArray<string> =>
  run.ephemeral ? [`run:${run.runId}`] : [`run:${run.runId}`, `conversation:${run.conversationId}`]

/**
 * A transition of the run's own record from `running` at the version it holds, with the
 * messages it has not written to memory yet (`RunState.unwritten`: both are written, or
 * neither) and, when it ends the turn, its leases let go of. The record afterwards, or
 * `undefined` (refused: it moved on); the messages are the run's again unless written.
 */
const fromRunning = (run: RunState, to: Status, checkpoint: Checkpoint.Encoded | undefined, endsTurn: boolean, started?: ReadonlyArray<string>) => {
  const messages = run.unwritten
  run.unwritten = undefined
  const unwritten = () => void (messages !== undefined && (run.unwritten = run.unwritten === undefined ? messages : messages.concat(run.unwritten)))
  return run.store.transition(run.runId, {
    from: { status: "running", version: run.version! },
    to,
    ...(checkpoint === undefined ? {} : { checkpoint }),
    ...(messages === undefined ? {} : { messages }),
    ...(started === undefined ? {} : { started }),
    ...(endsTurn ? { letGo: heldBy(run) } : {})
  }).pipe(
    Effect.tap((next) => next === undefined ? Effect.sync(unwritten) : Effect.void),
    Effect.tapError(() => Effect.sync(unwritten))
  )
}

/** Moves the run's record from `running` at its version to `to` (with the starts of `started`); refused when it moved on. */
const moveRunning = (run: RunState, to: "running" | "paused", checkpoint: Checkpoint.Encoded, started?: ReadonlyArray<string>) =>
  Effect.flatMap(
    fromRunning(run, to, checkpoint, to === "paused", started),
    (next) => next === undefined ? lost(run) : Effect.sync(() => void (run.version = next.version))
  )

/** Whether a write of a batch's progress was made; when not, why is kept in `recording.unrecorded`. */
const written = (store: RunStore.Service, recording: Recording, write: Effect.Effect<boolean, StoreError | RunAlreadyResumed>): Effect.Effect<boolean> =>
  write.pipe(
    // refused: the record is no longer running at this version — another process took the run over
    Effect.flatMap((made) => made ? Effect.succeed(true) : alreadyDecided(store, recording.runId)),
    Effect.catch((error) => Effect.sync(() => (recording.unrecorded ??= error, false)))
  )

/**
 * The batch's held-back write (`Recording.pendingBatch`), made once: by the first of its calls to
 * start (carrying that start: `true`) or to end; the others wait for it. Nothing held back: `false`.
 */
export const batchWritten = (recording: Recording, started: string | undefined): Effect.Effect<boolean, StoreError | RunAlreadyResumed> => {
  const pending = recording.pendingBatch
  if (pending === undefined) return Effect.succeed(false)
  if (pending.taken) return Effect.as(Deferred.await(pending.done), false)
  pending.taken = true
  return Effect.onExit(pending.write(started), (exit) =>
    Effect.andThen(Effect.sync(() => void (recording.pendingBatch = undefined)), Deferred.done(pending.done, exit))).pipe(
      Effect.as(started !== undefined)
    )
}

const callsOf = (store: RunStore.Service): CallRecorder => ({
  started: (recording, call) =>
    Effect.flatMap(
      written(store, recording, Effect.flatMap(batchWritten(recording, call.id), (carried) =>
        carried ? Effect.succeed(true) : store.recordStarted(recording.runId, recording.version!, call.id))),
      (made) => made ? Effect.void : Effect.fail(semantic(`Tool "${call.name}" was not run: the run store did not record its start`))
    ),
  result: (recording, outcome) =>
    written(store, recording, Effect.andThen(batchWritten(recording, undefined), Effect.suspend(() => store.recordOutcome(recording.runId, recording.version!, outcome))))
})

/** What both recorders write alike: stops, imports, claims, ends, takeovers. */
const common = (store: RunStore.Service, durable: boolean): Omit<Recorder, "begin" | "batch" | "calls" | "crashed"> => {
  const hold = (runId: string, owner: string) => store.lease(`run:${runId}`, { owner, wait: false })
  const end = (runId: string, version: number, to: "completed" | "failed") =>
    Effect.asVoid(store.transition(runId, { from: { status: "running", version }, to }))
  const takeOverLatest = (record: RunRecord): Effect.Effect<RunRecord | undefined, StoreError> =>
    Effect.flatMap(store.takeOver(record.runId, record.version), (taken) =>
      taken !== undefined
        ? Effect.succeed(taken)
        : Effect.flatMap(store.get(record.runId), (now) =>
          Option.isSome(now) && now.value.status === "running" ? takeOverLatest(now.value) : Effect.succeed(undefined)))
  /**
   * Ends the run's record, if it is still the running record this run holds (not paused, not
   * taken over), with the messages it has not written yet; the turn's leases are let go of with it.
   */
  const finish = (run: RunState, to: "completed" | "failed") => run.version === undefined ? Effect.void : Effect.asVoid(fromRunning(run, to, undefined, true))
  return {
    durable,
    hold,
    end,
    takeOver: store.takeOver,
    takeOverLatest,
    stop: Effect.fnUntraced(function*(agent, run, kind, batch, pending) {
      const now = yield* store.now
      const revision = (run.version ?? 0) + 1
      const checkpoint = yield* checkpointOf(agent, run, kind, batch, pending, revision, now)
      if (run.version === undefined) {
        if (!(yield* store.insert(newRecord(agent, run, "paused", revision, now, checkpoint)))) {
          return yield* new RunAlreadyResumed({ runId: run.runId, status: "finished" })
        }
        run.version = revision
      } else {
        yield* moveRunning(run, "paused", checkpoint)
      }
      return checkpoint
    }),
    importCopy: (agent, checkpoint, copy) =>
      Effect.flatMap(store.now, (now) =>
        Effect.flatMap(
          store.insert(newRecord(agent, checkpoint, "paused", checkpoint.revision, now, copy)),
          (inserted) => inserted ? Effect.void : alreadyDecided(store, checkpoint.runId)
        )),
    claim: Effect.fnUntraced(function*(agent, run, batch, { decidedBy, decisionId }) {
      const checkpoint = durable
        ? yield* checkpointOf(agent, run, "running", batch, [], run.version! + 1, yield* store.now)
        : undefined
      const transition: Transition = {
        from: { status: "paused", version: run.version! },
        to: "running",
        ...(checkpoint === undefined ? {} : { checkpoint }),
        ...(decidedBy === undefined ? {} : { decidedBy }),
        ...(decisionId === undefined ? {} : { decisionId })
      }
      // held while the run is alive: `Agent.recover` takes over only a run whose holder is gone —
      // in the claim's own step where the store can (`transitionHolding`)
      const next = !durable
        ? yield* store.transition(run.runId, transition)
        : store.transitionHolding !== undefined
        ? (yield* store.transitionHolding(run.runId, transition, { key: `run:${run.runId}`, owner: run.runId })).record
        : yield* Effect.tap(store.transition(run.runId, transition), (next) => next === undefined ? Effect.void : hold(run.runId, run.runId))
      if (next === undefined) return yield* lost(run)
      run.version = next.version
    }),
    pauseAgain: (agent, run, paused, state) =>
      Effect.flatMap(
        CheckpointCodec.encode(agent, { ...withoutSignature(paused), revision: run.version! + 1 }, state),
        (checkpoint) => store.transition(run.runId, { from: { status: "running", version: run.version! }, to: "paused", checkpoint })
      ).pipe(Effect.asVoid),
    supersede: (record) => Effect.asVoid(store.transition(record.runId, { from: { status: "paused", version: record.version }, to: "failed" })),
    cancel: (record, cancelledBy) => {
      const by = cancelledBy === undefined ? {} : { decidedBy: cancelledBy }
      const cancelled = record.status === "paused"
        ? store.transition(record.runId, { from: { status: "paused", version: record.version }, to: "failed", ...by })
        : Effect.flatMap(takeOverLatest(record), (taken) =>
          taken === undefined
            ? Effect.succeed(undefined)
            : store.transition(taken.runId, { from: { status: "running", version: taken.version }, to: "failed", ...by }))
      return Effect.flatMap(cancelled, (next) => next === undefined ? alreadyDecided(store, record.runId) : Effect.void)
    },
    recorded: (run, body) =>
      Effect.onExit(
        Effect.flatMap(body, (exit): Effect.Effect<AgentExit.AgentExit, StoreError> =>
          exit._tag === "Completed" ? Effect.as(finish(run, "completed"), exit) : Effect.succeed(exit)),
        (exit) =>
          Exit.isSuccess(exit) || (durable && Cause.hasInterruptsOnly(exit.cause))
            ? Effect.void
            : Effect.catch(finish(run, "failed"), (error) => Effect.logError(`Run ${run.runId}: its record could not be marked failed`, error))
      )
  }
}

const withoutSignature = ({ signature: _, ...fields }: Checkpoint.Checkpoint) => fields

/** A durable store's recorder: every step of a run, as it happens. */
const durable = (store: RunStore.Service): Recorder => {
  const shared = common(store, true)
  return {
    ...shared,
    begin: Effect.fnUntraced(function*(agent, run) {
      yield* shared.hold(run.runId, run.runId)
      const now = yield* store.now
      const checkpoint = yield* checkpointOf(agent, run, "running", [], [], 1, now)
      if (!(yield* store.insert(newRecord(agent, run, "running", 1, now, checkpoint)))) return yield* runIdTaken(store, run.runId)
      run.version = 1
    }),
    // a batch with calls to run, on a store that records starts in a transition: written with its first call's start
    batch: (agent, run, batch) =>
      run.version === undefined
        ? Effect.void
        : Effect.flatMap(store.now, (now) =>
          Effect.flatMap(checkpointOf(agent, run, "running", batch, [], run.version! + 1, now), (checkpoint) =>
            store.transitionStarts === true && batch.some(BatchItem.runs)
              ? Effect.sync(() => {
                run.pendingBatch = {
                  write: (started) => moveRunning(run, "running", checkpoint, started === undefined ? undefined : [started]),
                  done: Deferred.makeUnsafe(),
                  taken: false
                }
              })
              : moveRunning(run, "running", checkpoint))),
    calls: callsOf(store),
    crashed: (conversationId) => store.list({ conversationId, status: "running" })
  }
}

/** An in-memory store's recorder: a run has a record once it pauses. */
const pausesOnly = (store: RunStore.Service): Recorder => ({
  ...common(store, false),
  begin: () => Effect.void,
  batch: () => Effect.void,
  calls: undefined,
  crashed: () => Effect.succeed([])
})

const recorders = new WeakMap<RunStore.Service, Recorder>()

/** The recorder of the runs of `store`: built once per store. */
export const recorderOf = (store: RunStore.Service): Recorder => {
  let recorder = recorders.get(store)
  if (recorder === undefined) {
    recorder = store.durable ? durable(store) : pausesOnly(store)
    recorders.set(store, recorder)
  }
  return recorder
}
