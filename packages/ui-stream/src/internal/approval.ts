/**
 * An approval request's id: the run, the revision of its record at the pause, and the call —
 * so that a person's answer names the pause it answers, whichever process receives it. The
 * parts are URI-encoded and joined by `:` (which URI-encoding never leaves in a part).
 */

export interface Approval {
  readonly runId: string
  readonly revision: number
  readonly callId: string
}

/** The approval id of a pending call. */
export const format = (approval: Approval): string =>
  `${encodeURIComponent(approval.runId)}:${approval.revision}:${encodeURIComponent(approval.callId)}`

/** The pending call an approval id names; `undefined` for an id agentfx did not make. */
export const parse = (id: string): Approval | undefined => {
  const parts = id.split(":")
  if (parts.length !== 3 || !/^\d+$/.test(parts[1]!)) return undefined
  try {
    return { runId: decodeURIComponent(parts[0]!), revision: Number(parts[1]), callId: decodeURIComponent(parts[2]!) }
  } catch {
    return undefined
  }
}
