/**
 * Ids of runs and ephemeral conversations.
 */
import { randomUUID } from "node:crypto"

/** Random once per process: ids from two processes never collide. */
const processPrefix = randomUUID().normalize()
let sequence = 0

/**
 * A run id: this process's random UUID and a sequence number, `<uuid>-<n>` (base 36).
 * Unique across processes and machines like a UUID per run, and as a flat string of ~40
 * characters it costs ~0.05 µs and ~70 B. `randomUUID()` per run cost ~0.6 KB of
 * allocation: Node builds it by concatenation, a tree of ~30 cons strings that had to be
 * flattened to be kept (docs/performance.md).
 */
export const newId = (): string => `${processPrefix}-${(sequence++).toString(36)}`.normalize()

/** The id of a run's ephemeral conversation. */
export const ephemeralId = (runId: string): string => `ephemeral-${runId}`.normalize()
