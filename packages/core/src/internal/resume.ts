/**
 * Validating a resume decision against a checkpoint, before anything is consumed.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Agent from "../Agent.js"
import {
  DecisionMismatch,
  IncompleteDecisions,
  InvalidCheckpoint,
  InvalidEditedArguments,
  InvalidRunInput,
  UnknownDecision
} from "../AgentError.js"
import type { Budget } from "../Budget.js"
import type * as Checkpoint from "../Checkpoint.js"
import type { CallDecision, Decision } from "../Decision.js"
import { JsonValue } from "../Json.js"
import type { Message } from "../Message.js"
import type { ToolCall } from "../ToolCall.js"
import type * as Toolkit from "../Toolkit.js"
import { limitProblem } from "./admit.js"
import { budgetProblems } from "./assemble.js"
import * as CheckpointCodec from "./checkpoint.js"
import { decodeArguments } from "./executor.js"
import { definedOnly } from "./run.js"
import { describeParseError } from "./parseError.js"
import type { BatchItem } from "./batchItem.js"
import { Done, fromCheckpoint, match as matchItem, Resuming, Runnable } from "./batchItem.js"
import { DelegateAgentKey, nestedId } from "./suspension.js"

/** What the resumed run does first. */
export interface Plan {
  /** `batch`: finish the paused batch; `continue`: iterate again with a fresh budget. */
  readonly mode: "batch" | "continue"
  readonly batch: ReadonlyArray<BatchItem>
  readonly environmentPause: boolean
  /** The history to resume with (edited arguments shown in their assistant message). */
  readonly messages: ReadonlyArray<Message>
  /** The run's budget from now on: the checkpoint's, with a `continue` decision's raises. */
  readonly budget: Budget | undefined
}

export type DecisionError =
  | UnknownDecision
  | IncompleteDecisions
  | InvalidEditedArguments
  | DecisionMismatch
  | InvalidCheckpoint
  | InvalidRunInput

const accepted: Record<Checkpoint.Kind, ReadonlyArray<Decision["_tag"]>> = {
  "approval": ["ApproveAll", "RejectAll", "ByCall"],
  "environment": ["Retry", "Report"],
  "max-iterations": ["Continue"],
  "budget": ["Continue"],
  "running": []
}

const approved = (item: Checkpoint.BatchItem): BatchItem => Runnable({ call: item.call })

const rejected = (call: ToolCall, message: string | undefined): BatchItem =>
  Done({
    call,
    outcome: { _tag: "Rejected", callId: call.id, toolName: call.name, ...(message === undefined ? {} : { message }) }
  })

/**
 * Why a person's value (edited arguments, a reply) cannot enter the history, if it cannot: beyond
 * the agent's limits, as a model's would be, or not JSON (a `NaN`, a `Date`: the history would
 * show another value than the one that ran).
 */
const personValueProblem = (agent: Agent.Any, value: unknown, what: string): string | undefined => {
  const refusal = limitProblem(value, agent.limits, what)
  if (refusal !== undefined) return refusal.limit ? `${refusal.problem} (the agent's limit)` : refusal.problem
  const json = Schema.decodeUnknownResult(JsonValue)(value)
  return Result.isFailure(json) ? `${what} are not JSON: ${describeParseError(json.failure)}` : undefined
}

const withEditedArgs = (messages: ReadonlyArray<Message>, edited: ReadonlyMap<string, JsonValue>) =>
  edited.size === 0 ? messages : messages.map((message): Message =>
    message._tag === "Assistant" && message.toolCalls.some((call) => edited.has(call.id))
      ? { ...message, toolCalls: message.toolCalls.map((call) => edited.has(call.id) ? { ...call, args: edited.get(call.id)! } : call) }
      : message
  )

/** Why a person's decision for one call cannot be carried out. */
type Problem = InvalidEditedArguments["problems"][number]

/**
 * Why edited arguments, decoded, cannot stand, if they cannot: they are asked of the agent's
 * gate as the model's would be (decision 117). A gate that would ask a person (`Pause`) or let
 * the call run lets the edit stand — a person approved it; one that rejects or answers such a
 * call itself refuses it.
 */
const gateOnEdit = (
  agent: Agent.Any,
  call: ToolCall,
  tool: Toolkit.Entry,
  args: unknown,
  state: { readonly [slot: string]: unknown }
): Effect.Effect<string | undefined, never, any> =>
  Effect.map(agent.gate({ name: call.name, call, args, tool, state }), (verdict) => {
    switch (verdict._tag) {
      case "Proceed":
      case "Pause":
        return undefined
      case "Reject":
        return `the agent's gate says Reject to the edited arguments${verdict.message === undefined ? "" : `: ${JSON.stringify(verdict.message)}`}`
      case "Reply":
        return "the agent's gate says Reply to the edited arguments: it answers such a call itself"
    }
  })

/**
 * A `byCall` decision as the resumed run's batch. Edited arguments must be JSON within the
 * agent's limits, decode with the tool's `parameters`, and pass the agent's gate (`gateOnEdit`):
 * on every path, whether the checkpoint is trusted or not.
 */
const byCall = (
  agent: Agent.Any,
  checkpoint: Checkpoint.Checkpoint,
  state: { readonly [slot: string]: unknown },
  decisions: ReadonlyMap<string, CallDecision>
): Effect.Effect<Plan, DecisionError, any> => {
  const pending = new Set(checkpoint.pending)
  const unknown = [...decisions.keys()].filter((id) => !pending.has(id))
  if (unknown.length > 0) return Effect.fail(new UnknownDecision({ callIds: unknown, pending: checkpoint.pending }))
  const missing = checkpoint.pending.filter((id) => !decisions.has(id))
  if (missing.length > 0) return Effect.fail(new IncompleteDecisions({ callIds: missing }))
  // one per call with a problem, in the batch's order; an edit's is known once its arguments are decoded
  const problems: Array<Effect.Effect<Problem | undefined, never, any>> = []
  const problem = (item: Checkpoint.BatchItem, message: string) =>
    problems.push(Effect.succeed({ callId: item.call.id, toolName: item.call.name, message }))
  const edited = new Map<string, JsonValue>()
  const batch = checkpoint.batch.map((item): BatchItem => {
    const decision = decisions.get(item.call.id)
    if (decision === undefined) return fromCheckpoint(item)
    switch (decision._tag) {
      case "Reject":
        return rejected(item.call, decision.message)
      case "Reply": {
        // a person's value enters the history as a model's would: JSON, within the agent's limits
        const why = personValueProblem(agent, decision.value, "the reply's values")
        if (why !== undefined) {
          problem(item, why)
          return fromCheckpoint(item)
        }
        return Done({ call: item.call, outcome: { _tag: "Replied", callId: item.call.id, toolName: item.call.name, value: decision.value } })
      }
      case "Approve": {
        if (decision.args === undefined) return approved(item)
        const beyond = personValueProblem(agent, decision.args, "the edited arguments")
        if (beyond !== undefined) {
          problem(item, beyond)
          return fromCheckpoint(item)
        }
        const entry = agent.toolkit.entries.get(item.call.name)
        if (entry === undefined) {
          problem(item, "the agent has no such tool")
          return fromCheckpoint(item)
        }
        const call = { ...item.call, args: decision.args }
        // decoded as the executor decodes (a tool's parameters may check asynchronously), then asked of the gate
        problems.push(Effect.matchEffect(decodeArguments(entry, decision.args), {
          onFailure: (error) => Effect.succeed(error.message),
          onSuccess: (args) => gateOnEdit(agent, call, entry, args, state)
        }).pipe(Effect.map((message) => message === undefined ? undefined : { callId: call.id, toolName: call.name, message })))
        edited.set(item.call.id, decision.args)
        return approved({ call })
      }
    }
  })
  return Effect.flatMap(Effect.all(problems), (found) => {
    const invalid = found.filter((problem) => problem !== undefined)
    return invalid.length > 0 ? Effect.fail(new InvalidEditedArguments({ problems: invalid })) : Effect.succeed<Plan>({
      mode: "batch",
      batch,
      environmentPause: agent.onEnvironmentError === "pause",
      messages: withEditedArgs(checkpoint.messages, edited),
      budget: checkpoint.budget
    })
  })
}

/** The part of a parent's decision that concerns one suspended call's child. */
const childDecision = (decision: Decision, parentCallId: string): Decision => {
  if (decision._tag !== "ByCall") return decision
  const prefix = nestedId(parentCallId, "")
  return {
    _tag: "ByCall",
    decisions: new Map([...decision.decisions].filter(([id]) => id.startsWith(prefix)).map(([id, d]) => [id.slice(prefix.length), d]))
  }
}

/** A child's refusal, with its call ids as the parent's pause shows them. */
const nestErrorIds = (parentCallId: string) => (error: DecisionError): DecisionError => {
  const nest = (id: string) => nestedId(parentCallId, id)
  switch (error._tag) {
    case "UnknownDecision":
      return new UnknownDecision({ callIds: error.callIds.map(nest), pending: error.pending.map(nest) })
    case "IncompleteDecisions":
      return new IncompleteDecisions({ callIds: error.callIds.map(nest) })
    case "InvalidEditedArguments":
      return new InvalidEditedArguments({ problems: error.problems.map((p) => ({ ...p, callId: nest(p.callId) })) })
    default:
      return error
  }
}

/**
 * Validates the decisions meant for suspended calls (delegates whose child paused) against
 * each child's own checkpoint and agent, and turns those calls into resumptions. A child's
 * checkpoint is trusted as its parent's is (or when the child's own signature holds): in an
 * unsigned copy it may have been edited, and is checked now, before the parent is claimed.
 */
const resumeSuspended = (
  agent: Agent.Any,
  batch: ReadonlyArray<BatchItem>,
  decision: Decision,
  trusted: boolean
): Effect.Effect<Array<BatchItem>, DecisionError, any> =>
  Effect.forEach(batch, (item) => {
    if (item._tag !== "Done" || item.outcome._tag !== "Suspended") return Effect.succeed(item)
    const child = (agent.toolkit.entries.get(item.call.name)?.tool as { [DelegateAgentKey]?: Agent.Any } | undefined)?.[
      DelegateAgentKey
    ]
    if (child === undefined) {
      return Effect.fail(new InvalidCheckpoint({ reason: "tools", detail: `tool "${item.call.name}" cannot resume a suspended call` }))
    }
    const forChild = childDecision(decision, item.call.id)
    const checkpoint = item.outcome.checkpoint
    return CheckpointCodec.decode(child, checkpoint).pipe(
      Effect.flatMap((decoded) => plan(child, decoded.checkpoint, decoded.state, forChild, trusted || child.checkpointSecret !== undefined)),
      Effect.mapError(nestErrorIds(item.call.id)),
      Effect.as(Resuming({ call: item.call, resumption: { checkpoint, decision: forChild } }))
    )
  })

/**
 * Nothing runs that no verdict allowed: every call of the batch without an outcome must have
 * the verdict `proceed` — the gate's, or the person's approval — or, in a budget stop
 * (`asksWaiting`), wait for a person: a call the stop held before anyone was asked, which the
 * resumed run asks for, never runs. A
 * checkpoint that is not trusted (an unsigned copy imported from elsewhere) may have been
 * edited: its verdicts are asked of the gate again, with the arguments decoded, and must still
 * hold; a call the decision approves (`approveAll`, `byCall`; a `retry` approves none), or one
 * to be asked for, may have been one the gate asks a person about (`Pause`), never one it
 * rejects or answers itself.
 */
const verify = (
  agent: Agent.Any,
  planned: Plan,
  state: { readonly [slot: string]: unknown },
  trusted: boolean,
  approvedNow: ReadonlySet<string>,
  asksWaiting: boolean
): Effect.Effect<Plan, InvalidCheckpoint, any> =>
  Effect.forEach(planned.batch, (item) => {
    const refuse = (why: string) =>
      Effect.fail(new InvalidCheckpoint({ reason: "verdicts", detail: `call ${JSON.stringify(item.call.id)} (${item.call.name}) ${why}` }))
    return matchItem(item, {
      Done: () => Effect.void,
      Resuming: () => Effect.void,
      // a call a budget stop held before a person was asked: the resumed run asks for it (`stopBefore`), never runs it
      Waiting: () =>
        !asksWaiting
          ? refuse("has no verdict that lets it run")
          : trusted
          ? Effect.void
          : gateAgain(agent, item, state, "is to be asked of a person", refuse),
      Runnable: () =>
        trusted ? Effect.void : gateAgain(
          agent,
          item,
          state,
          approvedNow.has(item.call.id) ? "may run by the checkpoint and the decision" : "may run by the checkpoint",
          refuse
        )
    })
  }, { discard: true }).pipe(Effect.as(planned))

/**
 * A call an untrusted copy lets run, or has asked of a person, asked of the gate again with its
 * arguments decoded (`claim`: what the copy says of it). Approved now, or to be asked for: the
 * gate may have asked a person (`Pause`), never refused it (a copy that lists a call the gate
 * rejected as pending cannot have it approved).
 */
const gateAgain = (
  agent: Agent.Any,
  item: BatchItem,
  state: { readonly [slot: string]: unknown },
  claim: "may run by the checkpoint" | "may run by the checkpoint and the decision" | "is to be asked of a person",
  refuse: (why: string) => Effect.Effect<never, InvalidCheckpoint>
): Effect.Effect<void, InvalidCheckpoint, any> => {
  const asked = claim !== "may run by the checkpoint"
  const tool = agent.toolkit.entries.get(item.call.name)
  if (tool === undefined) return Effect.void // it runs as the unknown-tool failure
  return Effect.result(decodeArguments(tool, item.call.args)).pipe(
    Effect.flatMap((args) =>
      Result.isFailure(args) // it runs as the failure that tells the model what was wrong
        ? Effect.void
        : Effect.flatMap(
          agent.gate({ name: item.call.name, call: item.call, args: args.success, tool, state }),
          (verdict) =>
            verdict._tag === "Proceed" || (asked && verdict._tag === "Pause")
              ? Effect.void
              : refuse(`${claim}, but the gate now says ${verdict._tag}`)
        )
    )
  )
}

/**
 * Turns a decision into the resumed run's first step, or refuses it; never consumes anything.
 * `trusted`: the checkpoint is the run's own record (or a signed copy); otherwise its verdicts
 * are checked with the gate again.
 */
export const plan = (
  agent: Agent.Any,
  checkpoint: Checkpoint.Checkpoint,
  state: { readonly [slot: string]: unknown },
  decision: Decision,
  trusted: boolean
): Effect.Effect<Plan, DecisionError, any> => {
  if (!accepted[checkpoint.kind].includes(decision._tag)) {
    return Effect.fail(new DecisionMismatch({ decision: decision._tag, kind: checkpoint.kind, accepted: accepted[checkpoint.kind] }))
  }
  const pending = new Set(checkpoint.pending)
  const recorded = checkpoint.batch.map(fromCheckpoint)
  const base = {
    batch: recorded,
    messages: checkpoint.messages,
    environmentPause: agent.onEnvironmentError === "pause",
    budget: checkpoint.budget
  }
  const own = ((): Effect.Effect<Plan, DecisionError, any> => {
    switch (decision._tag) {
      case "ApproveAll":
        return Effect.succeed({
          ...base,
          mode: "batch",
          batch: checkpoint.batch.map((item, i) => pending.has(item.call.id) ? approved(item) : recorded[i]!)
        })
      case "RejectAll":
        return Effect.succeed({
          ...base,
          mode: "batch",
          batch: checkpoint.batch.map((item, i) => pending.has(item.call.id) ? rejected(item.call, decision.message) : recorded[i]!)
        })
      case "ByCall":
        return byCall(agent, checkpoint, state, decision.decisions)
      case "Retry":
        return Effect.succeed({
          ...base,
          mode: "batch",
          batch: checkpoint.batch.map((item, i) => pending.has(item.call.id) ? approved(item) : recorded[i]!)
        })
      case "Report":
        return Effect.succeed({ ...base, mode: "batch", environmentPause: false })
      case "Continue": {
        // a raise is checked like a run's budget, before anything is consumed
        const problems = budgetProblems(decision.raise, "raise")
        if (problems.length > 0) return Effect.fail(new InvalidRunInput({ problems }))
        // a budget stop before a batch holds the batch: it runs first
        return Effect.succeed({
          ...base,
          mode: checkpoint.batch.length > 0 ? "batch" : "continue",
          budget: decision.raise === undefined ? base.budget : { ...base.budget, ...definedOnly(decision.raise) }
        })
      }
    }
  })()
  // a retry approves nothing: the failed calls it runs again are asked of the gate like any other
  const approvedNow = decision._tag === "ApproveAll" || decision._tag === "ByCall" ? pending : new Set<string>()
  // a budget stop may hold calls that wait for a person: the raise asks for them (decision 067)
  const asksWaiting = checkpoint.kind === "budget"
  return own.pipe(
    Effect.flatMap((planned) => Effect.map(resumeSuspended(agent, planned.batch, decision, trusted), (batch) => ({ ...planned, batch }))),
    Effect.flatMap((planned) => verify(agent, planned, state, trusted, approvedNow, asksWaiting))
  )
}
