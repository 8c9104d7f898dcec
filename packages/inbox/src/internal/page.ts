/**
 * The page and its assets, read once from the package's `static/` folder: plain HTML, CSS and
 * JavaScript modules, served as they are (no build step), with the modules of
 * `@cfworker/json-schema` as published (`/inbox/assets/json-schema/…`: the page's import map
 * names them). Served with a content security policy that admits nothing but the inbox's own
 * files and the page's import map. A `?token=` link sets the token cookie only when the
 * authorization hook admits the token.
 */
import { Effect } from "effect"
import { Headers, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiError } from "effect/http-api"
import { createHash } from "node:crypto"
import { readdir, readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import type { Authorize } from "../Authorization.js"
import { tokenCookie } from "../Authorization.js"
import { Api } from "../InboxApi.js"

const javascript = "text/javascript; charset=utf-8"

const types = {
  "inbox.js": javascript,
  "check.js": javascript,
  "diff.js": javascript,
  "paths.js": javascript,
  "inbox.css": "text/css; charset=utf-8",
  "icon.svg": "image/svg+xml"
} as const

/**
 * The headers of the page and its assets; the policy admits the page's import map by its hash
 * (an inline script), and images inline (`data:`: a conversation's images), never from elsewhere.
 */
const headersFor = (page: string) => {
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(page)?.[1] ?? ""
  const hash = createHash("sha256").update(importMap).digest("base64")
  return {
    "content-security-policy": `default-src 'self'; script-src 'self' 'sha256-${hash}'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache"
  }
}

const read = (file: string) => Effect.promise(() => readFile(new URL(`../../static/${file}`, import.meta.url), "utf8"))

/** The ES modules of `@cfworker/json-schema`, by file name, as its package publishes them. */
const jsonSchemaModules = Effect.promise(async () => {
  const folder = new URL("dist/esm/", pathToFileURL(createRequire(import.meta.url).resolve("@cfworker/json-schema/package.json")))
  const files = (await readdir(folder)).filter((file) => file.endsWith(".js"))
  return new Map(await Promise.all(files.map(async (file) => [file, await readFile(new URL(file, folder), "utf8")] as const)))
})

/** Whether `authorize` admits the request when it presents `token` (as `Authorization: Bearer`): its refusal if not. */
const admitted = (authorize: Authorize, token: string) =>
  HttpServerRequest.HttpServerRequest.use((request) =>
    authorize(request.modify({ headers: Headers.set(request.headers, "authorization", `Bearer ${token}`) })))

/** The handlers of the page group; a `?token=` link is checked with `authorize`. */
export const layer = (authorize: Authorize) => HttpApiBuilder.group(Api, "inboxPage", (handlers) =>
  Effect.gen(function*() {
    const page = yield* read("index.html")
    const headers = headersFor(page)
    const assets = new Map<string, { readonly body: string; readonly contentType: string }>()
    for (const [file, contentType] of Object.entries(types)) assets.set(file, { body: yield* read(file), contentType })
    const library = yield* jsonSchemaModules
    return handlers
      .handle("page", ({ query }) =>
        query.token === undefined
          ? Effect.succeed(HttpServerResponse.text(page, { contentType: "text/html; charset=utf-8", headers }))
          : // the token moves from the address (history, logs) to a cookie the page's requests carry
            Effect.andThen(
              admitted(authorize, query.token),
              HttpServerResponse.redirect("/inbox", { status: 303, headers }).pipe(
                HttpServerResponse.setCookie(tokenCookie, query.token, { httpOnly: true, sameSite: "strict", path: "/inbox" }),
                Effect.orDie
              )
            ))
      .handle("asset", ({ params }) => {
        const asset = assets.get(params.file)
        return asset === undefined
          ? Effect.fail(new HttpApiError.NotFound())
          : Effect.succeed(HttpServerResponse.text(asset.body, { contentType: asset.contentType, headers }))
      })
      .handle("jsonSchema", ({ params }) => {
        const module = library.get(params.file)
        return module === undefined
          ? Effect.fail(new HttpApiError.NotFound())
          : Effect.succeed(HttpServerResponse.text(module, { contentType: javascript, headers }))
      })
  }))
