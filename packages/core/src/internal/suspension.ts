/**
 * How a tool call waits for a person: a delegate tool whose child agent paused returns a
 * suspension; the parent run pauses with the child's pending calls, and its resume calls
 * the tool again with a resumption (the child's checkpoint and the person's decision).
 */
import type * as AgentExit from "../AgentExit.js"
import type * as Checkpoint from "../Checkpoint.js"
import type { Decision } from "../Decision.js"
import type { JsonValue } from "../Json.js"

const SuspensionTypeId: unique symbol = Symbol.for("@agentfx/core/Suspension")

/** What a handler returns instead of a value when it must wait for a person. */
export interface Suspension {
  readonly [SuspensionTypeId]: typeof SuspensionTypeId
  readonly exit: AgentExit.Paused
}

export const suspend = (exit: AgentExit.Paused): Suspension => ({ [SuspensionTypeId]: SuspensionTypeId, exit })

export const isSuspension = (u: unknown): u is Suspension =>
  typeof u === "object" && u !== null && SuspensionTypeId in u

/** Given to a suspended call's handler when its run is resumed (`context[ResumptionKey]`). */
export interface Resumption {
  readonly checkpoint: JsonValue | Checkpoint.Encoded
  readonly decision: Decision
}

export const ResumptionKey: unique symbol = Symbol.for("@agentfx/core/Resumption")

/** Where a delegate tool keeps its child agent, for the parent's resume to validate decisions. */
export const DelegateAgentKey: unique symbol = Symbol.for("@agentfx/core/DelegateAgent")

/** The id a child's pending call has in its parent's pause: `<parent call id>/<child call id>`. */
export const nestedId = (parentCallId: string, childCallId: string) => `${parentCallId}/${childCallId}`
