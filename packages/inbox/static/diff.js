// @ts-check
/** What a person changed in a call's arguments: the model's arguments against the edited ones. */
import { pathOf } from "./paths.js"

/**
 * One difference, at a path: a value `changed` (`before` → `after`), `added` (`after`) or
 * `removed` (`before`).
 *
 * @typedef {{ path: string, kind: "changed", before: unknown, after: unknown } | { path: string, kind: "added", after: unknown } | { path: string, kind: "removed", before: unknown }} Change
 */

/** @param {unknown} value @returns {value is Record<string, unknown>} */
const isRecord = (value) => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The differences between `before` and `after`: where both hold objects (or both arrays) at a
 * path, those of their members, in the order of `before`'s keys and then the new ones; else
 * the value at the path changed. None when they are equal (key order aside).
 *
 * @param {unknown} before
 * @param {unknown} after
 * @returns {Array<Change>}
 */
export function diff(before, after) {
  /** @type {Array<Change>} */
  const changes = []
  /** @param {unknown} a @param {unknown} b @param {Array<string>} segments */
  const walk = (a, b, segments) => {
    if (a === b) return
    /** @type {Array<[string, boolean, boolean]>} key, in a, in b */
    let keys
    if (isRecord(a) && isRecord(b)) {
      keys = [...Object.keys(a), ...Object.keys(b).filter((k) => !Object.hasOwn(a, k))].map((k) => [k, Object.hasOwn(a, k), Object.hasOwn(b, k)])
    } else if (Array.isArray(a) && Array.isArray(b)) {
      keys = Array.from({ length: Math.max(a.length, b.length) }, (_, i) => [String(i), i < a.length, i < b.length])
    } else {
      changes.push({ path: pathOf(after, segments), kind: "changed", before: a, after: b })
      return
    }
    const x = /** @type {any} */ (a)
    const y = /** @type {any} */ (b)
    for (const [key, inA, inB] of keys) {
      const inner = [...segments, key]
      if (!inB) changes.push({ path: pathOf(before, inner), kind: "removed", before: x[key] })
      else if (!inA) changes.push({ path: pathOf(after, inner), kind: "added", after: y[key] })
      else walk(x[key], y[key], inner)
    }
  }
  walk(before, after, [])
  return changes
}
