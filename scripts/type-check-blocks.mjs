/**
 * What `scripts/jsdoc-examples.mjs` and `scripts/docs-examples.mjs` share: code blocks written as
 * modules of their own under `examples/.<dir>/` (where every `@agentfx/*` package resolves to its
 * sources, and `effect`, `@effect/platform-node`, ... to the versions the examples use), checked
 * by one `tsc` run with the workspace's compiler options (unused names allowed: a block may
 * declare what it shows). Errors are reported at the line of the file that holds the block.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const root = join(dirname(fileURLToPath(import.meta.url)), "..")

/**
 * Type-checks `blocks` (`{ name, code, file, line }`: a module name ending in `.ts`, at most one
 * directory deep, its code, the file that holds it, relative to the root, and the line of its
 * first code line there, 1-based) as modules under `examples/<dir>/`. Returns the report and
 * whether it passed.
 */
export const typeCheckBlocks = (dir, blocks) => {
  const out = join(root, "examples", dir)
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  const origins = new Map()
  for (const block of blocks) {
    // a block without imports is a script: make it a module, so that blocks do not collide
    const code = /^\s*(import|export)\s/m.test(block.code) ? block.code : `${block.code}\nexport {}`
    mkdirSync(dirname(join(out, block.name)), { recursive: true })
    writeFileSync(join(out, block.name), `${code}\n`)
    origins.set(block.name, block)
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
    include: ["*.ts", "*/*.ts"]
  }, null, 2))
  // TypeScript 7 exports no module path to its compiler: its package's `bin` names the executable
  const typescript = dirname(createRequire(join(root, "package.json")).resolve("typescript/package.json"))
  const tsc = join(typescript, JSON.parse(readFileSync(join(typescript, "package.json"), "utf8")).bin.tsc)
  const result = spawnSync(process.execPath, [tsc, "-p", join(out, "tsconfig.json"), "--pretty", "false"], { encoding: "utf8" })
  const report = `${result.stdout}${result.stderr}`.replace(
    /(?:examples\/\.[\w-]+\/)?((?:[\w.-]+\/)?[\w.-]+\.ts)\((\d+),(\d+)\)/g,
    (whole, name, line, column) => {
      const origin = origins.get(name)
      return origin === undefined ? whole : `${origin.file}(${origin.line + Number(line) - 1},${column}) [${name}]`
    }
  )
  return { ok: result.status === 0, report: report.trim() }
}
