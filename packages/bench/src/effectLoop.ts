/**
 * A and B, for reference: the floor's loop written with Effect and Schema alone, no agentfx —
 * what the runtime agentfx rests on costs for the same logical work. The model is an effect
 * answering from the last tool result (the same decisions as both sides); each call's
 * arguments are decoded and its result encoded with its tool's schemas, its handler an effect;
 * the results are appended to a messages array. In B every call of the batch runs in a fiber
 * of its own (what the `unbounded` manager owes each call: its own interruption and deadline),
 * started the cheapest way Effect has: `Effect.runForkWith`, which runs a new fiber at once until
 * it suspends, so that a call that does not suspend ends before the next one starts — no
 * scheduler hop, no join.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"
import type { Impl } from "./impl.js"
import type { RunCounts } from "./measure.js"
import { nowUs } from "./measure.js"
import type { LoopCall, LoopReply } from "./workload.js"
import { doubleTool, longLoopDecision, loopReply, stepTool, wideBatchDecision } from "./workload.js"

type Message =
  | { readonly role: "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string; readonly toolCalls: ReadonlyArray<LoopCall> }
  | { readonly role: "tool"; readonly callId: string; readonly content: unknown }

/** A tool: its arguments decoded, its handler, its result encoded. */
type Tool = (args: unknown) => Effect.Effect<unknown>

const tool = <A, I>(parameters: Schema.Codec<A, I>, handler: (args: A) => number): Tool => {
  const decode = Schema.decodeUnknownEffect(parameters)
  const encode = Schema.encodeEffect(Schema.Number)
  return (args) =>
    decode(args).pipe(
      Effect.flatMap((decoded) => Effect.sync(() => handler(decoded))),
      Effect.flatMap(encode),
      Effect.orDie
    )
}

/** Runs every call of a batch, each in its own fiber; their results in call order. */
type Execute = (calls: ReadonlyArray<LoopCall>) => Effect.Effect<ReadonlyArray<unknown>>

/** One call: in this fiber (A's single call). */
const inline = (run: Tool): Execute => (calls) => Effect.map(run(calls[0]!.args), (value) => [value])

/** Each call in its own fiber, started at once (B); the handlers here never suspend. */
const forked = (run: Tool): Execute => (calls) =>
  Effect.flatMap(Effect.context<never>(), (context) => {
    const start = Effect.runForkWith(context)
    const fibers = calls.map((call) => start(run(call.args)))
    return Effect.forEach(fibers, (fiber) => {
      const exit = fiber.pollUnsafe()
      return exit !== undefined && Exit.isSuccess(exit) ? Effect.succeed(exit.value) : Effect.die("a call suspended or failed")
    })
  })

/** The loop: model → calls → results appended → model, until the model answers with text. */
const loop = (
  model: (messages: ReadonlyArray<Message>) => LoopReply,
  execute: Execute
): Effect.Effect<RunCounts> => {
  const messages: Array<Message> = [{ role: "user", content: "go" }]
  let modelCalls = 0
  let toolCalls = 0
  const step: Effect.Effect<RunCounts> = Effect.flatMap(Effect.sync(() => model(messages)), (answer) => {
    modelCalls++
    messages.push({ role: "assistant", content: answer.text, toolCalls: answer.toolCalls })
    if (answer.toolCalls.length === 0) return Effect.succeed({ text: answer.text, modelCalls, toolCalls })
    toolCalls += answer.toolCalls.length
    return Effect.flatMap(execute(answer.toolCalls), (values) => {
      for (let i = 0; i < values.length; i++) messages.push({ role: "tool", callId: answer.toolCalls[i]!.id, content: values[i] })
      return step
    })
  })
  return step
}

const lastNumber = (messages: ReadonlyArray<Message>): number | undefined => {
  const last = messages[messages.length - 1]!
  return last.role === "tool" ? (last.content as number) : undefined
}

const lastResults = (messages: ReadonlyArray<Message>): Array<number> | undefined => {
  if (messages[messages.length - 1]!.role !== "tool") return undefined
  const results: Array<number> = []
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role === "tool"; i--) {
    results.unshift((messages[i] as { readonly content: number }).content)
  }
  return results
}

const step = tool(Schema.Struct({ n: Schema.Number }), ({ n }) => stepTool(n))
const double = tool(Schema.Struct({ i: Schema.Number }), ({ i }) => doubleTool(i))

const runtime = ManagedRuntime.make(Layer.empty)

/** A and B on Effect and Schema alone (`references` in scenarios.ts: reported on agentfx's side). */
export const effectLoop: Pick<Impl, "longLoop" | "wideBatch"> = {
  longLoop: (steps, stamps) =>
    runtime.runPromise(loop((messages) => {
      stamps.push(nowUs())
      return loopReply("step", longLoopDecision(steps, lastNumber(messages)))
    }, inline(step))),

  wideBatch: (width, stamps) =>
    runtime.runPromise(loop((messages) => {
      stamps.push(nowUs())
      return loopReply("double", wideBatchDecision(width, lastResults(messages)))
    }, forked(double)))
}
