/**
 * Every ```ts block of README.md and docs/*.md that imports something is a program, and must
 * compile against the current packages, like the JSDoc examples (docs.test.ts): each block is
 * written to a file, its "@agentfx/<package>" imports pointed at the sources, and the files are
 * type-checked with the project's strict settings. A block whose first line is a comment
 * naming a file (`// tools.ts`) is written under that name, beside the other blocks of its
 * document, so that blocks can import each other. A block without an import is a fragment (a
 * list of Layers, a line of a loop) and is not compiled.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { tscErrors } from "./tsc.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const documents = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]

/** Where a block is written: the first of these whose dependencies resolve every package it imports. */
const homes = ["examples", "packages/ai", "packages/mcp", "packages/core"]
/** The git-ignored folder that docs.test.ts writes the JSDoc examples to (never published, unlike dist/). */
const generated = "build"
const outOf = (home: string) => join(root, home, generated, "doc-blocks")

interface Block {
  readonly document: string
  readonly file: string
  readonly code: string
}

const blocksOf = (document: string): Array<Block> =>
  [...readFileSync(join(root, document), "utf8").matchAll(/^```ts\n([\s\S]*?)^```$/gm)]
    .map((match) => match[1]!)
    .filter((code) => /^import /m.test(code))
    .map((code, i) => ({
      document,
      file: /^\/\/ ([\w.-]+\.ts)\b/.exec(code)?.[1] ?? `block${i + 1}.ts`,
      code
    }))

const packagesOf = (code: string) =>
  [...code.matchAll(/^import .* from "((?:@[\w-]+\/)?[\w-]+)[^"]*"/gm)].map((m) => m[1]!).filter((p) => !p.startsWith("@agentfx/"))

const homeOf = (block: Block) =>
  homes.find((home) => packagesOf(block.code).every((p) => p === "node" || existsSync(join(root, home, "node_modules", p))))

describe("code in the README and docs/", () => {
  it("every ```ts block that imports something compiles", () => {
    for (const home of homes) rmSync(outOf(home), { recursive: true, force: true })
    const blocks = documents.flatMap(blocksOf)
    expect(blocks.filter((b) => b.document === "README.md").length).toBeGreaterThanOrEqual(2)
    expect(blocks.filter((b) => b.document === "docs/pause-resume.md").length).toBeGreaterThanOrEqual(3)
    const written: Array<string> = []
    for (const block of blocks) {
      const home = homeOf(block)
      expect(home, `${block.document}, ${block.file}: no package of the workspace resolves ${packagesOf(block.code).join(", ")}`)
        .toBeDefined()
      const file = join(outOf(home!), block.document.replace(/\.md$/, "").replace("/", "_"), block.file)
      mkdirSync(dirname(file), { recursive: true })
      const resolved = block.code.replace(
        /"@agentfx\/([\w-]+)(\/[\w-]+)?"/g,
        (_, pkg: string, sub: string | undefined) =>
          JSON.stringify(relative(dirname(file), join(root, "packages", pkg, "src", `${sub?.slice(1) ?? "index"}.js`)))
      )
      writeFileSync(file, `${resolved}\nexport {}\n`)
      written.push(file)
    }
    const config = join(outOf("examples"), "tsconfig.json")
    mkdirSync(dirname(config), { recursive: true })
    writeFileSync(
      config,
      JSON.stringify({
        extends: relative(dirname(config), join(root, "tsconfig.base.json")),
        compilerOptions: {
          noEmit: true,
          composite: false,
          declaration: false,
          declarationMap: false,
          noUnusedLocals: false,
          noUnusedParameters: false
        },
        files: written.map((file) => relative(dirname(config), file))
      })
    )
    expect(tscErrors(config)).toBe("")
  }, 120_000)
})
