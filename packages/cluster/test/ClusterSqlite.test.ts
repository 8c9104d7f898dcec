/**
 * The embedded cluster, in real time (the engine polls its file): a run started, paused,
 * decided and completed through the entity; one runner per file.
 */
import { Decision } from "@agentfx/core"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Schedule, Scope } from "effect"
import * as SqliteStore from "@agentfx/sql/SqliteStore"
import { spawn as spawnChild } from "@agentfx/testing/Process"
import { spawn } from "node:child_process"
import { existsSync, linkSync, mkdirSync, realpathSync, renameSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { dirname, join, relative } from "node:path"
import * as ClusterSqlite from "../src/ClusterSqlite.js"
import { AgentCluster } from "../src/index.js"
import { Bank, bankRunnerOn, executions, gate, tempDir } from "./fixtures.js"


/** Waits (polling) until `check` holds. */
const until = (check: () => boolean) =>
  Effect.retry(Effect.suspend(() => check() ? Effect.void : Effect.fail("not yet")), Schedule.spaced("20 millis").pipe(Schedule.upTo({ duration: "10 seconds" })))

describe("ClusterSqlite", () => {
  it.live("a run pauses for approval, is decided through its entity and completes; each call ran once", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const outcome = yield* Effect.gen(function*() {
        const paused = yield* AgentCluster.run(Bank, { input: "pay 1", conversationId: "c-1" })
        expect(paused._tag).toBe("Paused")
        if (paused._tag !== "Paused") return paused
        expect(paused.pending.map((p) => p.callId)).toEqual(["transfer-1"])
        expect(Option.map(yield* AgentCluster.get(paused.runId), (r) => r.status)).toEqual(Option.some("paused"))
        const done = yield* AgentCluster.decide(Bank, paused.runId, Decision.approveAll(), { decidedBy: "ada", revision: paused.revision })
        expect(Option.map(yield* AgentCluster.get(paused.runId), (r) => [r.status, r.decidedBy])).toEqual(Option.some(["completed", "ada"]))
        return done
      }).pipe(Effect.provide(bankRunnerOn(join(dir, "cluster.db"))))
      expect(outcome).toMatchObject({ _tag: "Completed", text: "paid 1", conversationId: "c-1" })
      expect([executions.get("lookup-1"), executions.get("transfer-1")]).toEqual([1, 1])
    }).pipe(Effect.scoped), 30_000)

  it.live("a run cut off by its runner's end is continued by the next runner on the file, with no user code calling recover: the idempotent call runs again, the other is reported cancelled", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "cluster.db")
      const held = yield* Deferred.make<void>()
      gate.wait = Deferred.await(held)
      const first = yield* Scope.make()
      const runner1 = yield* Layer.buildWithScope(bankRunnerOn(filename), first)
      const { runId } = yield* AgentCluster.start(Bank, { input: "block 1", conversationId: "c-block" }).pipe(Effect.provide(runner1))
      yield* until(() => executions.get("block-1") === 1 && executions.get("idem-1") === 1)
      // the runner goes away mid-batch: its runs stay running in the store, their Start unanswered
      yield* Scope.close(first, Exit.void)
      expect(Option.map(yield* AgentCluster.get(runId).pipe(Effect.provide(SqliteStore.layer({ filename }))), (r) => r.status)).toEqual(Option.some("running"))
      gate.wait = Effect.void
      const outcome = yield* Effect.gen(function*() {
        // the same start again: the stored message, answered once the new runner continued the run
        const outcome = yield* AgentCluster.run(Bank, { input: "block 1", conversationId: "c-block", runId })
        const record = yield* AgentCluster.get(runId)
        return { outcome, status: Option.map(record, (r) => r.status) }
      }).pipe(Effect.provide(bankRunnerOn(filename)))
      expect(outcome).toMatchObject({ outcome: { _tag: "Completed", runId, text: "unblocked 1" }, status: Option.some("completed") })
      expect([executions.get("block-1"), executions.get("idem-1")]).toEqual([1, 2])
    }).pipe(Effect.scoped), 30_000)

  it.live("a second runner on the same file is refused with RunnerLocked naming the holder; a client on the file is not", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "cluster.db")
      yield* Layer.build(bankRunnerOn(filename))
      const second = yield* Effect.flip(Layer.build(bankRunnerOn(filename)))
      expect(second).toMatchObject({ _tag: "RunnerLocked", filename, lockFile: `${filename}.runner.lock`, pid: process.pid })
      expect(second.message).toContain(`process ${process.pid} holds`)
      const client = yield* Layer.build(ClusterSqlite.layerClient({ filename }))
      const outcome = yield* AgentCluster.run(Bank, { input: "hi" }).pipe(Effect.provide(client))
      expect(outcome).toMatchObject({ _tag: "Completed", text: "hello" })
    }).pipe(Effect.scoped), 30_000)

  it.live("one runner per database file, whatever path names it: a symbolic link, a linked directory, a hard link, a relative path and the file's own path are each refused while its runner runs; that runner keeps working; once it stops, the hard link opens on the same data", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const filename = join(dir, "cluster.db")
      const first = yield* Scope.make()
      const runner1 = yield* Layer.buildWithScope(bankRunnerOn(filename), first)
      const other = join(dir, "other")
      mkdirSync(other)
      symlinkSync(filename, join(dir, "link.db"))
      symlinkSync(dir, join(other, "alias"))
      linkSync(filename, join(dir, "hard.db"))
      const real = realpathSync(filename)
      const byName = `${real}.runner.lock`
      const byFile = join(dirname(real), `.agentfx-${statSync(real, { bigint: true }).ino}.runner.lock`)
      const names = [
        [filename, byName],
        [join(dir, "link.db"), byName],
        [join(other, "alias", "cluster.db"), byName],
        [relative(process.cwd(), filename), byName],
        [join(dir, "hard.db"), byFile]
      ] as const
      for (const [name, lockFile] of names) {
        const refused = yield* Effect.flip(Layer.build(bankRunnerOn(name)))
        expect(refused, name).toMatchObject({ _tag: "RunnerLocked", filename: name, lockFile, pid: process.pid })
      }
      // the file's runner was not disturbed by them
      const paused = yield* AgentCluster.run(Bank, { input: "pay 7" }).pipe(Effect.provide(runner1))
      expect(paused._tag).toBe("Paused")
      if (paused._tag !== "Paused") return
      const done = yield* AgentCluster.decide(Bank, paused.runId, Decision.approveAll(), { decidedBy: "ada" }).pipe(Effect.provide(runner1))
      expect(done).toMatchObject({ _tag: "Completed", text: "paid 7" })
      expect([executions.get("lookup-7"), executions.get("transfer-7")]).toEqual([1, 1])
      yield* Scope.close(first, Exit.void)
      // stopped: the hard link opens, on the same data
      const runner2 = yield* Layer.build(bankRunnerOn(join(dir, "hard.db")))
      expect(Option.map(yield* AgentCluster.get(paused.runId).pipe(Effect.provide(runner2)), (r) => r.status)).toEqual(Option.some("completed"))
      expect(yield* AgentCluster.run(Bank, { input: "hi" }).pipe(Effect.provide(runner2))).toMatchObject({ _tag: "Completed", text: "hello" })
    }).pipe(Effect.scoped), 30_000)

  it.live("a database file its runner creates (through a dangling symbolic link) and a file replaced on disk under its runner stay one runner's", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const filename = join(dir, "new.db")
      symlinkSync(filename, join(dir, "link.db"))
      expect(existsSync(filename)).toBe(false)
      const runner1 = yield* Layer.build(bankRunnerOn(join(dir, "link.db")))
      expect(existsSync(filename)).toBe(true)
      expect(yield* Effect.flip(Layer.build(bankRunnerOn(filename)))).toMatchObject({ _tag: "RunnerLocked", filename, pid: process.pid })
      // another file moved onto its name: a new file (a new inode), but the name's runner still runs
      writeFileSync(join(dir, "restored.db"), "")
      renameSync(join(dir, "restored.db"), filename)
      expect(yield* Effect.flip(Layer.build(bankRunnerOn(filename)))).toMatchObject({ _tag: "RunnerLocked", filename, lockFile: `${realpathSync(filename)}.runner.lock`, pid: process.pid })
      expect(yield* AgentCluster.run(Bank, { input: "hi" }).pipe(Effect.provide(runner1))).toMatchObject({ _tag: "Completed", text: "hello" })
    }).pipe(Effect.scoped), 30_000)

  it.live("a runner process holds its file: runners of this process through a symbolic link and a hard link are refused naming its pid, a client reaches it; SIGKILLed, its file opens at once through the link", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const filename = join(dir, "cluster.db")
      const holder = yield* spawnChild(fileURLToPath(new URL("./fixtures/sqliteRunner.ts", import.meta.url)), [filename])
      yield* holder.waitFor("ready", (m) => (m as { ready?: number }).ready, 120_000)
      symlinkSync(filename, join(dir, "link.db"))
      linkSync(filename, join(dir, "hard.db"))
      for (const name of [join(dir, "link.db"), join(dir, "hard.db")]) {
        const refused = yield* Effect.flip(Layer.build(bankRunnerOn(name)))
        expect(refused, name).toMatchObject({ _tag: "RunnerLocked", filename: name, pid: holder.pid })
        expect(refused.message).toContain(`process ${holder.pid} holds`)
      }
      const client = yield* Layer.build(ClusterSqlite.layerClient({ filename }))
      expect(yield* AgentCluster.run(Bank, { input: "hi" }).pipe(Effect.provide(client))).toMatchObject({ _tag: "Completed", text: `hello from ${holder.pid}` })
      yield* holder.kill()
      // through the symbolic link: SQLite keeps its journal beside the real name, so it finds what the killed runner left
      const runner = yield* Layer.build(bankRunnerOn(join(dir, "link.db")))
      expect(yield* AgentCluster.run(Bank, { input: "hi" }).pipe(Effect.provide(runner))).toMatchObject({ _tag: "Completed", text: "hello" })
    }).pipe(Effect.scoped), 180_000)

  it.live("a file whose runner lock cannot be opened (its directory does not exist) fails with a StoreError naming the lock, not RunnerLocked", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "missing", "cluster.db")
      const failed = yield* Effect.flip(Layer.build(bankRunnerOn(filename)))
      expect(failed._tag).toBe("StoreError")
      expect(failed.message).toContain(`${filename}.runner.lock`)
    }).pipe(Effect.scoped), 30_000)

  it.live("the lock of a runner process killed with SIGKILL ends with it: its file gets a runner at once; while it lived, a runner was refused naming its pid", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "cluster.db")
      const holder = spawn(process.execPath, ["--conditions=@agentfx/source", "--import", "tsx", fileURLToPath(new URL("./fixtures/holdRunnerLock.ts", import.meta.url)), filename], { stdio: ["ignore", "pipe", "inherit"] })
      yield* Effect.addFinalizer(() => Effect.sync(() => holder.kill("SIGKILL")))
      yield* Effect.callback<void>((resume) => {
        holder.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("held") && resume(Effect.void))
      })
      const refused = yield* Effect.flip(Layer.build(bankRunnerOn(filename)))
      expect(refused).toMatchObject({ _tag: "RunnerLocked", pid: holder.pid })
      yield* Effect.callback<void>((resume) => {
        holder.once("exit", () => resume(Effect.void))
        holder.kill("SIGKILL")
      })
      const runner = yield* Layer.build(bankRunnerOn(filename))
      expect(yield* AgentCluster.run(Bank, { input: "hi" }).pipe(Effect.provide(runner))).toMatchObject({ _tag: "Completed" })
    }).pipe(Effect.scoped), 60_000)

  it.live("a decision redelivered after its claim (the runner ended mid-call) is continued by the next runner, not refused: the call cut off is reported cancelled", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "cluster.db")
      gate.wait = Effect.never
      const first = yield* Scope.make()
      const runner1 = yield* Layer.buildWithScope(bankRunnerOn(filename), first)
      const paused = yield* AgentCluster.run(Bank, { input: "guard 1" }).pipe(Effect.provide(runner1))
      expect(paused._tag).toBe("Paused")
      yield* Effect.forkIn(AgentCluster.decide(Bank, paused.runId, Decision.approveAll(), { decidedBy: "ada" }).pipe(Effect.provide(runner1)), first)
      yield* until(() => executions.get("guarded-1") === 1)
      yield* Scope.close(first, Exit.void)
      gate.wait = Effect.void
      const record = yield* Effect.gen(function*() {
        return yield* Effect.retry(
          Effect.flatMap(AgentCluster.get(paused.runId), (record) =>
            Option.isSome(record) && record.value.status === "completed" ? Effect.succeed(record.value) : Effect.fail("not yet")),
          Schedule.spaced("50 millis").pipe(Schedule.upTo({ duration: "10 seconds" }))
        )
      }).pipe(Effect.provide(bankRunnerOn(filename)))
      expect([record.status, record.decidedBy]).toEqual(["completed", "ada"])
      expect(executions.get("guarded-1")).toBe(1)
    }).pipe(Effect.scoped), 30_000)

  it.live("a cancel stops a running run on its runner: its reply is Failed Cancelled, its record failed, naming who cancelled", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "cluster.db")
      gate.wait = Effect.never
      const runner = yield* Layer.build(bankRunnerOn(filename))
      const reply = yield* Effect.forkChild(AgentCluster.run(Bank, { input: "block 2", runId: "cancel-me" }).pipe(Effect.provide(runner)))
      yield* until(() => executions.get("block-2") === 1)
      yield* AgentCluster.cancel(Bank, "cancel-me", { cancelledBy: "bob" }).pipe(Effect.provide(runner))
      expect(yield* Fiber.join(reply)).toMatchObject({ _tag: "Failed", runId: "cancel-me", error: "Cancelled", message: "Run cancel-me was cancelled by bob" })
      const record = yield* AgentCluster.get("cancel-me").pipe(Effect.provide(runner))
      expect(Option.map(record, (r) => [r.status, r.decidedBy])).toEqual(Option.some(["failed", "bob"]))
      const again = yield* Effect.flip(AgentCluster.cancel(Bank, "cancel-me").pipe(Effect.provide(runner)))
      expect(again).toMatchObject({ _tag: "RunAlreadyResumed", status: "failed", decidedBy: "bob" })
    }).pipe(Effect.scoped), 30_000)

  it.live("refusals change nothing: a decision naming no pending call is Refused UnknownDecision and the run stays paused; a run id of another conversation is Refused InvalidRunInput; an unknown run is RunNotFound", () =>
    Effect.gen(function*() {
      const filename = join(yield* tempDir, "cluster.db")
      yield* Effect.gen(function*() {
        const paused = yield* AgentCluster.run(Bank, { input: "pay 3", conversationId: "c-3" })
        if (paused._tag !== "Paused") return expect.fail(`expected Paused, got ${paused._tag}`)
        const unknown = yield* Effect.flip(AgentCluster.decide(Bank, paused.runId, Decision.byCall({ nope: Decision.approve() })))
        expect(unknown).toMatchObject({ _tag: "Refused", reason: "UnknownDecision", runId: paused.runId })
        expect(Option.map(yield* AgentCluster.get(paused.runId), (r) => r.status)).toEqual(Option.some("paused"))
        const taken = yield* Effect.flip(AgentCluster.run(Bank, { input: "pay 3", conversationId: "c-other", runId: paused.runId }))
        expect(taken).toMatchObject({ _tag: "Refused", reason: "InvalidRunInput" })
        expect(yield* Effect.flip(AgentCluster.decide(Bank, "no-such-run", Decision.approveAll()))).toMatchObject({ _tag: "RunNotFound", runId: "no-such-run" })
        expect(yield* AgentCluster.decide(Bank, paused.runId, Decision.approveAll(), { revision: paused.revision })).toMatchObject({ _tag: "Completed", text: "paid 3" })
        expect(executions.get("transfer-3")).toBe(1)
      }).pipe(Effect.provide(bankRunnerOn(filename)))
    }).pipe(Effect.scoped), 30_000)
})
