import { describe, expect, it } from "@effect/vitest"
import { Mask } from "../src/index.js"

describe("Mask.make", () => {
  const mask = Mask.make(["sk-proj-abcdef123456", "k3y", "", "  "])

  it("masks every occurrence of each configured secret, however short; a blank one is no secret", () => {
    expect(mask("key sk-proj-abcdef123456 and again sk-proj-abcdef123456.")).toBe("key *** and again ***.")
    expect(mask("the k3y was k3y9")).toBe("the *** was ***9")
    expect(mask("  spaces  stay  ")).toBe("  spaces  stay  ")
  })

  it("masks URL credentials, Bearer/Basic values and credential fields, keeping the punctuation around them", () => {
    expect(mask("POST https://user:p%40ss@proxy.example/v1/chat (refused)")).toBe("POST https://***@proxy.example/v1/chat (refused)")
    expect(mask("Authorization: Bearer abc.def-123, retry")).toBe("Authorization: Bearer ***, retry")
    expect(mask("authorization=Basic dXNlcjpwYXNz.")).toBe("authorization=Basic ***.")
    expect(mask(`{"x-api-key":"k-123","api_key": "k-456"}`)).toBe(`{"x-api-key":"***","api_key": "***"}`)
    expect(mask("x-goog-api-key: AIzaSyA-1; access_token=ya29.a0")).toBe("x-goog-api-key: ***; access_token=***")
  })

  it("the example: a key, a Bearer token and a URL's userinfo", () => {
    expect(Mask.make(["sk-live-123"])("401: key sk-live-123 refused; Authorization: Bearer t0k3n at https://ada:pw@proxy/v1")).toBe(
      "401: key *** refused; Authorization: Bearer *** at https://***@proxy/v1"
    )
  })

  it("leaves text without credentials as it is", () => {
    const text = "the Chat Completions server at http://127.0.0.1:11434/v1/chat/completions answered HTTP 503: loading model."
    expect(mask(text)).toBe(text)
  })
  it("a short key does not stop the other credentials being masked: its letters inside Bearer, Authorization or api_key are masked after them", () => {
    expect(Mask.make(["a"])("Authorization: Bearer sk-proxy-token; api_key=k-456 at https://u:pw@host/")).toBe(
      "Authoriz***tion: Be***rer ***; ***pi_key=*** ***t https://***@host/"
    )
    expect(Mask.make(["ab,cd"])("Authorization: Bearer ab,cd")).toBe("Authorization: Bearer ***")
  })
  it("a key with whitespace around it (a CRLF .env file) is masked as fetch sends it, trimmed", () => {
    expect(Mask.make(["sk-abc123\r", " k3y "])("Incorrect API key provided: sk-abc123. Also k3y.")).toBe(
      "Incorrect API key provided: ***. Also ***."
    )
  })
  it("masks in linear time: a server's 1 MB message of `a-a-a-…` takes well under a second", () => {
    // a URL scheme tried from every word of the run was quadratic: 80 KB took 3.9 s
    const text = "a-".repeat(500_000)
    const started = performance.now()
    expect(mask(text)).toBe(text)
    expect(performance.now() - started).toBeLessThan(1_000)
  })
})

describe("Mask.quote", () => {
  it("cuts between words, before the word the limit falls in: a credential is quoted whole or not at all", () => {
    expect(Mask.quote("bad key sk-live-abc, retry", 12)).toBe("bad key …")
    expect(Mask.quote("bad key sk-live-abc, retry", 19)).toBe("bad key sk-live-abc…")
    expect(Mask.quote(`{"key":"sk-live-abc"}`, 12)).toBe(`{"key":"…`)
    expect(Mask.quote("sk-live-abc", 5)).toBe("…")
    expect(Mask.quote("short", 5)).toBe("short")
  })
})
