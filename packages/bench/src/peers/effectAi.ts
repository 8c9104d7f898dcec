/**
 * Peer: Effect 4's own `effect/ai` — a `Chat` (`Chat.empty`) whose `streamText` loops with
 * `maxSteps` (since effect 4.1.0: the model is called again while each round ends in tool calls
 * that were all resolved), on a scripted `LanguageModel` built by `LanguageModel.make` whose
 * `streamText` answers from the last tool result (the same decisions as every side,
 * `workload.ts`) with the whole round in one chunk. Tools are `Tool.make` with `Schema`
 * parameters and success (decoded and encoded by the toolkit), their handlers resolved once
 * (`yield* toolkit` with `toolkit.toLayer(…)`, as effect's AI docs do) and passed as `toolkit`.
 * Each run is `Chat.empty` then `chat.streamText({ prompt, toolkit, maxSteps })` folded to its
 * text and its tool results, on `Effect.runPromise`.
 */
import { Effect, Schema, Stream } from "effect"
import type { Prompt, Response } from "effect/ai"
import { Chat, LanguageModel, Tool, Toolkit } from "effect/ai"
import type { Peer, Wait } from "../impl.js"
import type { RunCounts, SuspendedRuns } from "../measure.js"
import type { Counts } from "./script.js"
import { inputOf, timedAnswers, trailingResults } from "./script.js"
import type { Decision } from "../workload.js"
import { concurrentDecision, doubleTool, longLoopDecision, peerMaxSteps, stepTool, wideBatchDecision } from "../workload.js"

const usage = { inputTokens: { total: 0 }, outputTokens: { total: 0 } }

let nextCallId = 0

/** The model's round for a decision, as one chunk of encoded stream parts: text, or calls of `toolName`. */
const round = <A>(toolName: string, decision: Decision<A>): Array<Response.StreamPartEncoded> => {
  if (decision._tag === "Text") {
    const id = `text_${nextCallId++}`
    return [
      { type: "text-start", id },
      { type: "text-delta", id, delta: decision.text },
      { type: "text-end", id },
      { type: "finish", reason: "stop", usage }
    ]
  }
  const parts: Array<Response.StreamPartEncoded> = decision.args.map((params) => ({
    type: "tool-call",
    id: `call_${nextCallId++}`,
    name: toolName,
    params
  }))
  parts.push({ type: "finish", reason: "tool-calls", usage })
  return parts
}

/** The tool results after the last assistant message, or `undefined` when the model has not called tools yet. */
const lastResults = (prompt: Prompt.Prompt): Array<number> | undefined =>
  trailingResults(prompt.content, (message) =>
    message.role === "tool" ? message.content.flatMap((part) => part.type === "tool-result" ? [part.result as number] : []) : [])

/** A scripted model: `answer` gives each round's parts from the prompt. */
const scripted = (answer: (prompt: Prompt.Prompt) => Array<Response.StreamPartEncoded>) =>
  LanguageModel.make({
    generateText: (options) =>
      Effect.sync(() =>
        answer(options.prompt).flatMap((part): Array<Response.PartEncoded> =>
          part.type === "text-delta" ? [{ type: "text", text: part.delta }] : part.type === "tool-call" || part.type === "finish" ? [part] : []
        )
      ),
    streamText: (options) => Stream.suspend(() => Stream.fromArray(answer(options.prompt)))
  })

/** The current run's counts (A, B). */
const calls: Counts = { model: 0, tool: 0 }

const StepTool = Tool.make("step", {
  description: "Adds one",
  parameters: Schema.Struct({ n: Schema.Number }),
  success: Schema.Number
})
const DoubleTool = Tool.make("double", {
  description: "Doubles",
  parameters: Schema.Struct({ i: Schema.Number }),
  success: Schema.Number
})
const WaitTool = Tool.make("wait", {
  description: "Waits, then returns its id",
  parameters: Schema.Struct({ id: Schema.Number }),
  success: Schema.Number
})

const StepKit = Toolkit.make(StepTool)
const DoubleKit = Toolkit.make(DoubleTool)
const WaitKit = Toolkit.make(WaitTool)

/** The toolkits with their handlers, resolved once (as an app resolves them when its layer is built). */
const stepKit = Effect.runSync(Effect.provide(StepKit, StepKit.toLayer({
  step: ({ n }) => Effect.sync(() => (calls.tool++, stepTool(n)))
})))
const doubleKit = Effect.runSync(Effect.provide(DoubleKit, DoubleKit.toLayer({
  double: ({ i }) => Effect.sync(() => (calls.tool++, doubleTool(i)))
})))

/** What a run's stream amounts to: the text of its answer, and the tool results it carried (the run's own record). */
interface Folded {
  text: string
  toolResults: number
}

/** One run: a fresh chat, its `streamText` with `maxSteps`, folded to its text and tool results. */
const chatRun = (
  prompt: string,
  toolkit: Toolkit.WithHandler<any>,
  maxSteps: number
): Effect.Effect<Folded, unknown, LanguageModel.LanguageModel> =>
  Effect.flatMap(Chat.empty, (chat) =>
    chat.streamText({ prompt, toolkit, maxSteps }).pipe(
      Stream.runFold(
        (): Folded => ({ text: "", toolResults: 0 }),
        (folded, part) => {
          if (part.type === "text-delta") folded.text += part.delta
          else if (part.type === "tool-result" && part.preliminary !== true) folded.toolResults++
          return folded
        }
      )
    )) as Effect.Effect<Folded, unknown, LanguageModel.LanguageModel> // the toolkit's handlers need nothing

/** A run's counts; the handlers' count of its tool calls must agree with the run's own record (its stream's tool results). */
const countsOf = (folded: Folded, modelCalls: number, handlerCalls: number): RunCounts => ({
  text: folded.text,
  modelCalls,
  toolCalls: folded.toolResults === handlerCalls ? handlerCalls : -1
})

/** One run of A or B: one tool, the model deciding from the last tool results, each of its calls time-stamped. */
const timedRun = <A>(
  name: string,
  toolkit: Toolkit.WithHandler<any>,
  decide: (results: Array<number> | undefined) => Decision<A>,
  stamps: Array<number>,
  maxSteps: number
): Promise<RunCounts> => {
  const model = scripted(timedAnswers(calls, stamps, lastResults, (results) => round(name, decide(results))))
  return Effect.runPromise(
    chatRun("go", toolkit, maxSteps).pipe(
      Effect.provideServiceEffect(LanguageModel.LanguageModel, model),
      Effect.map((folded) => countsOf(folded, calls.model, calls.tool))
    )
  )
}

/** The effect/ai peer; `maxSteps` is its `Chat.streamText` option (the tests lower it to see the checks fail). */
export const makeEffectAi = (maxSteps = peerMaxSteps): Peer => ({
  id: "effectai",

  longLoop: (steps, stamps) => timedRun("step", stepKit, (results) => longLoopDecision(steps, results?.at(-1)), stamps, maxSteps),
  wideBatch: (width, stamps) => timedRun("double", doubleKit, (results) => wideBatchDecision(width, results), stamps, maxSteps),

  concurrent: (runs: number, wait: Wait): SuspendedRuns => {
    let suspended = 0
    let release: () => void = () => {}
    const latch = typeof wait === "string" ? new Promise<void>((resolve) => (release = resolve)) : undefined
    const waitFor = latch !== undefined ? Effect.promise(() => latch) : Effect.sleep((wait as { readonly timerMs: number }).timerMs)
    const modelCalls = new Array<number>(runs).fill(0)
    const toolCalls = new Array<number>(runs).fill(0)
    const waitKit = Effect.runSync(Effect.provide(WaitKit, WaitKit.toLayer({
      wait: ({ id }) =>
        Effect.suspend(() => {
          toolCalls[id]!++
          suspended++
          return waitFor
        }).pipe(Effect.map(() => (suspended--, id)))
    })))
    // One model for every run, built before they start (as a server's is); each run is its own
    // fiber (`Effect.runPromise`), as each floor run is its own promise; the counts are read
    // once all have ended.
    const model = Effect.runSync(scripted((prompt) => {
      const id = Number(inputOf(prompt.content))
      modelCalls[id]!++
      return round("wait", concurrentDecision(id, lastResults(prompt)?.at(-1)))
    }))
    const done = Promise.all(
      Array.from({ length: runs }, (_, id) =>
        Effect.runPromise(Effect.provideService(chatRun(String(id), waitKit, maxSteps), LanguageModel.LanguageModel, model)))
    ).then((results) => results.map((folded, id) => countsOf(folded, modelCalls[id]!, toolCalls[id]!)))
    return { suspended: () => suspended, release, done }
  }
})

export const effectAi: Peer = makeEffectAi()
