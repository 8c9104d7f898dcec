/**
 * A resume's refusal as the inbox answers it: each core error of `Agent.resume` that can come
 * before the run's claim, as a wire error with its status. "Already decided" names who
 * decided and when.
 */
import type { AgentError } from "@agentfx/core"
import { AgentError as Errors, RunStore } from "@agentfx/core"
import { Effect, Option, Schedule } from "effect"
import { DecisionLog } from "../DecisionLog.js"
import { AlreadyDecided, ConversationBusy, DecisionRefused, RunNotFound, Unavailable } from "../InboxApi.js"

/** The wire errors of a decision. */
export type Refusal = AlreadyDecided | ConversationBusy | DecisionRefused | RunNotFound | Unavailable

/**
 * Who decided the run, by its record (or the store's memory of its end). A concurrent resume
 * can be refused while the winner holds the run's conversation but has not written its claim
 * yet: then the record is read again, for up to half a second, until it names the winner.
 */
const winnerOf = (runId: string) =>
  Effect.flatMap(RunStore.RunStore, (store) =>
    Effect.gen(function*() {
      const record = yield* store.get(runId)
      if (Option.isSome(record)) return Option.fromNullable(record.value.decidedBy)
      return Option.flatMap(yield* store.finished(runId), (finished) => Option.fromNullable(finished.decidedBy))
    }).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail("unknown" as const), onSome: Effect.succeed })),
      Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("500 millis"))),
      Effect.option,
      Effect.map(Option.getOrUndefined),
      Effect.catchAll(() => Effect.succeed(undefined))
    ))

/** `RunAlreadyResumed` with who decided (read again when the refusal came before the winner's claim) and when (the decision log). */
export const alreadyDecided = (error: AgentError.RunAlreadyResumed): Effect.Effect<AlreadyDecided> =>
  Effect.gen(function*() {
    const decidedBy = error.decidedBy ?? (yield* winnerOf(error.runId))
    const latest = yield* Effect.flatMap(DecisionLog, (log) => log.latest(error.runId))
    const decidedAt = Option.getOrUndefined(Option.filter(latest, (entry) => entry.decidedBy === decidedBy))?.decidedAt
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
      return Effect.succeed(new DecisionRefused({ error: error._tag, message: error.message }))
    default:
      // the store or the memory failed; a run's own failures (model, budget, output) come after its claim, as events
      return Effect.succeed(new Unavailable({ message: error.message }))
  }
}
