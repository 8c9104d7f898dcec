#!/usr/bin/env node
/**
 * `pnpm pack:all [directory]`: builds an installable tarball of every published package
 * (`pnpm pack`: its `prepack` builds it, `workspace:` ranges become versions) into `directory`
 * (default `packs/`), then prints where each is — what to install until the packages are on the
 * npm registry (README, "Install"). CI's consumer test packs them so too.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
export const published = ["core", "ai", "mcp", "sql", "cluster", "inbox", "ui-stream"]

const destination = resolve(process.argv[2] ?? join(root, "packs"))
mkdirSync(destination, { recursive: true })
const tarballs = published.map((name) => {
  const dir = join(root, "packages", name)
  const { version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
  execFileSync("pnpm", ["--dir", dir, "pack", "--pack-destination", destination], { stdio: ["ignore", "ignore", "inherit"] })
  const tarball = `agentfx-${name}-${version}.tgz`
  if (!readdirSync(destination).includes(tarball)) throw new Error(`pnpm pack wrote no ${tarball} into ${destination}`)
  return join(destination, tarball)
})
process.stdout.write(
  `${tarballs.length} tarballs in ${destination}. Install what you use with README.md's Install lines, each @agentfx package named by its tarball:\n\n`
)
for (const [i, name] of published.entries()) process.stdout.write(`  @agentfx/${name.padEnd(10)} ${tarballs[i]}\n`)
