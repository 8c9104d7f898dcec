/**
 * A resume's answers to a paused run's interrupts, as the resume they ask for: the pause read
 * (`pause.ts`), each of its interrupts answered once — an answer to no interrupt of the pause,
 * or an interrupt left unanswered, is the request's refusal (400) and the pause stays as it was —
 * the decision built, and the calls it decides without running them (rejected, replied to,
 * reported), which the resumed AG-UI run shows first with their results.
 */
import type { Agent, AgentError, Checkpoint } from "@agentfx/core"
import { Decision } from "@agentfx/core"
import { Effect } from "effect"
import type { AlreadyDecided, DecisionRefused, RunNotFound, Unavailable } from "../../ChatApi.js"
import { ConversationBusy, InvalidRequest } from "../../ChatApi.js"
import * as Approval from "../approval.js"
import * as Pause from "../pause.js"
import type { Entry } from "./request.js"
import type { Decided } from "./wire.js"

export interface Resume {
  readonly pause: Pause.Pause
  readonly decision: Decision.Decision
  readonly decided: ReadonlyArray<Decided>
  readonly entries: ReadonlyArray<Entry>
}

/** How the AG-UI endpoint words its refusals of answers. */
export const words: Pause.Words = { conversation: (threadId) => `thread ${threadId}`, pause: "interrupts" }

/** A thread held by another run, said to the client that sent the message. */
export const conversationBusy = (threadId: string) =>
  new ConversationBusy({
    chatId: threadId,
    message: `Thread ${JSON.stringify(threadId)} is busy: its last run is still running; send again once it has ended (or reattach to it)`
  })

const invalid = (message: string) => new InvalidRequest({ message })

/** The decision of an environment pause: every failed call tried again (all approved), or its failure given to the model (all rejected). */
const environment = (cp: Checkpoint.Checkpoint, entries: ReadonlyArray<Entry>): Effect.Effect<Decision.Decision, InvalidRequest | DecisionRefused> => {
  const other = entries.find((entry) => entry.decision._tag === "Reply" || (entry.decision._tag === "Approve" && entry.decision.args !== undefined))
  if (other !== undefined) {
    return Effect.fail(invalid(
      `resume[${other.index}] (interrupt ${JSON.stringify(other.interruptId)}): a call that failed for its environment is approved (tried again) or rejected (the model is told it failed), not edited or replied to`
    ))
  }
  if (entries.every((entry) => entry.decision._tag === "Approve")) return Effect.succeed(Decision.retry())
  if (entries.every((entry) => entry.decision._tag === "Reject")) return Effect.succeed(Decision.report())
  return Effect.fail(Pause.mismatch(`Run ${cp.runId} paused for its environment: approve every failed call (they run again) or reject every one (the model is told they failed)`))
}

/** What the model is shown of a call the decision does not run. */
const decidedOf = (pause: Pause.Pause, decision: Decision.Decision, entries: ReadonlyArray<Entry>): ReadonlyArray<Decided> => {
  const byCall = new Map(entries.map((entry) => [entry.approval.callId, entry.decision]))
  return pause.pending.flatMap(({ call, error }): ReadonlyArray<Decided> => {
    const base = { callId: call.id, toolName: call.name }
    if (decision._tag === "Report" && error !== undefined) return [{ call, outcome: { _tag: "Failed", ...base, error } }]
    const made = byCall.get(call.id)
    if (decision._tag !== "ByCall" || made === undefined) return []
    switch (made._tag) {
      case "Reject":
        return [{ call, outcome: { _tag: "Rejected", ...base, ...(made.message === undefined ? {} : { message: made.message }) } }]
      case "Reply":
        return [{ call, outcome: { _tag: "Replied", ...base, value: made.value } }]
      case "Approve":
        return []
    }
  })
}

/** The resume the entries ask for, or their refusal; nothing is consumed here. */
export const prepare = (
  agent: Agent.Any,
  threadId: string,
  runId: string,
  entries: ReadonlyArray<Entry>
): Effect.Effect<Resume, InvalidRequest | RunNotFound | AlreadyDecided | DecisionRefused | Unavailable> =>
  Effect.gen(function*() {
    const pause = yield* Pause.read(agent, threadId, runId, entries.map((entry) => entry.approval.revision), words)
    const pending = new Set(pause.pending.map(({ call }) => call.id))
    const ids = pause.pending.map(({ call }) => JSON.stringify(Approval.format({ runId, revision: pause.revision, callId: call.id }))).join(", ")
    const foreign = entries.find((entry) => entry.approval.revision !== pause.revision || !pending.has(entry.approval.callId))
    if (foreign !== undefined) {
      return yield* invalid(`resume[${foreign.index}]: the interrupt ${JSON.stringify(foreign.interruptId)} is not one of run ${runId}'s pause (its interrupts: ${ids})`)
    }
    const answered = new Set(entries.map((entry) => entry.approval.callId))
    const missing = pause.pending.filter(({ call }) => !answered.has(call.id))
    if (missing.length > 0) {
      return yield* invalid(
        `The resume leaves ${missing.length} of run ${runId}'s interrupts unanswered (${
          missing.map(({ call }) => `call ${call.id}`).join(", ")
        }): answer each of its interrupts (${ids}), resolved or cancelled`
      )
    }
    const decision = pause.checkpoint.kind === "environment"
      ? yield* environment(pause.checkpoint, entries)
      : pause.checkpoint.kind === "approval"
      ? Decision.byCall(new Map(entries.map((entry) => [entry.approval.callId, entry.decision])))
      : yield* Pause.mismatch(`Run ${runId} stopped for ${pause.checkpoint.kind}, which interrupts do not decide`)
    return { pause, decision, decided: decidedOf(pause, decision, entries), entries }
  })

/**
 * Core's refusal of edited arguments (or a reply's value), said of the resume entries that sent
 * them: the request's own data is wrong, a 400 — the pause stays as it was.
 */
export const invalidEdits = (resume: Resume, error: AgentError.InvalidEditedArguments): InvalidRequest =>
  invalid(error.problems.map((problem) => {
    const entry = resume.entries.find((entry) => entry.approval.callId === problem.callId)
    const what = entry === undefined ? `call ${problem.callId}` : `resume[${entry.index}] (interrupt ${JSON.stringify(entry.interruptId)})`
    return `${what}: ${problem.toolName} refuses it: ${problem.message}`
  }).join("; "))

/** A resume refused because the thread is held: by the resume of another answer to the same pause (`AlreadyDecided`), or by something else. */
export const busy = (resume: Resume, threadId: string): Effect.Effect<AlreadyDecided | ConversationBusy> =>
  Pause.busy(resume.pause, words, conversationBusy(threadId))
