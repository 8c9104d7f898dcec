/**
 * Who may use the inbox: the default hook (loopback clients, or a token) on the hook itself
 * and through a real server; a hook of one's own, whose name is recorded with the claim.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted, Result } from "effect"
import { HttpServerRequest } from "effect/http"
import * as Http from "node:http"
import { Authorization, DecisionLog } from "../src/index.js"
import { bank, decide, events, request, serve } from "./fixtures.js"

const requestFrom = (headers: Record<string, string>, remoteAddress = "127.0.0.1") =>
  HttpServerRequest.fromWeb(new Request("http://127.0.0.1:4180/inbox/api/runs", { headers })).modify({ remoteAddress: Option.some(remoteAddress) })

const judge = (authorize: Authorization.Authorize, headers: Record<string, string>, remoteAddress?: string) =>
  Effect.runSync(Effect.result(authorize(requestFrom(headers, remoteAddress))))

/** A GET with exactly these headers (fetch would not send `Host` as given). */
const rawGet = (origin: string, path: string, headers: Record<string, string>) =>
  Effect.callback<{ status: number; body: any }>((resume) => {
    const url = new URL(origin)
    const req = Http.request({ host: url.hostname, port: url.port, path, headers, setHost: headers.host === undefined }, (res) => {
      let body = ""
      res.on("data", (chunk) => (body += chunk))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body: JSON.parse(body) })))
    })
    req.end()
  })

describe("Authorization.loopbackOrToken, without a token", () => {
  const authorize = Authorization.loopbackOrToken()

  it("admits loopback clients (IPv4, IPv6, IPv4-mapped) by the name they give, else as \"local\"", () => {
    expect(judge(authorize, { host: "127.0.0.1:4180" })).toEqual(Result.succeed("local"))
    expect(judge(authorize, { host: "localhost:4180", "x-agentfx-reviewer": "Ada" }, "::1")).toEqual(Result.succeed("Ada"))
    expect(judge(authorize, { host: "[::1]:4180" }, "::ffff:127.0.0.1")).toEqual(Result.succeed("local"))
  })

  it("refuses a client on another machine (403)", () => {
    const refused = judge(authorize, { host: "192.168.1.20:4180" }, "192.168.1.7")
    expect(Result.isFailure(refused) && refused.failure).toEqual(new Authorization.Forbidden({
      message: "The inbox admits clients on this machine only (this one is 192.168.1.7); configure a token to open it to others"
    }))
  })

  it("refuses what came through a proxy, a Host that is not a loopback name (DNS rebinding), another origin", () => {
    const messages = [
      judge(authorize, { host: "127.0.0.1:4180", "x-forwarded-for": "203.0.113.9" }),
      judge(authorize, { host: "127.0.0.1:4180", forwarded: "for=203.0.113.9" }),
      judge(authorize, { host: "evil.example:4180" }),
      judge(authorize, { host: "127.0.0.1:4180", origin: "http://evil.example" })
    ].map((r) => Result.isFailure(r) ? `${r.failure._tag}: ${r.failure.message}` : "admitted")
    expect(messages).toEqual([
      "Forbidden: The request came through a proxy (Forwarded / X-Forwarded-For): configure a token to admit it",
      "Forbidden: The request came through a proxy (Forwarded / X-Forwarded-For): configure a token to admit it",
      `Forbidden: Host "evil.example:4180" is not a loopback name: open the inbox at 127.0.0.1 or localhost, or configure a token`,
      "Forbidden: A request from another origin (http://evil.example) cannot use the inbox"
    ])
    expect(judge(authorize, { host: "127.0.0.1:4180", origin: "http://127.0.0.1:4180" })).toEqual(Result.succeed("local"))
  })

  it("the name: URI-decoded, control characters dropped, at most 64 characters; an undecodable one is no name", () => {
    expect(judge(authorize, { host: "127.0.0.1", "x-agentfx-reviewer": encodeURIComponent("Zoë\u0007 Ödegaard ") })).toEqual(Result.succeed("Zoë Ödegaard"))
    expect(judge(authorize, { host: "127.0.0.1", "x-agentfx-reviewer": "x".repeat(100) })).toEqual(Result.succeed("x".repeat(64)))
    expect(judge(authorize, { host: "127.0.0.1", "x-agentfx-reviewer": "%E0%A4%A" })).toEqual(Result.succeed("local"))
  })

  it("a name is cut at 64 characters, not inside one: an emoji at the cut is kept whole", () => {
    const named = judge(authorize, { host: "127.0.0.1", "x-agentfx-reviewer": encodeURIComponent(`${"a".repeat(63)}😀b`) })
    expect(named).toEqual(Result.succeed(`${"a".repeat(63)}😀`))
  })
})

describe("Authorization.loopbackOrToken, with a token", () => {
  const authorize = Authorization.loopbackOrToken({ token: Redacted.make("s3cret-token") })

  it("admits any client that presents it, as a bearer token or the cookie; else 401", () => {
    expect(judge(authorize, { authorization: "Bearer s3cret-token" }, "192.168.1.7")).toEqual(Result.succeed("token holder"))
    expect(judge(authorize, { cookie: "agentfx-inbox-token=s3cret-token", "x-agentfx-reviewer": "Ada" }, "192.168.1.7")).toEqual(Result.succeed("Ada"))
    const messages = [
      judge(authorize, {}, "127.0.0.1"),
      judge(authorize, { authorization: "Bearer s3cret-tokem" }),
      judge(authorize, { cookie: "agentfx-inbox-token=s3cret" })
    ].map((r) => Result.isFailure(r) ? `${r.failure._tag}: ${r.failure.message}` : "admitted")
    expect(messages).toEqual([
      "Unauthorized: A token is required: send Authorization: Bearer <token>, or open the inbox with its ?token= link once",
      "Unauthorized: The token is not valid",
      "Unauthorized: The token is not valid"
    ])
  })

  it("an Origin, when sent, must be the request's own (host and port of Host, http or https): a sibling port is refused (403), with the token or without", () => {
    const token = { authorization: "Bearer s3cret-token" }
    const judged = [
      judge(authorize, { ...token, host: "localhost:4180", origin: "http://localhost:4180" }),
      judge(authorize, { ...token, host: "inbox.example.com", origin: "https://inbox.example.com" }, "10.0.0.2"),
      judge(authorize, { ...token, host: "localhost:4180", origin: "http://localhost:3000" }),
      judge(authorize, { cookie: "agentfx-inbox-token=s3cret-token", host: "localhost:4180", origin: "http://localhost:3000" }),
      judge(authorize, { ...token, host: "localhost:4180", origin: "null" }),
      judge(authorize, { ...token, host: "localhost:4180", origin: "ftp://localhost:4180" }),
      judge(authorize, { host: "inbox.example.com", origin: "https://evil.example" }, "10.0.0.2")
    ].map((r) => Result.isFailure(r) ? `${r.failure._tag}: ${r.failure.message}` : `admitted as ${r.success}`)
    expect(judged).toEqual([
      "admitted as token holder",
      "admitted as token holder",
      "Forbidden: A request from another origin (http://localhost:3000) cannot use the inbox",
      "Forbidden: A request from another origin (http://localhost:3000) cannot use the inbox",
      "Forbidden: A request from another origin (null) cannot use the inbox",
      "Forbidden: A request from another origin (ftp://localhost:4180) cannot use the inbox",
      "Forbidden: A request from another origin (https://evil.example) cannot use the inbox"
    ])
  })
})

describe("Authorization.loopbackOrToken, with a token that cannot guard anything", () => {
  it("refuses, when made, a token that is empty or holds whitespace or control characters (an empty one admitted an empty cookie; one with a space could not be sent as a bearer)", () => {
    const problems = ["", "   ", "my secret", "tab\tbed", "bell\u0007"].map((token) => {
      try {
        Authorization.loopbackOrToken({ token: Redacted.make(token) })
        return "accepted"
      } catch (error) {
        return error instanceof Authorization.InvalidToken ? error.message : `unexpected: ${String(error)}`
      }
    })
    expect(problems).toEqual([
      "Invalid inbox token: it is empty",
      "Invalid inbox token: it holds whitespace or control characters, which Authorization: Bearer cannot carry",
      "Invalid inbox token: it holds whitespace or control characters, which Authorization: Bearer cannot carry",
      "Invalid inbox token: it holds whitespace or control characters, which Authorization: Bearer cannot carry",
      "Invalid inbox token: it holds whitespace or control characters, which Authorization: Bearer cannot carry"
    ])
  })
})

describe("authorization through the server", () => {
  it.live("the default refuses a rebinding Host, a proxied request and another origin with 403 JSON; admits 127.0.0.1", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const inbox = yield* serve([agent])
      const port = new URL(inbox.origin).port
      const ok = yield* rawGet(inbox.origin, "/inbox/api/runs", { host: `127.0.0.1:${port}` })
      expect([ok.status, ok.body]).toEqual([200, []])
      const rebinding = yield* rawGet(inbox.origin, "/inbox/api/runs", { host: `evil.example:${port}` })
      expect([rebinding.status, rebinding.body._tag]).toEqual([403, "Forbidden"])
      const proxied = yield* rawGet(inbox.origin, "/inbox/api/runs", { host: `127.0.0.1:${port}`, "x-forwarded-for": "203.0.113.9" })
      expect([proxied.status, proxied.body._tag]).toEqual([403, "Forbidden"])
      const crossSite = yield* rawGet(inbox.origin, "/inbox/api/runs", { host: `127.0.0.1:${port}`, origin: "http://evil.example" })
      expect([crossSite.status, crossSite.body]).toEqual([403, { _tag: "Forbidden", message: "A request from another origin (http://evil.example) cannot use the inbox" }])
    }))

  it.live("with a token: 401 without it; a ?token= link with a wrong token is a 401 and sets nothing; the right one sets the cookie (HttpOnly, SameSite=Strict) and the cookie admits, but not from another origin", () =>
    Effect.gen(function*() {
      const { agent } = bank()
      const inbox = yield* serve([agent], { authorize: Authorization.loopbackOrToken({ token: Redacted.make("s3cret-token") }) })
      const runId = yield* inbox.pause(agent, "pay Ada 250")
      const without = yield* request(`${inbox.origin}/inbox/api/runs`)
      expect([without.status, without.body._tag]).toEqual([401, "Unauthorized"])
      const wrong = yield* request(`${inbox.origin}/inbox?token=s3cret-tokem`)
      expect([wrong.status, wrong.body, wrong.headers.get("set-cookie")]).toEqual([401, { _tag: "Unauthorized", message: "The token is not valid" }, null])
      const link = yield* request(`${inbox.origin}/inbox?token=s3cret-token`)
      expect([link.status, link.headers.get("location")]).toEqual([303, "/inbox"])
      expect(link.headers.get("set-cookie")).toBe("agentfx-inbox-token=s3cret-token; Path=/inbox; HttpOnly; SameSite=Strict")
      const cookie = { cookie: "agentfx-inbox-token=s3cret-token" }
      const listed = yield* request(`${inbox.origin}/inbox/api/runs`, { headers: cookie })
      expect(listed.body.map((r: any) => r.runId)).toEqual([runId])
      const tokenless = yield* decide(inbox.origin, runId, { _tag: "RejectAll" })
      expect([tokenless.status, tokenless.body._tag]).toEqual([401, "Unauthorized"])
      // a page on another port of this host: same-site, so the browser sends the cookie; its Origin gives it away
      const sibling = yield* request(`${inbox.origin}/inbox/api/runs/${runId}/decision`, {
        method: "POST",
        headers: { ...cookie, origin: "http://127.0.0.1:1", "content-type": "application/json" },
        body: JSON.stringify({ _tag: "ApproveAll" })
      })
      expect([sibling.status, sibling.body]).toEqual([403, { _tag: "Forbidden", message: "A request from another origin (http://127.0.0.1:1) cannot use the inbox" }])
      const posted = yield* request(`${inbox.origin}/inbox/api/runs/${runId}/decision`, {
        method: "POST",
        headers: { authorization: "Bearer s3cret-token", origin: inbox.origin, "content-type": "application/json" },
        body: JSON.stringify({ _tag: "RejectAll", message: "not today" })
      })
      expect([posted.status, posted.body.decidedBy]).toEqual([202, "token holder"])
      const stream = yield* events(`${inbox.origin}${posted.body.events}`, { headers: cookie })
      expect(stream.events.at(-1)!.data._tag).toBe("RunCompleted")
    }))

  it.live("a hook of one's own: its refusal is the answer; its name is who decided, in the store's record and the decision log", () =>
    Effect.gen(function*() {
      const { agent, executed } = bank()
      const authorize: Authorization.Authorize = (req) => {
        const user = req.headers["x-user"]
        if (user === undefined) return Effect.fail(new Authorization.Unauthorized({ message: "sign in first" }))
        if (user !== "ada") return Effect.fail(new Authorization.Forbidden({ message: `${user} may not approve transfers` }))
        return Effect.succeed("ada@example.com")
      }
      const inbox = yield* serve([agent], { authorize })
      const runId = yield* inbox.pause(agent, "pay Ada 250")
      const anonymous = yield* request(`${inbox.origin}/inbox/api/runs`)
      expect([anonymous.status, anonymous.body]).toEqual([401, { _tag: "Unauthorized", message: "sign in first" }])
      const mallory = yield* request(`${inbox.origin}/inbox/api/runs/${runId}/decision`, {
        method: "POST",
        headers: { "x-user": "mallory", "content-type": "application/json" },
        body: JSON.stringify({ _tag: "ApproveAll" })
      })
      expect([mallory.status, mallory.body]).toEqual([403, { _tag: "Forbidden", message: "mallory may not approve transfers" }])
      expect(executed).toEqual([])
      const ada = yield* request(`${inbox.origin}/inbox/api/runs/${runId}/decision`, {
        method: "POST",
        headers: { "x-user": "ada", "content-type": "application/json", "x-agentfx-reviewer": "someone else" },
        body: JSON.stringify({ _tag: "ApproveAll" })
      })
      expect([ada.status, ada.body.decidedBy]).toEqual([202, "ada@example.com"])
      yield* events(`${inbox.origin}${ada.body.events}`, { headers: { "x-user": "ada" } })
      expect(executed).toEqual(["t1 Ada 250"])
      expect(yield* inbox.store.finished(runId)).toEqual(Option.some({ status: "completed", decidedBy: "ada@example.com", decidedAt: ada.body.decidedAt }))
      const logged = yield* DecisionLog.DecisionLog.use((log) => log.latest(runId))
      expect(logged).toEqual(Option.some({ runId, agent: "bank", decidedBy: "ada@example.com", decidedAt: ada.body.decidedAt, decision: { _tag: "ApproveAll" } }))
    }))
})
