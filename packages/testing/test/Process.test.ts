/**
 * spawn: the child is node itself (a SIGKILL ends the process that runs the script, not a
 * wrapper), its JSON lines are messages and the rest log, and it is killed with the scope.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Scope } from "effect"
import { fileURLToPath } from "node:url"
import { spawn } from "../src/Process.js"

const child = fileURLToPath(new URL("./fixtures/child.ts", import.meta.url))

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("spawn", () => {
  it.live("messages, log, stdin; SIGKILL ends the process that runs the script", () =>
    Effect.gen(function*() {
      const c = yield* spawn(child)
      const ready = yield* c.waitFor("ready", (m) => (m as { ready?: number }).ready)
      expect(ready).toBe(c.pid)
      yield* c.send("hello")
      expect(yield* c.waitFor("echo", (m) => (m as { echo?: string }).echo)).toBe("hello")
      expect(c.log()).toContain("starting (a log line)")
      expect(c.messages()).toEqual([{ ready: c.pid }, { echo: "hello" }])
      expect(yield* c.kill()).toBe(null)
      expect(alive(ready)).toBe(false)
    }).pipe(Effect.scoped), 30_000)

  it.live("SIGTERM: the child's own handler runs; its exit code is returned", () =>
    Effect.gen(function*() {
      const c = yield* spawn(child)
      yield* c.waitFor("ready", (m) => (m as { ready?: number }).ready)
      expect(yield* c.kill("SIGTERM")).toBe(3)
      expect(c.messages()).toContainEqual({ stopping: true })
    }).pipe(Effect.scoped), 30_000)

  it.live("waitFor fails naming what it waited for when the child exits first, or in time", () =>
    Effect.gen(function*() {
      const c = yield* spawn(child)
      const late = yield* Effect.flip(c.waitFor("a goodbye", (m) => (m as { bye?: true }).bye, 300))
      expect(late.message).toMatch(/^no a goodbye from process \d+ in 300 ms/)
      yield* c.kill()
      const gone = yield* Effect.flip(c.waitFor("a goodbye", (m) => (m as { bye?: true }).bye))
      expect(gone.message).toMatch(/exited \(null\) before a goodbye/)
    }).pipe(Effect.scoped), 30_000)

  it.live("signal: SIGSTOP freezes the child (it answers nothing), SIGCONT wakes it; a frozen child is killed with its scope; an exited one cannot be signalled", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const c = yield* Scope.provide(spawn(child), scope)
      yield* c.waitFor("ready", (m) => (m as { ready?: number }).ready)
      yield* c.signal("SIGSTOP")
      yield* c.send("frozen")
      expect((yield* Effect.flip(c.waitFor("echo", (m) => (m as { echo?: string }).echo, 500))).message).toMatch(/^no echo from process/)
      yield* c.signal("SIGCONT")
      expect(yield* c.waitFor("echo", (m) => (m as { echo?: string }).echo)).toBe("frozen")
      yield* c.signal("SIGSTOP")
      yield* Scope.close(scope, Exit.void)
      expect(alive(c.pid)).toBe(false)
      const exit = yield* Effect.exit(c.signal("SIGCONT"))
      expect(Exit.isFailure(exit) && Cause.pretty(exit.cause)).toMatch(/could not send SIGCONT to process \d+: it has exited/)
    }), 30_000)

  it.live("closing the scope kills the child", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const c = yield* Scope.provide(spawn(child), scope)
      yield* c.waitFor("ready", (m) => (m as { ready?: number }).ready)
      yield* Scope.close(scope, Exit.void)
      expect(alive(c.pid)).toBe(false)
    }), 30_000)
})
