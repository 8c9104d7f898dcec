/// <reference path="./tar-fs.d.ts" />
/**
 * Headless Chromium from npm alone: the browser `@sparticuz/chromium` ships compressed in its
 * package, unpacked on first use, driven by `playwright-core` (which downloads nothing).
 */
import chromium from "@sparticuz/chromium"
import { createReadStream, createWriteStream, existsSync, readFileSync } from "node:fs"
import { chmod, mkdtemp, rename, rm } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { pipeline } from "node:stream/promises"
import { createBrotliDecompress } from "node:zlib"
import { type Browser, chromium as playwright, type LaunchOptions } from "playwright-core"
import { extract } from "tar-fs"

/** `@sparticuz/chromium`'s folder: its `bin/` holds the compressed browser. */
const packageDir = dirname(dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium")))
const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { readonly version: string }

/**
 * Unpacks the browser (its binary and the SwiftShader libraries it renders with) into a staging
 * folder, then renames it into place: a folder per version appears whole or not at all, so
 * processes unpacking at once, or one cut off midway, never start half a browser.
 */
const unpack = async (): Promise<string> => {
  const dir = join(tmpdir(), `agentfx-chromium-${version}`)
  const executable = join(dir, "chromium")
  if (existsSync(executable)) return executable
  const staging = await mkdtemp(`${dir}.unpacking-`)
  try {
    const bin = join(packageDir, "bin")
    await Promise.all([
      pipeline(createReadStream(join(bin, "chromium.br")), createBrotliDecompress(), createWriteStream(join(staging, "chromium"), { mode: 0o755 })),
      pipeline(createReadStream(join(bin, "swiftshader.tar.br")), createBrotliDecompress(), extract(staging))
    ])
    await chmod(staging, 0o755) // mkdtemp's 0700 would keep other users out
    // another process may have put its own in place first: that one is as good
    await rename(staging, dir).catch((error: unknown) => {
      if (!existsSync(executable)) throw error
    })
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
  return executable
}

let unpacked: Promise<string> | undefined

/**
 * `@sparticuz/chromium`'s switches, less `--single-process`: made for a serverless function that
 * opens one page, it puts the whole browser in one process, which dies with the first browser
 * context a test closes (every later page: "Target page, context or browser has been closed").
 */
const switches = chromium.args.filter((arg) => arg !== "--single-process")

/**
 * Launches headless Chromium (`@sparticuz/chromium`'s build, with its switches but one process
 * per renderer: contexts can be closed and opened again) through
 * playwright-core. The first launch on a machine unpacks the browser into
 * `<tmpdir>/agentfx-chromium-<version>/` (a few seconds); later ones reuse it. `options` are
 * playwright's, less the executable and headless mode; `args` are added to the package's own.
 * Close the browser when done (`browser.close()`): playwright also kills it if the process exits.
 *
 * @example
 * ```ts
 * import { launchChromium } from "@agentfx/testing/Chromium"
 *
 * const browser = await launchChromium()
 * try {
 *   const page = await browser.newPage()
 *   await page.setContent("<h1>hello</h1>")
 *   console.log(await page.textContent("h1")) // hello
 * } finally {
 *   await browser.close()
 * }
 * ```
 *
 * @since 0.0.0
 * @category constructors
 */
export const launchChromium = async (options: Omit<LaunchOptions, "executablePath" | "headless"> = {}): Promise<Browser> => {
  unpacked ??= unpack()
  unpacked.catch(() => (unpacked = undefined)) // a failed unpack is tried again by the next launch
  return playwright.launch({
    ...options,
    executablePath: await unpacked,
    args: [...switches, ...(options.args ?? [])],
    headless: true
  })
}
