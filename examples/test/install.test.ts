/**
 * The `npm i` lines users copy — README.md's Install section and each published package's
 * README — pin every package that is not agentfx's own to the version line the workspace
 * builds and tests with (for `effect` and `@effect/*`, its minor, e.g. `effect@~4.1.5`: the
 * modules agentfx uses are unstable in Effect 4, and a bare `npm i effect` installs whatever
 * minor is the latest), and a package's README installs every peer it requires. The consumer
 * test (`.ci/consumer/run.sh`) installs with README.md's lines; this test covers the packages'
 * READMEs too.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../..", import.meta.url))
const read = (path: string) => readFileSync(join(root, path), "utf8")
const published = readdirSync(join(root, "packages")).filter((name) => !JSON.parse(read(`packages/${name}/package.json`)).private)

/** The versions the workspace builds and tests with: every dependency of its package.json files. */
const workspace = new Map<string, string>()
for (const manifest of ["package.json", "examples/package.json", ...published.map((p) => `packages/${p}/package.json`)]) {
  const { dependencies = {}, devDependencies = {} } = JSON.parse(read(manifest))
  for (const [name, version] of Object.entries({ ...dependencies, ...devDependencies })) {
    if (typeof version === "string" && /^\d/.test(version)) workspace.set(name, version)
  }
}

/** The `npm i` lines of a markdown text's ```sh blocks, each as its package words (comments and flags dropped). */
const installLines = (markdown: string): Array<Array<string>> =>
  [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)]
    .flatMap((block) => block[1]!.split("\n"))
    .filter((line) => line.startsWith("npm i "))
    .map((line) => line.replace(/#.*/, "").trim().split(/\s+/).slice(2).filter((word) => !word.startsWith("-")))

const readmeInstall = read("README.md").split(/^## /m).find((section) => section.startsWith("Install\n"))!

/** `version` is in `range`: the version itself, a prefix of it (`5`, `4.1`), or `~x.y.z` (x.y, patch z or later). */
const inRange = (version: string, range: string) => {
  if (!range.startsWith("~")) return version === range || version.startsWith(`${range}.`)
  const [major, minor, patch = 0] = range.slice(1).split(".").map(Number)
  const [vMajor, vMinor, vPatch] = version.split(".").map(Number)
  return vMajor === major && vMinor === minor && vPatch! >= patch
}

/** The version line of a package: Effect's packages are pinned to a minor (`effect@~4.1.5`, `effect@4.1`), others may name a major. */
const namesItsLine = (name: string, range: string) =>
  !(name === "effect" || name.startsWith("@effect/")) || range.replace(/^~/, "").split(".").length >= 2

/** The words of a line that are not pinned to the workspace's version line: `name@range` with the workspace's version in range. */
const unpinned = (words: ReadonlyArray<string>) =>
  words.filter((word) => {
    if (word.startsWith("@agentfx/")) return false
    const at = word.lastIndexOf("@")
    if (at <= 0) return true
    const [name, range] = [word.slice(0, at), word.slice(at + 1)]
    const version = workspace.get(name)
    return version === undefined || !inRange(version, range) || !namesItsLine(name, range)
  })

describe("install lines", () => {
  it("README.md's Install section pins every package to the workspace's version line, @agentfx/sql and @agentfx/inbox included", () => {
    const lines = installLines(readmeInstall)
    expect(lines.map(unpinned)).toEqual(lines.map(() => []))
    expect(published.filter((p) => !lines.some((words) => words.includes(`@agentfx/${p}`)))).toEqual([])
  })

  it("each package's README pins every package, installs every peer it requires, and the SQL driver lines one driver each", () => {
    for (const pkg of published) {
      const lines = installLines(read(`packages/${pkg}/README.md`))
      const { peerDependencies = {}, peerDependenciesMeta = {} } = JSON.parse(read(`packages/${pkg}/package.json`))
      const required = Object.keys(peerDependencies).filter((name) => peerDependenciesMeta[name]?.optional !== true)
      expect([pkg, lines.length > 0, lines.map(unpinned)]).toEqual([pkg, true, lines.map(() => [])])
      for (const words of lines) {
        const names = words.map((word) => word.replace(/(.)@.*$/, "$1"))
        expect([pkg, required.filter((name) => !names.includes(name))]).toEqual([pkg, []])
      }
    }
    const drivers = installLines(read("packages/sql/README.md")).map((words) =>
      words.filter((word) => /^@effect\/sql-(pg|sqlite-node)@/.test(word))
    )
    expect(drivers).toEqual([["@effect/sql-sqlite-node@~4.1.0"], ["@effect/sql-pg@~4.1.5"]])
  })
})
