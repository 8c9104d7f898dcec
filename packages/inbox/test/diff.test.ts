/**
 * The page's diff of edited arguments against the model's (static/diff.js): each change at
 * its path, in the order of the model's keys.
 */
import { describe, expect, it } from "@effect/vitest"
import { diff } from "../static/diff.js"

describe("diff (static/diff.js)", () => {
  it("equal arguments, whatever their key order: no change", () => {
    expect(diff({ to: "Ada", amount: 250, tags: ["a"] }, { tags: ["a"], amount: 250, to: "Ada" })).toEqual([])
  })

  it("changed, added and removed values, at their paths, nested in objects and arrays", () => {
    const model = { to: "Ada", amount: 250, memo: "Invoice 7", lines: [{ sku: "a", qty: 1 }, { sku: "b", qty: 2 }], meta: { urgent: false } }
    const edited = { to: "Ada", amount: 300, lines: [{ sku: "a", qty: 3 }], meta: { urgent: true, by: "Ada" }, cc: "Bob" }
    expect(diff(model, edited)).toEqual([
      { path: "amount", kind: "changed", before: 250, after: 300 },
      { path: "memo", kind: "removed", before: "Invoice 7" },
      { path: "lines[0].qty", kind: "changed", before: 1, after: 3 },
      { path: "lines[1]", kind: "removed", before: { sku: "b", qty: 2 } },
      { path: "meta.urgent", kind: "changed", before: false, after: true },
      { path: "meta.by", kind: "added", after: "Ada" },
      { path: "cc", kind: "added", after: "Bob" }
    ])
  })

  it("a value of another kind is one change; so are different top-level values", () => {
    expect(diff({ to: { name: "Ada" } }, { to: "Ada" })).toEqual([{ path: "to", kind: "changed", before: { name: "Ada" }, after: "Ada" }])
    expect(diff({ a: null }, { a: {} })).toEqual([{ path: "a", kind: "changed", before: null, after: {} }])
    expect(diff([1], { 0: 1 })).toEqual([{ path: "(arguments)", kind: "changed", before: [1], after: { 0: 1 } }])
  })
})
