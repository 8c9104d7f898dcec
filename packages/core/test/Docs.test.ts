/**
 * Every `@example` in the package's JSDoc must compile: they are extracted into files that
 * import "@agentfx/core" and type-checked with the project's strict settings.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("..", import.meta.url))
const src = join(root, "src")
const out = join(root, "dist", "doc-examples")

const examples = () =>
  readdirSync(src).filter((file) => file.endsWith(".ts") && file !== "index.ts").flatMap((file) =>
    [...readFileSync(join(src, file), "utf8").matchAll(/@example\n \* ```ts\n((?: \*.*\n)*?) \* ```/g)].map((match, i) => ({
      name: `${file.replace(/\.ts$/, "")}_${i + 1}.ts`,
      code: match[1]!.split("\n").map((line) => line.replace(/^ \* ?/, "")).join("\n")
    }))
  )

describe("Docs", () => {
  it("every JSDoc @example compiles", () => {
    const found = examples()
    expect(found.length).toBeGreaterThan(90)
    rmSync(out, { recursive: true, force: true })
    mkdirSync(out, { recursive: true })
    for (const { code, name } of found) {
      writeFileSync(join(out, name), `${code.replaceAll(`"@agentfx/core"`, `"../../src/index.js"`)}\nexport {}\n`)
    }
    writeFileSync(
      join(out, "tsconfig.json"),
      JSON.stringify({
        extends: "../../../../tsconfig.base.json",
        compilerOptions: { noEmit: true, composite: false, declaration: false, declarationMap: false, noUnusedLocals: false },
        include: ["*.ts"]
      })
    )
    let output = ""
    try {
      execFileSync(process.execPath, [join(root, "../../node_modules/typescript/bin/tsc"), "-p", out], { encoding: "utf8" })
    } catch (error) {
      output = (error as { stdout?: string }).stdout ?? String(error)
    }
    expect(output).toBe("")
  }, 120_000)
})
