/**
 * The pause an answer names, read from the run store — the authority: the run's record must be
 * paused, in this conversation, at a revision the answer saw — with its checkpoint decoded and
 * its pending calls in order. Nothing is consumed here: the resume claims the record.
 */
import type { Agent, ToolCall, ToolError } from "@agentfx/core"
import { AgentError, Checkpoint, RunStore } from "@agentfx/core"
import { Effect, Option, Schedule, Schema } from "effect"
import type { ConversationBusy } from "../ChatApi.js"
import { AlreadyDecided, DecisionRefused, RunNotFound, Unavailable } from "../ChatApi.js"
import type * as ChatDriver from "../ChatDriver.js"

/** A call the pause waits on: its failure, for an environment pause; why the gate asked, for an approval pause. */
export interface Pending {
  readonly call: ToolCall.ToolCall
  readonly error: ToolError.ToolFailure | undefined
  readonly why: string | undefined
}

export interface Pause {
  readonly runId: string
  /** The record's version at the pause: a resume claims the record at it. */
  readonly revision: number
  /** The record's checkpoint, as stored (what the resume is given). */
  readonly encoded: unknown
  readonly checkpoint: Checkpoint.Checkpoint
  readonly pending: ReadonlyArray<Pending>
}

/** The pause as a driver is given it. */
export const pauseOf = (pause: Pause): ChatDriver.Pause => ({ runId: pause.runId, revision: pause.revision, checkpoint: pause.encoded })

/**
 * How an endpoint words its refusals of answers: a conversation (the chat endpoint's `chat c1`,
 * AG-UI's `thread t1`), and what its client shows of a pause ("approval requests", "interrupts").
 */
export interface Words {
  readonly conversation: (chatId: string) => string
  readonly pause: string
}

const unavailable = (error: { readonly message: string }) => new Unavailable({ message: error.message })

const decodeCheckpoint = Schema.decodeUnknownEffect(Checkpoint.AnyVersion)

/** The pending calls of a pause, in order: calls of its batch, or of a paused sub-agent's (`<call id>/<child call id>`). */
export const pendingOf = (cp: Checkpoint.Checkpoint): Array<Pending> => {
  const calls = new Map<string, Pending>()
  for (const { call, outcome, why } of cp.batch) {
    calls.set(call.id, { call, error: outcome?._tag === "Failed" ? outcome.error : undefined, why })
    if (outcome?._tag !== "Suspended") continue
    for (const child of outcome.pending) {
      const id = `${call.id}/${child.call.id}`
      calls.set(id, { call: { ...child.call, id }, error: child.error, why: child.why })
    }
  }
  return cp.pending.flatMap((id) => calls.get(id) ?? [])
}

/**
 * `RunAlreadyResumed`'s refusal on the wire, said to the person who answered: core's sentence,
 * but for a run paused again, which asks for the answers to its current pause (core's tells a
 * developer to resume it by run id).
 */
export const alreadyDecided = (error: AgentError.RunAlreadyResumed, words: Words) =>
  new AlreadyDecided({
    runId: error.runId,
    status: error.status,
    ...(error.decidedBy === undefined ? {} : { decidedBy: error.decidedBy }),
    message: error.status === "paused"
      ? `Run ${error.runId} was already decided${error.decidedBy === undefined ? "" : ` by ${error.decidedBy}`}, and paused again since: answer its current ${words.pause}`
      : error.message
  })

/** A refusal of answers to a pause that does not fit it. */
export const mismatch = (message: string) => new DecisionRefused({ error: "DecisionMismatch", message })

/**
 * The pause of run `runId` that answers made at `revisions` answer, or their refusal: not in
 * the store, or not this conversation's (404); decided since, by someone else, or decided and
 * paused again — none of the answers saw the current pause (409); of another agent (422).
 */
export const read = (
  agent: Agent.Any,
  chatId: string,
  runId: string,
  revisions: ReadonlyArray<number>,
  words: Words
): Effect.Effect<Pause, RunNotFound | AlreadyDecided | DecisionRefused | Unavailable> =>
  Effect.gen(function*() {
    const store = yield* RunStore.RunStore
    const found = yield* store.get(runId).pipe(Effect.mapError(unavailable))
    if (Option.isNone(found)) {
      const finished = yield* store.finished(runId).pipe(Effect.mapError(unavailable))
      if (Option.isNone(finished)) return yield* new RunNotFound({ runId, message: `No record of run ${runId} in the run store` })
      return yield* alreadyDecided(new AgentError.RunAlreadyResumed({ runId, status: finished.value.status, decidedBy: finished.value.decidedBy }), words)
    }
    const record = found.value
    if (record.conversationId !== chatId) return yield* new RunNotFound({ runId, message: `Run ${runId} is not a run of ${words.conversation(chatId)}` })
    if (record.status !== "paused" || !revisions.includes(record.version)) {
      return yield* alreadyDecided(new AgentError.RunAlreadyResumed({ runId, status: record.status, decidedBy: record.decidedBy }), words)
    }
    const checkpoint = yield* decodeCheckpoint(record.checkpoint).pipe(
      Effect.mapError((error) => new Unavailable({ message: `The record of run ${runId} cannot be read: ${error.message}` }))
    )
    if (checkpoint.agent !== agent.name) {
      return yield* mismatch(`Run ${runId} is a run of agent "${checkpoint.agent}", not of this endpoint's agent "${agent.name}"`)
    }
    return { runId, revision: record.version, encoded: record.checkpoint, checkpoint, pending: pendingOf(checkpoint) }
  })

/**
 * The conversation's pause, if it has one: the most recently paused record of `agent` in
 * conversation `chatId`, with its checkpoint decoded — what a thread read shows as its pending
 * approvals. A record whose checkpoint cannot be read is `Unavailable`.
 */
export const current = (agent: Agent.Any, chatId: string): Effect.Effect<Pause | undefined, Unavailable> =>
  Effect.gen(function*() {
    const store = yield* RunStore.RunStore
    const records = yield* store.list({ conversationId: chatId, status: "paused", agent: agent.name }).pipe(Effect.mapError(unavailable))
    const record = records.find((candidate) => !candidate.ephemeral)
    if (record === undefined) return undefined
    const checkpoint = yield* decodeCheckpoint(record.checkpoint).pipe(
      Effect.mapError((error) => new Unavailable({ message: `The record of run ${record.runId} cannot be read: ${error.message}` }))
    )
    return { runId: record.runId, revision: record.version, encoded: record.checkpoint, checkpoint, pending: pendingOf(checkpoint) }
  })

/**
 * A resume refused because the conversation is held: most often by the resume of another
 * answer to the same pause, which holds the conversation before it claims the run. The record
 * is read again, for up to half a second, until it moved on (`AlreadyDecided`, as for any
 * answer that came second); a conversation held by something else is `busy`.
 */
export const busy = (pause: Pause, words: Words, refused: ConversationBusy): Effect.Effect<AlreadyDecided | ConversationBusy> =>
  RunStore.RunStore.use((store) =>
    Effect.flatMap(store.get(pause.runId), (record) =>
      Option.isSome(record) && record.value.status === "paused" && record.value.version === pause.revision
        ? Effect.fail("still paused" as const)
        : Effect.succeed(alreadyDecided(
          new AgentError.RunAlreadyResumed({
            runId: pause.runId,
            status: Option.isSome(record) ? record.value.status : "finished",
            decidedBy: Option.isSome(record) ? record.value.decidedBy : undefined
          }),
          words
        )))).pipe(
      Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "500 millis" }))),
      Effect.orElseSucceed(() => refused)
    )
