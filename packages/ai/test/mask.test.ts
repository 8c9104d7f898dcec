import { ChatModel } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { maskError, masker, quote } from "../src/internal/mask.js"

describe("masker", () => {
  const mask = masker(["sk-proj-abcdef123456", "k3y", "", "  "])

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

  it("leaves text without credentials as it is", () => {
    const text = "the Chat Completions server at http://127.0.0.1:11434/v1/chat/completions answered HTTP 503: loading model."
    expect(mask(text)).toBe(text)
  })
  it("a short key does not stop the other credentials being masked: its letters inside Bearer, Authorization or api_key are masked after them", () => {
    expect(masker(["a"])("Authorization: Bearer sk-proxy-token; api_key=k-456 at https://u:pw@host/")).toBe(
      "Authoriz***tion: Be***rer ***; ***pi_key=*** ***t https://***@host/"
    )
    expect(masker(["ab,cd"])("Authorization: Bearer ab,cd")).toBe("Authorization: Bearer ***")
  })
  it("a key with whitespace around it (a CRLF .env file) is masked as fetch sends it, trimmed", () => {
    expect(masker(["sk-abc123\r", " k3y "])("Incorrect API key provided: sk-abc123. Also k3y.")).toBe(
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

describe("maskError", () => {
  it("masks, then cuts the message at 1,000 characters: a key across the cut is hidden whole, never in part", () => {
    const key = "sk-proj-abcdef123456"
    const error = new ChatModel.ModelError({ reason: "invalid-request", status: 400, message: `${"x".repeat(990)}${key} and more` })
    const masked = maskError(masker([key]))(error)
    expect([masked.message, masked.reason, masked.status]).toEqual([`${"x".repeat(990)}*** and mo…`, "invalid-request", 400])
    const short = new ChatModel.ModelError({ reason: "other", message: "nothing to hide" })
    expect(maskError(masker([key]))(short)).toBe(short)
  })
})

describe("quote", () => {
  it("cuts between words, before the word the limit falls in: a credential is quoted whole or not at all", () => {
    expect(quote("bad key sk-live-abc, retry", 12)).toBe("bad key …")
    expect(quote("bad key sk-live-abc, retry", 19)).toBe("bad key sk-live-abc…")
    expect(quote(`{"key":"sk-live-abc"}`, 12)).toBe(`{"key":"…`)
    expect(quote("sk-live-abc", 5)).toBe("…")
    expect(quote("short", 5)).toBe("short")
  })
})
