/**
 * The page and its assets, read once from the package's `static/` folder: plain HTML, CSS and
 * JavaScript modules, served as they are (no build step). Served with a content security
 * policy that admits nothing but the inbox's own files. A `?token=` link sets the token
 * cookie only when the authorization hook admits the token.
 */
import { Headers, HttpApiBuilder, HttpApiError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { readFile } from "node:fs/promises"
import type { Authorize } from "../Authorization.js"
import { tokenCookie } from "../Authorization.js"
import { Api } from "../InboxApi.js"

const types = {
  "inbox.js": "text/javascript; charset=utf-8",
  "validate.js": "text/javascript; charset=utf-8",
  "inbox.css": "text/css; charset=utf-8",
  "icon.svg": "image/svg+xml"
} as const

const headers = {
  "content-security-policy": "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache"
}

const read = (file: string) => Effect.promise(() => readFile(new URL(`../../static/${file}`, import.meta.url), "utf8"))

/** Whether `authorize` admits the request when it presents `token` (as `Authorization: Bearer`): its refusal if not. */
const admitted = (authorize: Authorize, token: string) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    authorize(request.modify({ headers: Headers.set(request.headers, "authorization", `Bearer ${token}`) })))

/** The handlers of the page group; a `?token=` link is checked with `authorize`. */
export const layer = (authorize: Authorize) => HttpApiBuilder.group(Api, "inboxPage", (handlers) =>
  Effect.gen(function*() {
    const page = yield* read("index.html")
    const assets = new Map<string, { readonly body: string; readonly contentType: string }>()
    for (const [file, contentType] of Object.entries(types)) assets.set(file, { body: yield* read(file), contentType })
    return handlers
      .handle("page", ({ urlParams }) =>
        urlParams.token === undefined
          ? Effect.succeed(HttpServerResponse.text(page, { contentType: "text/html; charset=utf-8", headers }))
          : // the token moves from the address (history, logs) to a cookie the page's requests carry
            Effect.zipRight(
              admitted(authorize, urlParams.token),
              HttpServerResponse.redirect("/inbox", { status: 303, headers }).pipe(
                HttpServerResponse.setCookie(tokenCookie, urlParams.token, { httpOnly: true, sameSite: "strict", path: "/inbox" }),
                Effect.orDie
              )
            ))
      .handle("asset", ({ path }) => {
        const asset = assets.get(path.file)
        return asset === undefined
          ? Effect.fail(new HttpApiError.NotFound())
          : Effect.succeed(HttpServerResponse.text(asset.body, { contentType: asset.contentType, headers }))
      })
  }))
