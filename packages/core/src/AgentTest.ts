/**
 * Helpers for testing agents with `@effect/vitest` (`it.effect`): a scripted model per run,
 * running until a pause or to completion, resuming a pause, and running a program while
 * virtual time advances by itself, so that timeouts, retries and sleeps take no real time and
 * need no hand-written `TestClock.adjust`.
 *
 * @since 0.1.0
 */
import type { Layer } from "effect"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import * as Agent from "./Agent.js"
import type { ResumeError, RunError } from "./AgentError.js"
import type * as AgentExit from "./AgentExit.js"
import type { ChatModel } from "./ChatModel.js"
import type * as Decision from "./Decision.js"
import * as ScriptedChatModel from "./ScriptedChatModel.js"
import type * as Slot from "./Slot.js"

/**
 * A scripted model whose steps count per run: every run starts at step 0 (and goes on across
 * its resumes), whatever other runs share the runtime — one script serves many runs.
 *
 * @example
 * ```ts
 * import { AgentTest, ScriptedChatModel } from "@agentfx/core"
 *
 * const ModelLive = AgentTest.model([
 *   ScriptedChatModel.toolCalls({ name: "get_weather", args: { city: "Oslo" } }),
 *   ScriptedChatModel.text("Sunny")
 * ])
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export const model = (
  script: ScriptedChatModel.Script
): Layer.Layer<ChatModel | ScriptedChatModel.ScriptedChatModel> => ScriptedChatModel.layer(script, { index: "run" })

/**
 * A run ended otherwise than a helper was told to expect: {@link runUntilPaused} expected a
 * pause and the run completed; {@link runToCompletion} expected it to complete within
 * `maxPauses` pauses and it paused once more. `exit` is what the run ended with, `pauses` how
 * often it had paused by then.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, AgentTest } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * const completedInstead = AgentTest.runUntilPaused(agent, { input: "hi" }).pipe(
 *   Effect.catchTag("UnexpectedExit", (e) => Effect.succeed(e.exit))
 * )
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class UnexpectedExit extends Data.TaggedError("UnexpectedExit")<{
  readonly expected: "pause" | "completion"
  readonly exit: AgentExit.AgentExit
  readonly pauses: number
}> {
  override get message(): string {
    const exit = this.exit
    if (exit._tag === "Completed") return `Expected the run to pause, but it completed: ${JSON.stringify(exit.text)}`
    const waiting = exit.pending.map((p) => `${p.call.name} (${p.call.id})`).join(", ")
    return `Expected the run to complete after at most ${this.pauses - 1} pauses, but it paused ${this.pauses} times; the last for ${exit.kind}: ${waiting}`
  }
}

/**
 * Runs `self` while virtual time advances by itself: whenever every fiber waits, the
 * `TestClock` moves to the next sleep that is due (a tool's timeout, a retry's delay, a
 * `sleep`), until `self` ends. A program waiting on something other than time (real I/O) is
 * given real time to make progress. Use it inside `it.effect`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AgentTest } from "@agentfx/core"
 *
 * // one virtual hour, no real wait
 * const program = AgentTest.settle(Effect.as(Effect.sleep("1 hour"), "done"))
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const settle = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(self)
    while (true) {
      // lets every forked fiber run until it waits
      yield* TestClock.adjust(Duration.zero)
      const exit = fiber.pollUnsafe()
      if (exit !== undefined) return yield* exit
      const now = yield* Clock.currentTimeMillis
      const due = yield* TestClock.testClockWith((clock) => Effect.succeed(nextSleep(clock, now)))
      if (due === undefined) yield* TestClock.withLive(Effect.sleep("1 millis"))
      else yield* TestClock.adjust(due - now)
    }
  })

/**
 * When the earliest sleep after `now` is due, if any. Effect 4's `TestClock` keeps its sleeps in
 * a field it does not declare (`sleeps`, each with its `timestamp`; `effect` is pinned to 4.1,
 * and `AgentTest.test.ts` fails if the field goes): there is no `TestClock.sleeps` any more.
 */
const nextSleep = (clock: TestClock.TestClock, now: number): number | undefined => {
  const sleeps = (clock as { readonly sleeps?: ReadonlyArray<{ readonly timestamp: number }> }).sleeps ?? []
  let next: number | undefined
  for (const { timestamp } of sleeps) if (timestamp > now && (next === undefined || timestamp < next)) next = timestamp
  return next
}

/**
 * Runs the agent (under {@link settle}) and returns its pause; fails with {@link UnexpectedExit}
 * (its message quotes the answer) when the run completes instead.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, AgentTest } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * const program = Effect.gen(function*() {
 *   const paused = yield* AgentTest.runUntilPaused(agent, { input: "pay ada 100" })
 *   console.log(paused.pending.map((p) => p.call.name))
 * })
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const runUntilPaused = <S extends Agent.Slots, R, A>(
  agent: Agent.Agent<S, R, A>,
  options: Agent.RunOptions<S>
): Effect.Effect<AgentExit.Paused, RunError | UnexpectedExit, R | ChatModel> =>
  Effect.flatMap(settle(Agent.run(agent, options)), (exit) =>
    exit._tag === "Paused" ? Effect.succeed(exit) : Effect.fail(new UnexpectedExit({ expected: "pause", exit, pauses: 0 })))

/**
 * Resumes a paused run (under {@link settle}) with `decision`: `target` is the pause
 * {@link runUntilPaused} returned, or the run's id. Returns what the resume ended with — a
 * completion, or the next pause.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, AgentTest, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * const program = Effect.gen(function*() {
 *   const paused = yield* AgentTest.runUntilPaused(agent, { input: "pay ada 500" })
 *   const exit = yield* AgentTest.resume(agent, paused, Decision.approveAll())
 *   console.log(exit._tag)
 * })
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const resume = <S extends Agent.Slots, R, A>(
  agent: Agent.Agent<S, R, A>,
  target: AgentExit.Paused | string,
  decision: Decision.Decision,
  options?: Agent.ResumeOptions
): Effect.Effect<AgentExit.AgentExit<Slot.StateOf<S>, A>, ResumeError, R | ChatModel> =>
  settle(Agent.resume(agent, typeof target === "string" ? target : target.runId, decision, options))

/**
 * Runs the agent (under {@link settle}) to its end: every pause is resumed with the decision
 * `decide` gives for it (default: approve everything, retry environment failures) — at most
 * `maxPauses` times (default 10); one pause more fails it with {@link UnexpectedExit}, naming
 * the calls that last pause waits for.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Agent, AgentTest, Decision } from "@agentfx/core"
 *
 * declare const agent: Agent.Agent
 * const program = Effect.gen(function*() {
 *   const done = yield* AgentTest.runToCompletion(agent, { input: "pay ada 100" }, {
 *     decide: (paused) => paused.kind === "approval" ? Decision.rejectAll({ message: "not today" }) : Decision.retry()
 *   })
 *   console.log(done.text)
 * })
 * ```
 *
 * @since 0.1.0
 * @category running
 */
export const runToCompletion = <S extends Agent.Slots, R, A>(
  agent: Agent.Agent<S, R, A>,
  options: Agent.RunOptions<S>,
  resumes?: { readonly decide?: (paused: AgentExit.Paused) => Decision.Decision; readonly maxPauses?: number }
): Effect.Effect<AgentExit.Completed<Slot.StateOf<S>, A>, ResumeError | UnexpectedExit, R | ChatModel> =>
  settle(Effect.gen(function*() {
    const decide = resumes?.decide ?? defaultDecision
    let exit = yield* Agent.run(agent, options)
    for (let pauses = 0; exit._tag === "Paused"; pauses++) {
      if (pauses >= (resumes?.maxPauses ?? 10)) return yield* new UnexpectedExit({ expected: "completion", exit, pauses: pauses + 1 })
      exit = yield* Agent.resume(agent, exit.runId, decide(exit))
    }
    return exit
  }))

const defaultDecision = (paused: AgentExit.Paused): Decision.Decision =>
  paused.kind === "approval" ? { _tag: "ApproveAll" } : { _tag: "Retry" }
