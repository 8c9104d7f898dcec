/**
 * A person's answers to a pause, as the resume they ask for: the run's record read (the
 * authority: it must be paused, at the revision the answers name, in this chat), the decision
 * built, and what the resumed segment says first: the calls it denies, each with its end (an
 * approved call is announced as it starts) — so that the segment stands on its own where the
 * pause's segment is not in the replay buffer (another process ran it).
 */
import type { Agent, ToolCall, ToolError } from "@agentfx/core"
import { AgentError, Checkpoint, Decision, RunStore } from "@agentfx/core"
import { Effect, Option, Schedule, Schema } from "effect"
import { AlreadyDecided, ConversationBusy, DecisionRefused, RunNotFound, Unavailable } from "../ChatApi.js"
import type { UiChunk } from "../UiChunk.js"
import type { Answer } from "./request.js"

export interface Resume {
  readonly runId: string
  readonly revision: number
  readonly checkpoint: unknown
  readonly decision: Decision.Decision
  readonly prelude: ReadonlyArray<UiChunk>
}

interface Pending {
  readonly call: ToolCall.ToolCall
  readonly error: ToolError.ToolFailure | undefined
}

const unavailable = (error: { readonly message: string }) => new Unavailable({ message: error.message })

const decodeCheckpoint = Schema.decodeUnknownEffect(Checkpoint.AnyVersion)

/** The pending calls of a pause, in order: calls of its batch, or of a paused sub-agent's (`<call id>/<child call id>`). */
const pendingOf = (cp: Checkpoint.Checkpoint): Array<Pending> => {
  const calls = new Map<string, Pending>()
  for (const { call, outcome } of cp.batch) {
    calls.set(call.id, { call, error: outcome?._tag === "Failed" ? outcome.error : undefined })
    if (outcome?._tag !== "Suspended") continue
    for (const child of outcome.pending) {
      const id = `${call.id}/${child.call.id}`
      calls.set(id, { call: { ...child.call, id }, error: child.error })
    }
  }
  return cp.pending.flatMap((id) => calls.get(id) ?? [])
}

/**
 * `RunAlreadyResumed`'s refusal on the wire, said to the person who answered: core's sentence,
 * but for a run paused again, which asks for the answers to its current pause (core's tells a
 * developer to resume it by run id).
 */
export const alreadyDecided = (error: AgentError.RunAlreadyResumed) =>
  new AlreadyDecided({
    runId: error.runId,
    status: error.status,
    ...(error.decidedBy === undefined ? {} : { decidedBy: error.decidedBy }),
    message: error.status === "paused"
      ? `Run ${error.runId} was already decided${error.decidedBy === undefined ? "" : ` by ${error.decidedBy}`}, and paused again since: answer its current approval requests`
      : error.message
  })

/** A conversation held by another run, said to the person who sent the message. */
export const conversationBusy = (chatId: string) =>
  new ConversationBusy({ chatId, message: `Chat ${JSON.stringify(chatId)} is busy: its last message is still running; send again once it has ended` })

/** The paused record of the run the answers name, or the refusal an answer to it gets. */
const pausedRecord = (chatId: string, runId: string, answers: ReadonlyArray<Answer>) =>
  Effect.gen(function*() {
    const store = yield* RunStore.RunStore
    const record = yield* store.get(runId).pipe(Effect.mapError(unavailable))
    if (Option.isNone(record)) {
      const finished = yield* store.finished(runId).pipe(Effect.mapError(unavailable))
      if (Option.isNone(finished)) return yield* new RunNotFound({ runId, message: `No record of run ${runId} in the run store` })
      return yield* alreadyDecided(new AgentError.RunAlreadyResumed({ runId, status: finished.value.status, decidedBy: finished.value.decidedBy }))
    }
    if (record.value.conversationId !== chatId) return yield* new RunNotFound({ runId, message: `Run ${runId} is not a run of chat ${chatId}` })
    const { decidedBy, status, version } = record.value
    // decided since: by someone else, or decided and paused again (what these answers saw is no longer what is pending)
    if (status !== "paused" || answers.every((answer) => answer.approval.revision !== version)) {
      return yield* alreadyDecided(new AgentError.RunAlreadyResumed({ runId, status, decidedBy }))
    }
    return record.value
  })

const mismatch = (message: string) => new DecisionRefused({ error: "DecisionMismatch", message })

/**
 * The decision the answers make: about each pending call of an approval pause (an answer a
 * call lacks is the resume's `IncompleteDecisions`); for an environment pause, all its failed
 * calls retried (all approved) or their errors given to the model (all denied).
 */
const decide = (cp: Checkpoint.Checkpoint, answers: ReadonlyArray<Answer>): Effect.Effect<Decision.Decision, DecisionRefused> => {
  switch (cp.reason) {
    case "approval":
      return Effect.succeed(Decision.byCall(new Map(answers.map((answer) => [
        answer.approval.callId,
        answer.approved ? Decision.approve() : Decision.reject({ message: answer.reason })
      ]))))
    case "environment":
      if (answers.every((answer) => answer.approved)) return Effect.succeed(Decision.retry())
      if (answers.every((answer) => !answer.approved)) return Effect.succeed(Decision.report())
      return Effect.fail(mismatch(`Run ${cp.runId} paused for its environment: approve every failed call (they run again) or deny every one (the model is told they failed)`))
    default:
      return Effect.fail(mismatch(`Run ${cp.runId} stopped for ${cp.reason}, which approvals do not decide`))
  }
}

/** The resume that the answers ask for, or their refusal; nothing is consumed here. */
export const prepare = (
  agent: Agent.Any,
  chatId: string,
  runId: string,
  answers: ReadonlyArray<Answer>
): Effect.Effect<Resume, RunNotFound | AlreadyDecided | DecisionRefused | Unavailable> =>
  Effect.gen(function*() {
    const record = yield* pausedRecord(chatId, runId, answers)
    const current = answers.filter((answer) => answer.approval.revision === record.version)
    const cp = yield* decodeCheckpoint(record.checkpoint).pipe(
      Effect.mapError((error) => new Unavailable({ message: `The record of run ${record.runId} cannot be read: ${error.message}` }))
    )
    if (cp.agent !== agent.name) return yield* mismatch(`Run ${record.runId} is a run of agent "${cp.agent}", not of this chat's agent "${agent.name}"`)
    const decision = yield* decide(cp, current)
    const denied = new Set(current.filter((answer) => !answer.approved).map((answer) => answer.approval.callId))
    const prelude: Array<UiChunk> = []
    // an approved call is announced by its start, as it runs again; a denied one here, with its end
    for (const { call, error } of pendingOf(cp)) {
      if (!denied.has(call.id)) continue
      prelude.push(
        { type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.args },
        cp.reason === "approval" || error === undefined
          ? { type: "tool-output-denied", toolCallId: call.id }
          : { type: "tool-output-error", toolCallId: call.id, errorText: error.message }
      )
    }
    return { runId: record.runId, revision: record.version, checkpoint: record.checkpoint, decision, prelude }
  })

/**
 * A resume refused because the conversation is held: most often by the resume of another
 * answer to the same pause, which holds the conversation before it claims the run. The record
 * is read again, for up to half a second, until it moved on (`AlreadyDecided`, as for any
 * answer that came second); a conversation held by something else is `ConversationBusy`.
 */
export const busy = (resume: Resume, chatId: string): Effect.Effect<AlreadyDecided | ConversationBusy> =>
  RunStore.RunStore.use((store) =>
    Effect.flatMap(store.get(resume.runId), (record) =>
      Option.isSome(record) && record.value.status === "paused" && record.value.version === resume.revision
        ? Effect.fail("still paused" as const)
        : Effect.succeed(alreadyDecided(new AgentError.RunAlreadyResumed({
          runId: resume.runId,
          status: Option.isSome(record) ? record.value.status : "finished",
          decidedBy: Option.isSome(record) ? record.value.decidedBy : undefined
        }))))).pipe(
      Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "500 millis" }))),
      Effect.orElseSucceed(() => conversationBusy(chatId))
    )
