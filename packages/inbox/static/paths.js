// @ts-check
/** Paths into JSON values, as a person reads them. */

/**
 * The path of the value that `segments` lead to inside `value`: `to`, `items[2].name`;
 * `(arguments)` for `value` itself. A segment is an index where the value there is an array.
 *
 * @param {unknown} value
 * @param {ReadonlyArray<string>} segments
 */
export function pathOf(value, segments) {
  let path = ""
  let node = value
  for (const segment of segments) {
    path += Array.isArray(node) ? `[${segment}]` : path === "" ? segment : `.${segment}`
    node = typeof node === "object" && node !== null ? /** @type {any} */ (node)[segment] : undefined
  }
  return path === "" ? "(arguments)" : path
}
