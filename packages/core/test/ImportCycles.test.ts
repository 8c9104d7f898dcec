import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const src = fileURLToPath(new URL("../src", import.meta.url))

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : /\.(ts|mjs)$/.test(entry.name) ? [join(dir, entry.name)] : []
  )

/**
 * The modules a file imports by value: `import type …` and imports whose every specifier is
 * `type` are erased by the compiler, so they cannot form a cycle at run time.
 */
export const valueImports = (file: string, text: string): Array<string> => {
  const found: Array<string> = []
  for (const match of text.matchAll(/^(import|export)\s+(type\s+)?([^"]*?)\s+from\s+"(\.{1,2}\/[^"]+)"/gm)) {
    const [, , typeOnly, clause, specifier] = match
    if (typeOnly !== undefined) continue
    const names = /^\{([\s\S]*)\}$/.exec(clause!.trim())?.[1]?.split(",").map((n) => n.trim()).filter((n) => n.length > 0)
    if (names !== undefined && names.length > 0 && names.every((n) => n.startsWith("type "))) continue
    found.push(resolve(dirname(file), specifier!.replace(/\.js$/, ".ts")))
  }
  return found
}

/** Every cycle of value imports, each as the list of files around it. */
export const cycles = (graph: ReadonlyMap<string, ReadonlyArray<string>>): Array<Array<string>> => {
  const found: Array<Array<string>> = []
  const state = new Map<string, "visiting" | "done">()
  const stack: Array<string> = []
  const visit = (file: string) => {
    state.set(file, "visiting")
    stack.push(file)
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "visiting") found.push(stack.slice(stack.indexOf(next)))
      else if (state.get(next) === undefined) visit(next)
    }
    stack.pop()
    state.set(file, "done")
  }
  for (const file of graph.keys()) if (state.get(file) === undefined) visit(file)
  return found
}

describe("imports of @agentfx/core", () => {
  it("finds a cycle when there is one, and ignores type-only imports", () => {
    const a = "/x/a.ts"
    const text = [
      `import { b } from "./b.js"`,
      `import type { C } from "./c.js"`,
      `import { type D, type E } from "./d.js"`,
      `import {\n  f,\n  type G\n} from "./f.js"`
    ].join("\n")
    expect(valueImports(a, text)).toEqual(["/x/b.ts", "/x/f.ts"])
    expect(cycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]]))).toEqual([["a", "b", "c"]])
  })

  it("have no value import cycle in packages/core/src", () => {
    const files = sourceFiles(src)
    const graph = new Map(files.map((file) => [file, valueImports(file, readFileSync(file, "utf8"))]))
    const found = cycles(graph).map((cycle) => cycle.map((file) => relative(src, file)).join(" → "))
    expect(found).toEqual([])
  })
})
