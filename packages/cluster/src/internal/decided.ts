/**
 * A decision sent to a run's entity and followed, for the drivers that stream a decided run
 * (`ClusterInbox`, `ClusterChat`; decisions 171, 172): nothing is given until the store's record
 * shows that this decision claimed the run — a refusal before that fails, nothing consumed — then
 * the segment the decision drives, as the runner that drives it emits it, to its stop. A watch
 * that ends before the stop is told as a gap, then the runner's reply is the segment's outcome.
 */
import type { Agent, Decision } from "@agentfx/core"
import { AgentError, RunStore } from "@agentfx/core"
import type { Sharding } from "effect/cluster/Sharding"
import type { Duration, Scope } from "effect"
import { Effect, Fiber, Option, Schedule, Stream } from "effect"
import * as AgentCluster from "../AgentCluster.js"
import type * as RunOutcome from "../RunOutcome.js"
import * as Follow from "./follow.js"

/** The cluster entities of the agents a driver is given, made once per agent name. */
export const entities = () => {
  const made = new Map<string, AgentCluster.AgentEntity<any, any, any>>()
  return (agent: Agent.Any): AgentCluster.AgentEntity<any, any, any> => {
    let entity = made.get(agent.name)
    if (entity === undefined) made.set(agent.name, entity = AgentCluster.make(agent))
    return entity
  }
}

/** A decided run, once its decision claimed it. */
export interface Claimed {
  /** The record as the claim left it (who decided, when); `undefined` if it could not be read. */
  readonly claim: RunStore.RunRecord | undefined
  /** The segment the decision drives, to its stop; fails with the reply's failure when the watch did not reach the stop. */
  readonly watched: Stream.Stream<Follow.Watched, AgentError.ResumeError, Sharding>
}

/**
 * Decides the run of `paused` (at its `version`) as `decidedBy`, and follows what the decision
 * drives, once it claimed the run: the store's record names the decision's own id (polled every
 * `poll`), or its reply came first.
 */
export const follow = (
  entity: AgentCluster.AgentEntity<any, any, any>,
  paused: { readonly runId: string; readonly version: number },
  decision: Decision.Decision,
  decidedBy: string,
  poll: Duration.Duration
): Effect.Effect<Claimed, AgentError.ResumeError, Scope.Scope | Sharding> =>
  Effect.gen(function*() {
    const { runId } = paused
    // its own id: its claim is told apart from another decision's, the same person's included
    const decisionId = crypto.randomUUID()
    const reply = yield* Effect.forkScoped(
      AgentCluster.decide(entity, runId, decision, { revision: paused.version, decidedBy, decisionId }).pipe(Effect.mapError(asResumeError))
    )
    const first = yield* Effect.raceFirst(
      Effect.map(Fiber.join(reply), (outcome) => ({ claim: Option.none<RunStore.RunRecord>(), outcome: Option.some(outcome) })),
      Effect.map(claimOf(runId, decisionId, poll), (claim) => ({ claim: Option.some(claim), outcome: Option.none<RunOutcome.RunOutcome>() }))
    )
    // answered before the store was read: the run was claimed (its reply says how it went on); the claim from the record
    const claim = Option.isSome(first.claim) ? first.claim.value : yield* readClaim(runId)
    const ending = Option.isSome(first.outcome) ? Effect.succeed(first.outcome.value) : Fiber.join(reply)
    let stopped = false
    const steps = AgentCluster.watch(entity, runId, { from: paused.version }).pipe(
      Stream.tap((watched) => Effect.sync(() => void (stopped ||= Follow.isStop(runId, watched)))),
      Stream.catch(() => Stream.empty)
    )
    // the watch failed before the stop: what it missed is told, and the reply says how the segment stopped
    const fromReply = Stream.concat(
      Stream.make<[Follow.Watched]>({
        _tag: "Gap",
        cursor: "reply:-1",
        message: `The events of run ${runId} could not be followed to its stop; its stop is the runner's reply`
      }),
      Stream.fromEffect(Effect.map(ending, (outcome): Follow.Watched => ({ _tag: "Outcome", cursor: "reply:0", outcome })))
    )
    return { claim, watched: Stream.concat(steps, Stream.suspend(() => stopped ? Stream.empty : fromReply)) }
  })

/**
 * The record once decision `decisionId` claimed it; polled until then, or until the reply wins
 * the race (the record keeps the id only until the run stops: a run that stopped first is told
 * by its reply).
 */
const claimOf = (runId: string, decisionId: string, poll: Duration.Duration) =>
  Effect.flatMap(RunStore.RunStore, (store) =>
    store.get(runId).pipe(
      // a failed read is read again: the runner's reply ends the wait whatever the store says
      Effect.catch(() => Effect.succeed(Option.none<RunStore.RunRecord>())),
      Effect.flatMap((record) =>
        Option.isSome(record) && record.value.decisionId === decisionId
          ? Effect.succeed(record.value)
          : Effect.fail("unclaimed" as const)
      ),
      Effect.retry(Schedule.spaced(poll)),
      Effect.orDie
    ))

/** The run's record, or `undefined` when it cannot be read. */
export const readClaim = (runId: string) =>
  Effect.flatMap(RunStore.RunStore, (store) => store.get(runId)).pipe(
    Effect.map(Option.getOrUndefined),
    Effect.catch(() => Effect.succeed(undefined))
  )

/**
 * A failure to send a turn or a decision, or a refusal, as `Agent.run`'s and `Agent.resume`'s
 * errors: `RunAlreadyResumed` and `RunNotFound` as they are; a refusal the core's errors cannot
 * carry from another process (e.g. `UnknownDecision`), or a failure of the cluster's client, as a
 * `StoreError` that quotes it.
 */
export const asResumeError = (
  error: AgentCluster.ClientError | RunOutcome.Refused | AgentError.RunAlreadyResumed | AgentError.RunNotFound | RunStore.StoreError | RunStore.SteerRefused
): AgentError.RunAlreadyResumed | AgentError.RunNotFound | RunStore.StoreError | RunStore.SteerRefused => {
  switch (error._tag) {
    case "RunAlreadyResumed":
    case "RunNotFound":
    case "StoreError":
    case "SteerRefused":
      return error
    case "Refused":
      return error.reason === "RunNotFound"
        ? new AgentError.RunNotFound({ runId: error.runId })
        : new RunStore.StoreError({ message: `The runner refused (${error.reason}): ${error.message}` })
    default:
      return new RunStore.StoreError({ message: `The message could not be delivered to the cluster (${error._tag}): ${describe(error)}` })
  }
}

const describe = (error: unknown) =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" && error.message !== ""
    ? error.message
    : String(error)
