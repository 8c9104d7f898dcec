#!/usr/bin/env node
/**
 * Type-checks every `@example` block of the packages' JSDoc (part of `pnpm typecheck`): each
 * fenced `ts` block after an `@example` tag in `packages/<name>/src/**.ts` becomes a module of its
 * own under `examples/.jsdoc/` (where every `@agentfx/*` package resolves to its sources), and
 * `tsc` checks them all with the workspace's compiler options (unused names allowed: an example
 * may declare what it shows). Errors are reported at the line of the source file that holds the
 * example. Exits 1 on any error, or when no example was found (the extraction broke).
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const out = join(root, "examples", ".jsdoc")

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
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  const origins = new Map()
  let count = 0
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
        const body = example.code.join("\n")
        // a block without imports is a script: make it a module, so that blocks do not collide
        const code = /^\s*(import|export)\s/m.test(body) ? body : `${body}\nexport {}`
        writeFileSync(join(out, name), `${code}\n`)
        origins.set(name, { file: relative(root, file), line: example.line })
        count += 1
      })
    }
  }
  if (count === 0) {
    console.error("jsdoc-examples: no @example block found — the extraction is broken")
    process.exit(1)
  }
  writeFileSync(join(out, "tsconfig.json"), JSON.stringify({
    extends: "../../tsconfig.base.json",
    compilerOptions: {
      noEmit: true,
      composite: false,
      declaration: false,
      declarationMap: false,
      sourceMap: false,
      incremental: false,
      noUnusedLocals: false,
      noUnusedParameters: false
    },
    include: ["*.ts"]
  }, null, 2))
  // TypeScript 7 exports no module path to its compiler: its package's `bin` names the executable
  const typescript = dirname(createRequire(join(root, "package.json")).resolve("typescript/package.json"))
  const tsc = join(typescript, JSON.parse(readFileSync(join(typescript, "package.json"), "utf8")).bin.tsc)
  const result = spawnSync(process.execPath, [tsc, "-p", join(out, "tsconfig.json"), "--pretty", "false"], { encoding: "utf8" })
  const report = `${result.stdout}${result.stderr}`.replace(
    /(?:examples\/\.jsdoc\/)?([\w.-]+\.\d+\.ts)\((\d+),(\d+)\)/g,
    (whole, name, line, column) => {
      const origin = origins.get(name)
      return origin === undefined ? whole : `${origin.file}(${origin.line + Number(line) - 1},${column}) [@example ${name}]`
    }
  )
  if (result.status !== 0) {
    console.error(report.trim())
    console.error(`jsdoc-examples: ${count} examples checked; the errors above are at the lines of the examples in the sources`)
    process.exit(1)
  }
  console.log(`jsdoc-examples: ${count} @example blocks type-check`)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main()
