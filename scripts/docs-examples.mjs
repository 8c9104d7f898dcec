#!/usr/bin/env node
/**
 * Type-checks every TypeScript block of the Markdown docs (part of `pnpm typecheck`), as the JSDoc
 * examples are (`scripts/jsdoc-examples.mjs`; both use `scripts/type-check-blocks.mjs`): each
 * ```` ```ts ```` or ```` ```typescript ```` block of `README.md`, `packages/<name>/README.md` and
 * `docs/**.md` becomes a module of its own under `examples/.docs/`, where it imports the packages
 * as a user does (`@agentfx/core`, `effect`, `@effect/platform-node/...`). A block is a complete
 * module: what it uses it imports or declares (`declare const model: Layer.Layer<...>` for what
 * the page built elsewhere). A block whose first line is a comment naming a file
 * (`// tools.ts`, `// crunch.worker.ts: loaded in the worker`) is that file, beside the page's
 * other named blocks: they import each other by relative path (`./tools.js`).
 *
 * Left out:
 * - a block whose info string says `fragment` (```` ```ts fragment ````): a piece that is not a
 *   module (the middle of a call, a signature); used sparingly — prefer a block that compiles;
 * - `docs/decisions/`: the decisions are history, and may show the APIs of their time.
 *
 * Errors are reported at the line of the Markdown file that holds the block. Exits 1 on any
 * error, or when no block was found (the extraction broke).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { root, typeCheckBlocks } from "./type-check-blocks.mjs"

const markdown = (dir, skip) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return skip.includes(path) ? [] : markdown(path, skip)
    return entry.name.endsWith(".md") ? [path] : []
  })

/**
 * The fenced code blocks of a Markdown text: their language, the other words of their info string,
 * their code (the fence's indentation removed) and the line of their first code line (1-based).
 */
export const blocksOf = (text) => {
  const found = []
  let block = undefined
  text.split("\n").forEach((line, index) => {
    if (block === undefined) {
      const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)\s*(.*)$/.exec(line)
      if (open !== null) {
        block = {
          indent: open[1].length,
          fence: open[2],
          language: open[3],
          words: open[4].split(/\s+/).filter((word) => word !== ""),
          line: index + 2,
          code: []
        }
      }
      return
    }
    const trimmed = line.trim()
    if (trimmed.startsWith(block.fence) && trimmed.replace(new RegExp(`^${block.fence[0]}+`), "") === "" && trimmed.length >= block.fence.length) {
      const { indent: _, fence: __, ...rest } = block
      found.push({ ...rest, code: rest.code.join("\n") })
      block = undefined
      return
    }
    block.code.push(line.slice(Math.min(block.indent, line.length - line.trimStart().length)))
  })
  return found
}

const isTypeScript = (block) => block.language === "ts" || block.language === "typescript"

const main = () => {
  const files = [
    join(root, "README.md"),
    ...readdirSync(join(root, "packages")).map((pkg) => join(root, "packages", pkg, "README.md")).filter(existsSync),
    ...markdown(join(root, "docs"), [join(root, "docs", "decisions")])
  ]
  const blocks = []
  let fragments = 0
  for (const file of files) {
    const path = relative(root, file)
    blocksOf(readFileSync(file, "utf8")).filter(isTypeScript).forEach((block, n) => {
      if (block.words.includes("fragment")) {
        fragments += 1
        return
      }
      const page = path.replace(/\.md$/, "").replaceAll("/", ".")
      const file = /^\/\/ ([\w.-]+\.ts)\b/.exec(block.code)?.[1]
      const name = file === undefined ? `${page}.${n + 1}.ts` : `${page}/${file}`
      blocks.push({ name, code: block.code, file: path, line: block.line })
    })
  }
  if (blocks.length === 0) {
    console.error("docs-examples: no TypeScript block found in the docs — the extraction is broken")
    process.exit(1)
  }
  const { ok, report } = typeCheckBlocks(".docs", blocks)
  if (!ok) {
    console.error(report)
    console.error(`docs-examples: ${blocks.length} blocks checked; the errors above are at the lines of the blocks in the Markdown files`)
    process.exit(1)
  }
  console.log(`docs-examples: ${blocks.length} TypeScript blocks of the docs type-check (${fragments} marked fragment, not checked)`)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main()
