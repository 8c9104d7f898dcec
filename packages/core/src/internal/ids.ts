/**
 * Ids of runs and ephemeral conversations.
 */
import { randomUUID } from "node:crypto"

/** Random once per process: ids from two processes never collide. Flattened once (see below). */
const processPrefix = `${randomUUID()}-`.normalize()
let sequence = 0

/**
 * A run id: this process's random UUID and a sequence number, `<uuid>-<n>` (base 36).
 * Unique across processes and machines like a UUID per run, at ~0.05 µs and ~50 B: V8 keeps
 * it as one cons string over the shared prefix and the short number. `randomUUID()` per run
 * allocated ~0.6 KB: Node builds it by concatenation, a tree of ~30 cons strings that had
 * to be flattened to be kept (docs/performance.md).
 */
export const newId = (): string => processPrefix + (sequence++).toString(36)

/** The id of a run's ephemeral conversation. */
export const ephemeralId = (runId: string): string => `ephemeral-${runId}`
