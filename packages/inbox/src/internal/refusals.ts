/**
 * A resume's refusal as the inbox answers it: each core error of `Agent.resume` that can come
 * before the run's claim, as a wire error with its status. "Already decided" names who
 * decided and when, from the run store.
 */
import type { AgentError } from "@agentfx/core"
import { AgentError as Errors, RunStore } from "@agentfx/core"
import { Effect, Option, Schedule } from "effect"
import { DecisionLog } from "../DecisionLog.js"
import { AlreadyDecided, ConversationBusy, DecisionRefused, RunNotFound, Unavailable } from "../InboxApi.js"

/** The wire errors of a decision. */
export type Refusal = AlreadyDecided | ConversationBusy | DecisionRefused | RunNotFound | Unavailable

interface Winner {
  readonly decidedBy?: string | undefined
  readonly decidedAt?: number | undefined
}

/** Who decided the run and when, by its record or the store's memory of its end. */
const decidedOf = (runId: string): Effect.Effect<Winner, RunStore.StoreError> =>
  RunStore.RunStore.use((store) =>
    Effect.flatMap(store.get(runId), (record) =>
      Option.isSome(record) ? Effect.succeed(record.value) : Effect.map(store.finished(runId), Option.getOrElse((): Winner => ({})))))

/**
 * Who decided the run and when. A concurrent resume can be refused while the winner holds the
 * run's conversation but has not written its claim yet (`named` is false): then the record is
 * read again, for up to half a second, until it names the winner.
 */
const winnerOf = (runId: string, named: boolean): Effect.Effect<Winner> =>
  (named ? decidedOf(runId) : decidedOf(runId).pipe(
    Effect.filterOrFail((winner) => winner.decidedBy !== undefined),
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "500 millis" })))
  )).pipe(Effect.orElseSucceed((): Winner => ({})))

/**
 * Who decided the run before it paused again, and when: the record forgets them at the new
 * pause; the decision log of this process remembers them, if it resumed the run.
 */
const lastDecided = (runId: string): Effect.Effect<Winner> =>
  Effect.map(DecisionLog.use((log) => log.latest(runId)), Option.match({
    onNone: (): Winner => ({}),
    onSome: ({ decidedAt, decidedBy }): Winner => ({ decidedBy, decidedAt })
  }))

/**
 * `RunAlreadyResumed` with who decided and when: from the store's record of the claim (read
 * again when the refusal came before the winner's claim), or, for a run paused again since,
 * from the decision log.
 */
export const alreadyDecided = (error: AgentError.RunAlreadyResumed): Effect.Effect<AlreadyDecided> =>
  Effect.gen(function*() {
    const winner = yield* (error.status === "paused" ? lastDecided(error.runId) : winnerOf(error.runId, error.decidedBy !== undefined))
    const decidedBy = error.decidedBy ?? winner.decidedBy
    // the record's time is the winner's only when it names the same person (it may have paused again, or been decided since)
    const decidedAt = winner.decidedBy === decidedBy ? winner.decidedAt : undefined
    const named = new Errors.RunAlreadyResumed({ runId: error.runId, status: error.status, decidedBy })
    return new AlreadyDecided({
      runId: error.runId,
      status: error.status,
      ...(decidedBy === undefined ? {} : { decidedBy }),
      ...(decidedAt === undefined ? {} : { decidedAt }),
      message: named.message
    })
  })

/** A resume's refusal before its claim, as the inbox answers it. */
export const refusal = (error: AgentError.ResumeError): Effect.Effect<Refusal> => {
  switch (error._tag) {
    case "RunAlreadyResumed":
      return alreadyDecided(error)
    case "RunNotFound":
      return Effect.succeed(new RunNotFound({ runId: error.runId, message: error.message }))
    case "ConversationBusy":
      return Effect.succeed(new ConversationBusy({ conversationId: error.conversationId, message: error.message }))
    case "UnknownDecision":
    case "IncompleteDecisions":
      return Effect.succeed(new DecisionRefused({ error: error._tag, message: error.message, callIds: error.callIds }))
    case "InvalidEditedArguments":
      return Effect.succeed(new DecisionRefused({ error: error._tag, message: error.message, problems: error.problems }))
    case "DecisionMismatch":
    case "InvalidCheckpoint":
    case "ConversationDiverged":
    case "InvalidRunInput":
      return Effect.succeed(new DecisionRefused({ error: error._tag, message: error.message }))
    default:
      // the store or the memory failed; a run's own failures (model, budget, output) come after its claim, as events
      return Effect.succeed(new Unavailable({ message: error.message }))
  }
}
