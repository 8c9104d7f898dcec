/**
 * Each driver is optional: `@agentfx/sql` itself imports neither, and each driver's entry point
 * imports only its own — so a user installs the one driver they use.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const drivers = ["@effect/sql-pg", "@effect/sql-sqlite-node"]

/** The packages a module loads at run time, through the relative imports it loads (type-only imports load nothing). */
const packagesLoadedBy = (entry: string): Array<string> => {
  const seen = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const source = readFileSync(file, "utf8")
    for (const [, specifier] of source.matchAll(/^(?:import|export) (?!type )[\w\s{},*]+? from "([^"]+)"/gm)) {
      if (specifier!.startsWith(".")) visit(resolve(dirname(file), specifier!.replace(/\.js$/, ".ts")))
      else packages.add(specifier!.split("/").slice(0, specifier!.startsWith("@") ? 2 : 1).join("/"))
    }
  }
  visit(join(root, "src", entry))
  return [...packages].filter((p) => drivers.includes(p)).sort()
}

describe("the drivers", () => {
  it("@agentfx/sql loads no driver; @agentfx/sql/SqliteStore and /PgStore load only their own", () => {
    expect(packagesLoadedBy("index.ts")).toEqual([])
    expect(packagesLoadedBy("SqliteStore.ts")).toEqual(["@effect/sql-sqlite-node"])
    expect(packagesLoadedBy("PgStore.ts")).toEqual(["@effect/sql-pg"])
  })

  it("both drivers are optional peer dependencies", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
    expect(drivers.map((d) => [manifest.peerDependencies[d], manifest.peerDependenciesMeta[d]])).toEqual([
      ["~4.1.5", { optional: true }],
      ["~4.1.0", { optional: true }]
    ])
  })
})
