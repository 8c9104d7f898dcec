#!/usr/bin/env node
/**
 * Type-checks every `@example` block of the packages' JSDoc (part of `pnpm typecheck`): each
 * fenced `ts` block after an `@example` tag in `packages/<name>/src/**.ts` becomes a module of its
 * own under `examples/.jsdoc/`, and one `tsc` run checks them all (`scripts/type-check-blocks.mjs`,
 * shared with `scripts/docs-examples.mjs`, which checks the blocks of the Markdown docs). Errors
 * are reported at the line of the source file that holds the example. Exits 1 on any error, or
 * when no example was found (the extraction broke).
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { root, typeCheckBlocks } from "./type-check-blocks.mjs"

const sources = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

/** The `ts` blocks after `@example` tags in a file's JSDoc: their code and the source line of their first code line (1-based). */
export const examplesOf = (text) => {
  const found = []
  const lines = text.split("\n")
  let inDoc = false
  let afterTag = false
  let block = undefined
  lines.forEach((line, index) => {
    const trimmed = line.trim()
    if (!inDoc) {
      if (trimmed.startsWith("/**")) inDoc = !trimmed.endsWith("*/")
      return
    }
    if (trimmed.startsWith("*/") || trimmed.endsWith("*/")) {
      inDoc = afterTag = false
      block = undefined
      return
    }
    const content = line.replace(/^\s*\* ?/, "")
    if (block !== undefined) {
      if (content.trim() === "```") {
        found.push(block)
        block = undefined
        afterTag = false
      } else {
        block.code.push(content)
      }
      return
    }
    if (content.trim().startsWith("@example")) afterTag = true
    else if (afterTag && /^```(ts|typescript)\s*$/.test(content.trim())) block = { line: index + 2, code: [] }
  })
  return found
}

const main = () => {
  const blocks = []
  for (const pkg of readdirSync(join(root, "packages"))) {
    const src = join(root, "packages", pkg, "src")
    let files
    try {
      files = sources(src)
    } catch {
      continue
    }
    for (const file of files) {
      examplesOf(readFileSync(file, "utf8")).forEach((example, n) => {
        const name = `${pkg}.${relative(src, file).replace(/\.ts$/, "").replaceAll("/", ".")}.${n + 1}.ts`
        blocks.push({ name, code: example.code.join("\n"), file: relative(root, file), line: example.line })
      })
    }
  }
  if (blocks.length === 0) {
    console.error("jsdoc-examples: no @example block found — the extraction is broken")
    process.exit(1)
  }
  const { ok, report } = typeCheckBlocks(".jsdoc", blocks)
  if (!ok) {
    console.error(report)
    console.error(`jsdoc-examples: ${blocks.length} examples checked; the errors above are at the lines of the examples in the sources`)
    process.exit(1)
  }
  console.log(`jsdoc-examples: ${blocks.length} @example blocks type-check`)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main()
