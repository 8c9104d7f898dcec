/**
 * Ids of runs and ephemeral conversations.
 */
import { randomUUID } from "node:crypto"

/**
 * A random UUID (after `prefix`) as a flat string. Node builds `randomUUID()` by
 * concatenation, so V8 keeps it as a tree of ~30 cons-string nodes: ~450 B retained per id
 * instead of ~60 B, for as long as the run lives (docs/performance.md). `normalize()` of an
 * ASCII string returns a flat copy (~0.1 µs).
 */
export const newId = (prefix = ""): string => `${prefix}${randomUUID()}`.normalize()
