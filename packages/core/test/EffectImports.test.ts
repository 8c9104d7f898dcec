import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const src = fileURLToPath(new URL("../src", import.meta.url))

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

/**
 * The lines of `text` that import values from the `effect` barrel. `import type` is erased by
 * the compiler and JSDoc examples are what users write, so neither counts.
 */
export const barrelImports = (text: string): Array<string> =>
  [...text.matchAll(/^import\s+(?!type\s)[^"\n]*\s+from\s+"effect"/gm)].map((match) => match[0])

describe("effect imports (decision 106)", () => {
  it("finds a value import of the barrel, and passes a type import, a module import and an example", () => {
    expect(barrelImports(`import { Effect } from "effect"`)).toHaveLength(1)
    expect(barrelImports(`import type { Fiber } from "effect"\nimport * as Effect from "effect/Effect"\n * import { Effect } from "effect"`))
      .toEqual([])
  })

  it("packages/core/src imports effect by module (effect/Effect, …), never the barrel, which loads every module of effect", () => {
    const found = sourceFiles(src).flatMap((file) =>
      barrelImports(readFileSync(file, "utf8")).map((line) => `${relative(src, file)}: ${line}`)
    )
    expect(found).toEqual([])
  })
})
