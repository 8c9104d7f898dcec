/**
 * The rule the inbox and the chat endpoint admit by default: this machine's own user only.
 */
import { describe, expect, it } from "@effect/vitest"
import { Loopback } from "../src/index.js"

const local = { host: "127.0.0.1:4100" }

describe("Loopback.refusal", () => {
  it("admits a loopback peer that names a loopback host, with or without its own origin", () => {
    for (const address of ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"]) {
      expect(Loopback.refusal({ remoteAddress: address, headers: local })).toBeUndefined()
    }
    for (const host of ["localhost", "localhost:80", "[::1]:4100", "127.0.0.1"]) {
      expect(Loopback.refusal({ remoteAddress: "127.0.0.1", headers: { host, origin: `http://${host}` } })).toBeUndefined()
    }
  })

  it("refuses a peer on another machine, or an unknown one", () => {
    expect(Loopback.refusal({ remoteAddress: "10.0.0.7", headers: local })).toEqual({ _tag: "NotLoopback", address: "10.0.0.7" })
    expect(Loopback.refusal({ remoteAddress: "::ffff:10.0.0.7", headers: local })).toEqual({ _tag: "NotLoopback", address: "::ffff:10.0.0.7" })
    expect(Loopback.refusal({ remoteAddress: "1127.0.0.1", headers: local })).toEqual({ _tag: "NotLoopback", address: "1127.0.0.1" })
    expect(Loopback.refusal({ remoteAddress: undefined, headers: local })).toEqual({ _tag: "NotLoopback", address: undefined })
  })

  it("refuses what came through a proxy, which makes every client look local", () => {
    expect(Loopback.refusal({ remoteAddress: "127.0.0.1", headers: { ...local, forwarded: "for=10.0.0.7" } })).toEqual({ _tag: "Proxied" })
    expect(Loopback.refusal({ remoteAddress: "127.0.0.1", headers: { ...local, "x-forwarded-for": "10.0.0.7" } })).toEqual({ _tag: "Proxied" })
  })

  it("refuses a Host that is not a loopback name (DNS rebinding), or none", () => {
    for (const host of ["evil.example:4100", "localhost.evil.example", "127.0.0.1.evil.example", "[::2]:4100"]) {
      expect(Loopback.refusal({ remoteAddress: "127.0.0.1", headers: { host } })).toEqual({ _tag: "ForeignHost", host })
    }
    expect(Loopback.refusal({ remoteAddress: "127.0.0.1", headers: {} })).toEqual({ _tag: "ForeignHost", host: "" })
  })

  it("refuses a page of another origin, another local port included", () => {
    for (const origin of ["http://evil.example", "http://127.0.0.1:5173", "null", "https://127.0.0.1:4100"]) {
      expect(Loopback.refusal({ remoteAddress: "127.0.0.1", headers: { ...local, origin } })).toEqual({ _tag: "ForeignOrigin", origin })
    }
  })
})
