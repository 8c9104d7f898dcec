/**
 * Model fallback: `ChatModel.fallback` turns an `ExecutionPlan` of models into the one model a
 * run talks to. Here the primary is overloaded: each call is tried twice on it, 200 ms apart,
 * while the failure is transient, then on the backup — and the run's events say which model
 * answered. Streamed, a call falls back only until its first text reached the listener: a
 * primary that fails mid-answer ends the run, never restarted on the backup. Offline (two
 * scripted models). Run: `pnpm tsx examples/fallback.ts`.
 */
import { Agent, ChatModel, ScriptedChatModel } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, ExecutionPlan, Layer, Schedule, Stream } from "effect"

const start = performance.now()
const at = () => `${Math.round(performance.now() - start)} ms`

const overloaded = new ChatModel.ModelError({ reason: "unavailable", message: "HTTP 503: overloaded", status: 503 })

/** The primary: its first two calls fail at once; later ones after their first words. */
let primaryCalls = 0
const failing = () =>
  Effect.suspend(() => {
    primaryCalls += 1
    return Console.log(`  [${at()}] big-model: ${overloaded.message}`).pipe(Effect.andThen(Effect.fail(overloaded)))
  })
const Primary = Layer.succeed(ChatModel.ChatModel, {
  model: "big-model",
  provider: "primary-cloud",
  generate: failing,
  stream: () =>
    primaryCalls < 2
      ? Stream.fromEffect(failing())
      : Stream.concat(
        Stream.make<Array<ChatModel.StreamPart>>({ _tag: "TextDelta", text: "Uptime was " }),
        Stream.fail(overloaded)
      )
})

/** The backup: answers (a scripted model, named as a real one would be). */
const Backup = Layer.effect(
  ChatModel.ChatModel,
  Effect.map(ChatModel.ChatModel, (scripted): ChatModel.ChatModel.Service => {
    const asked = Effect.suspend(() => Console.log(`  [${at()}] small-model: answering`))
    return {
      model: "small-model",
      provider: "backup-cloud",
      generate: (request) => Effect.andThen(asked, scripted.generate(request)),
      stream: (request) => Stream.concat(Stream.drain(Stream.fromEffect(asked)), scripted.stream(request))
    }
  })
).pipe(Layer.provide(ScriptedChatModel.layer(() => ScriptedChatModel.text("Uptime was 99.95% this month; one incident, on the 12th."))))

const ModelLive = ChatModel.fallback(ExecutionPlan.make(
  { provide: Primary, attempts: 2, schedule: Schedule.spaced("200 millis"), while: (error: ChatModel.ModelError) => error.isTransient },
  { provide: Backup, while: (error: ChatModel.ModelError) => error.isTransient }
))

const agent = Agent.make({ system: "You report on service health in one sentence." })

const program = Effect.gen(function*() {
  yield* Console.log("plan: big-model (primary-cloud) twice, 200 ms apart, while the failure is transient; then small-model (backup-cloud)")
  const input = "How was our uptime this month?"
  yield* Console.log(`\nuser: ${input}`)
  const events = yield* Agent.stream(agent, { input }).pipe(Stream.runCollect)
  for (const event of events) {
    if (event._tag === "ModelResponded") yield* Console.log(`answered by ${event.model} (${event.provider}): ${event.text}`)
  }

  yield* Console.log(`\nuser (again; big-model now fails after its first words): ${input}`)
  const failed = yield* Agent.stream(agent, { input }).pipe(
    Stream.runForEach((event) => event._tag === "TextDelta" ? Console.log(`  text shown: ${JSON.stringify(event.text)}`) : Effect.void),
    Effect.flip
  )
  yield* Console.log(`failed: ${failed._tag}: ${failed.message}`)
  yield* Console.log("  not restarted on small-model: the text already shown cannot be taken back")
}).pipe(Effect.provide(ModelLive))

NodeRuntime.runMain(program)
