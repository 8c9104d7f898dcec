/**
 * A person's answers to a pause, from `useChat`'s approval responses, as the resume they ask
 * for: the pause read (`pause.ts`), the decision built, and what the resumed segment says
 * first: the calls it denies, each with its end (an approved call is announced as it starts) —
 * so that the segment stands on its own where the pause's segment is not in the replay buffer
 * (another process ran it).
 */
import type { Agent, Checkpoint } from "@agentfx/core"
import { Decision } from "@agentfx/core"
import { Effect } from "effect"
import type { AlreadyDecided, DecisionRefused, RunNotFound, Unavailable } from "../ChatApi.js"
import { ConversationBusy } from "../ChatApi.js"
import type { UiChunk } from "../UiChunk.js"
import * as Pause from "./pause.js"
import type { Answer } from "./request.js"

export interface Resume {
  readonly pause: Pause.Pause
  readonly decision: Decision.Decision
  readonly prelude: ReadonlyArray<UiChunk>
}

/** How the chat endpoint words its refusals of answers. */
export const words: Pause.Words = { conversation: (chatId) => `chat ${chatId}`, pause: "approval requests" }

/** A conversation held by another run, said to the person who sent the message. */
export const conversationBusy = (chatId: string) =>
  new ConversationBusy({ chatId, message: `Chat ${JSON.stringify(chatId)} is busy: its last message is still running; send again once it has ended` })

/**
 * The decision the answers make: about each pending call of an approval pause (an answer a
 * call lacks is the resume's `IncompleteDecisions`); for an environment pause, all its failed
 * calls retried (all approved) or their errors given to the model (all denied).
 */
const decide = (cp: Checkpoint.Checkpoint, answers: ReadonlyArray<Answer>): Effect.Effect<Decision.Decision, DecisionRefused> => {
  switch (cp.kind) {
    case "approval":
      return Effect.succeed(Decision.byCall(new Map(answers.map((answer) => [
        answer.approval.callId,
        answer.approved ? Decision.approve() : Decision.reject({ message: answer.reason })
      ]))))
    case "environment":
      if (answers.every((answer) => answer.approved)) return Effect.succeed(Decision.retry())
      if (answers.every((answer) => !answer.approved)) return Effect.succeed(Decision.report())
      return Effect.fail(Pause.mismatch(`Run ${cp.runId} paused for its environment: approve every failed call (they run again) or deny every one (the model is told they failed)`))
    default:
      return Effect.fail(Pause.mismatch(`Run ${cp.runId} stopped for ${cp.kind}, which approvals do not decide`))
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
    const pause = yield* Pause.read(agent, chatId, runId, answers.map((answer) => answer.approval.revision), words)
    const current = answers.filter((answer) => answer.approval.revision === pause.revision)
    const decision = yield* decide(pause.checkpoint, current)
    const denied = new Set(current.filter((answer) => !answer.approved).map((answer) => answer.approval.callId))
    const prelude: Array<UiChunk> = []
    // an approved call is announced by its start, as it runs again; a denied one here, with its end
    for (const { call, error } of pause.pending) {
      if (!denied.has(call.id)) continue
      prelude.push(
        { type: "tool-input-available", toolCallId: call.id, toolName: call.name, input: call.args },
        pause.checkpoint.kind === "approval" || error === undefined
          ? { type: "tool-output-denied", toolCallId: call.id }
          : { type: "tool-output-error", toolCallId: call.id, errorText: error.message }
      )
    }
    return { pause, decision, prelude }
  })

/** A resume refused because the conversation is held: by the resume of another answer to the same pause (`AlreadyDecided`), or by something else. */
export const busy = (resume: Resume, chatId: string): Effect.Effect<AlreadyDecided | ConversationBusy> =>
  Pause.busy(resume.pause, words, conversationBusy(chatId))
