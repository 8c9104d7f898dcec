/**
 * Every `@example` in the packages' JSDoc must compile: each is extracted into a file that
 * imports "@agentfx/<package>" (or a module of it, "@agentfx/<package>/<Module>") and type-checked with the project's strict settings.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { tscErrors } from "./tsc.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const out = join(root, "examples", "build", "doc-examples")
/** Examples are written beside their package, so that its own dependencies resolve (in `build/`, which is never published). */
const outOf = (pkg: string) => join(root, "packages", pkg, "build", "doc-examples")
const packages = readdirSync(join(root, "packages")).filter((name) => name !== "bench")

const examples = (pkg: string) => {
  const src = join(root, "packages", pkg, "src")
  return readdirSync(src).filter((file) => file.endsWith(".ts") && file !== "index.ts").flatMap((file) =>
    [...readFileSync(join(src, file), "utf8").matchAll(/@example\n \* ```ts\n((?: \*.*\n)*?) \* ```/g)].map((match, i) => ({
      name: `${pkg}_${file.replace(/\.ts$/, "")}_${i + 1}.ts`,
      code: match[1]!.split("\n").map((line) => line.replace(/^ \* ?/, "")).join("\n")
    }))
  )
}

describe("JSDoc examples", () => {
  it("every @example of every package compiles", () => {
    rmSync(out, { recursive: true, force: true })
    mkdirSync(out, { recursive: true })
    const counts: Record<string, number> = {}
    for (const pkg of packages) {
      const found = examples(pkg)
      counts[pkg] = found.length
      rmSync(outOf(pkg), { recursive: true, force: true })
      mkdirSync(outOf(pkg), { recursive: true })
      for (const { code, name } of found) {
        const resolved = code.replace(
          /"@agentfx\/([a-z-]+)(?:\/(\w+))?"/g,
          (_, p: string, module: string | undefined) => `"../../../${p}/src/${module ?? "index"}.js"`
        )
        writeFileSync(join(outOf(pkg), name), `${resolved}\nexport {}\n`)
      }
    }
    expect(counts.core).toBeGreaterThan(90)
    expect(counts.ai).toBeGreaterThan(5)
    expect(counts.mcp).toBeGreaterThan(5)
    expect(counts.sql).toBeGreaterThan(5)
    writeFileSync(
      join(out, "tsconfig.json"),
      JSON.stringify({
        extends: "../../../tsconfig.base.json",
        compilerOptions: { noEmit: true, composite: false, declaration: false, declarationMap: false, noUnusedLocals: false },
        include: packages.map((pkg) => `../../../packages/${pkg}/build/doc-examples/*.ts`)
      })
    )
    expect(tscErrors(out)).toBe("")
  }, 120_000)
})
