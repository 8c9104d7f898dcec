/**
 * What the browser tests share: a page's script, bundled with esbuild for the browser, and the
 * page (its HTML at `/`, its script beside it) served beside an endpoint's routes on one server
 * on 127.0.0.1, over fresh in-memory stores.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { build } from "esbuild"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"
import { start } from "./fixtures.js"

/**
 * The page's script, `entry` (a path beside this file) and what it imports, as one ES module;
 * `alias` puts one package in another's place wherever it is imported (`{ ai: "ai6" }`: the page
 * on `ai` 6, installed under that name), resolved from this package.
 */
export const bundle = async (entry: string, alias?: Record<string, string>): Promise<string> => {
  const bundled = await build({
    entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
    ...(alias === undefined ? {} : { alias, absWorkingDir: fileURLToPath(new URL("..", import.meta.url)) }),
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": "\"production\"" },
    logLevel: "silent"
  })
  return bundled.outputFiles[0]!.text
}

export interface Page {
  readonly html: string
  /** The script's path, as the HTML names it (`/app.js`). */
  readonly path: `/${string}`
  readonly script: string
}

/** The page and `routes` (an endpoint's) on one server, with `model`; `close()` stops it. */
export const servePage = (routes: Layer.Layer<never, never, any>, page: Page, model: Layer.Layer<any>) =>
  start((stores) => {
    const pageRoutes = Layer.mergeAll(
      HttpRouter.add("GET", "/", HttpServerResponse.html(page.html)),
      HttpRouter.add("GET", page.path, HttpServerResponse.text(page.script, { contentType: "text/javascript" }))
    )
    return HttpRouter.serve(Layer.mergeAll(routes, pageRoutes), { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provide(model),
      Layer.provide(stores)
    )
  })
