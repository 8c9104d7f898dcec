/**
 * The `npm i` lines users copy — README.md's Install section and each published package's
 * README — name every package as a new user types it, without a version: npm installs its
 * `latest` (issue 33). What keeps an install on Effect's minor is the packages' peer ranges
 * (`effect ~4.1.5`: the modules agentfx uses are unstable in Effect 4): each must admit the
 * version the workspace builds and tests with — npm's `latest` when it was pinned; should
 * `latest` move to a minor out of range, npm refuses the install naming the range, and the
 * consumer test (`.ci/consumer/run.sh`, which runs README.md's lines) fails until the workspace
 * moves. A package's README installs every peer it requires.
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

/** `version` is in `range`: the version itself, a prefix of it (`5`, `4.1`), `~x.y.z` (x.y, patch z or later), `^x.y.z` (x, x.y.z or later), or one of `a || b`. */
const inRange = (version: string, range: string): boolean => {
  if (range.includes("||")) return range.split("||").some((one) => inRange(version, one.trim()))
  const [vMajor, vMinor, vPatch] = version.split(".").map(Number)
  if (range.startsWith("~") || range.startsWith("^")) {
    const [major, minor, patch = 0] = range.slice(1).split(".").map(Number)
    if (range.startsWith("~")) return vMajor === major && vMinor === minor && vPatch! >= patch
    return vMajor === major && (vMinor! > minor! || (vMinor === minor && vPatch! >= patch))
  }
  return version === range || version.startsWith(`${range}.`)
}

/** The words of a line that name a version (`name@range`): a new user types none; agentfx's own packages are never pinned either. */
const pinned = (words: ReadonlyArray<string>) => words.filter((word) => word.lastIndexOf("@") > 0)

/** A published package's peer ranges that do not admit the version the workspace tests with. */
const peersOutOfLine = (pkg: string) => {
  const { peerDependencies = {} } = JSON.parse(read(`packages/${pkg}/package.json`))
  return Object.entries(peerDependencies as Record<string, string>)
    .filter(([name, range]) => !name.startsWith("@agentfx/") && workspace.has(name) && !inRange(workspace.get(name)!, range))
}

describe("install lines", () => {
  it("README.md's Install section names every package without a version, @agentfx/sql and @agentfx/inbox included", () => {
    const lines = installLines(readmeInstall)
    expect(lines.map(pinned)).toEqual(lines.map(() => []))
    expect(published.filter((p) => !lines.some((words) => words.includes(`@agentfx/${p}`)))).toEqual([])
  })

  it("each package's README names its packages without a version and installs every peer it requires; the SQL driver lines one driver each", () => {
    for (const pkg of published) {
      const lines = installLines(read(`packages/${pkg}/README.md`))
      const { peerDependencies = {}, peerDependenciesMeta = {} } = JSON.parse(read(`packages/${pkg}/package.json`))
      const required = Object.keys(peerDependencies).filter((name) => peerDependenciesMeta[name]?.optional !== true)
      expect([pkg, lines.length > 0, lines.map(pinned)]).toEqual([pkg, true, lines.map(() => [])])
      for (const words of lines) expect([pkg, required.filter((name) => !words.includes(name))]).toEqual([pkg, []])
    }
    const drivers = installLines(read("packages/sql/README.md")).map((words) => words.filter((word) => /^@effect\/sql-(pg|sqlite-node)$/.test(word)))
    expect(drivers).toEqual([["@effect/sql-sqlite-node"], ["@effect/sql-pg"]])
  })

  it("every published package's peer ranges admit the versions the workspace builds and tests with (Effect's to its minor)", () => {
    expect(published.flatMap((pkg) => peersOutOfLine(pkg).map(([name, range]) => `${pkg}: ${name} ${range}`))).toEqual([])
    for (const pkg of published) {
      const { peerDependencies = {} } = JSON.parse(read(`packages/${pkg}/package.json`))
      for (const [name, range] of Object.entries(peerDependencies as Record<string, string>)) {
        if (name === "effect" || name.startsWith("@effect/")) expect([pkg, name, range.startsWith("~")]).toEqual([pkg, name, true])
      }
    }
  })
})
