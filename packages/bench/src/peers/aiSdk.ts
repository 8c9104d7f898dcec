/**
 * Peer: the AI SDK's tool loop (`ai` 7) — `generateText` with tools, `stopWhen: isStepCount(…)`
 * allowing the loop's steps, on `MockLanguageModelV4` from `ai/test` whose `doGenerate`
 * answers from the last tool result (the same decisions as every side, `workload.ts`). Tools
 * are `tool({ inputSchema: z.object(…), execute })`, as the SDK's documentation writes them: each
 * call's input is parsed from the model's JSON and validated by zod. The mock's call log is
 * emptied at each call (as agentfx's scripted model runs with `recordRequests: false`): the
 * run keeps what the SDK itself keeps, nothing more.
 */
import { generateText, isStepCount, tool } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { z } from "zod"
import type { Peer, Wait } from "../impl.js"
import type { RunCounts, SuspendedRuns } from "../measure.js"
import type { Counts } from "./script.js"
import { inputOf, timedAnswers, trailingResults } from "./script.js"
import type { Decision } from "../workload.js"
import { concurrentDecision, doubleTool, longLoopDecision, peerMaxSteps, stepTool, wideBatchDecision } from "../workload.js"

type CallOptions = Parameters<MockLanguageModelV4["doGenerate"]>[0]
type Prompt = CallOptions["prompt"]
type GenerateResult = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>

const usage: GenerateResult["usage"] = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 }
}

let nextCallId = 0

/** The model's answer for a decision: text, or calls of `toolName` (a provider's tool-call input is a JSON string). */
const reply = <A>(toolName: string, decision: Decision<A>): GenerateResult =>
  decision._tag === "Text"
    ? { content: [{ type: "text", text: decision.text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] }
    : {
      content: decision.args.map((args) => ({
        type: "tool-call" as const,
        toolCallId: `call_${nextCallId++}`,
        toolName,
        input: JSON.stringify(args)
      })),
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage,
      warnings: []
    }

/** The tool results after the last assistant message, or `undefined` when the model has not called tools yet. */
const lastResults = (prompt: Prompt): Array<number> | undefined =>
  trailingResults(prompt, (message) =>
    message.role === "tool"
      ? message.content.flatMap((part) => part.type === "tool-result" ? [part.output.type === "json" ? (part.output.value as number) : Number.NaN] : [])
      : [])

/** A mock model answering with `answer`, keeping no call log. */
const scripted = (answer: (prompt: Prompt) => GenerateResult): MockLanguageModelV4 => {
  const model: MockLanguageModelV4 = new MockLanguageModelV4({
    doGenerate: async (options) => {
      model.doGenerateCalls.length = 0
      return answer(options.prompt)
    }
  })
  return model
}

/** The current run's counts (A, B). */
const calls: Counts = { model: 0, tool: 0 }

const tools = {
  step: tool({
    description: "Adds one",
    inputSchema: z.object({ n: z.number() }),
    execute: async ({ n }) => (calls.tool++, stepTool(n))
  }),
  double: tool({
    description: "Doubles",
    inputSchema: z.object({ i: z.number() }),
    execute: async ({ i }) => (calls.tool++, doubleTool(i))
  })
}

interface Steps {
  readonly steps: ReadonlyArray<{ readonly toolResults: ReadonlyArray<unknown> }>
}

/** A run's counts; the model's and the handlers' counts must agree with the run's own record (`steps`). */
const countsOf = (result: Steps & { readonly text: string }, modelCalls: number, handlerCalls: number): RunCounts => {
  let recorded = 0
  for (const step of result.steps) recorded += step.toolResults.length
  return {
    text: result.text,
    modelCalls: result.steps.length === modelCalls ? modelCalls : -1,
    toolCalls: recorded === handlerCalls ? handlerCalls : -1
  }
}

/** One run of A or B: one tool, the model deciding from the last tool results, each of its calls time-stamped. */
const timedRun = async <A>(
  name: keyof typeof tools,
  decide: (results: Array<number> | undefined) => Decision<A>,
  stamps: Array<number>,
  stopWhen: ReturnType<typeof isStepCount>
): Promise<RunCounts> => {
  const model = scripted(timedAnswers(calls, stamps, lastResults, (results) => reply(name, decide(results))))
  const result = await generateText({ model, tools: { [name]: tools[name] }, prompt: "go", stopWhen })
  return countsOf(result, calls.model, calls.tool)
}

/** The AI SDK peer; `maxSteps` is its `stopWhen: isStepCount(maxSteps)` (the tests lower it to see the checks fail). */
export const makeAiSdk = (maxSteps = peerMaxSteps): Peer => {
  const stopWhen = isStepCount(maxSteps)
  return {
    id: "aisdk",

    longLoop: (steps, stamps) => timedRun("step", (results) => longLoopDecision(steps, results?.at(-1)), stamps, stopWhen),
    wideBatch: (width, stamps) => timedRun("double", (results) => wideBatchDecision(width, results), stamps, stopWhen),

    concurrent: (runs: number, wait: Wait): SuspendedRuns => {
      let suspended = 0
      let release: () => void = () => {}
      const latch = typeof wait === "string" ? new Promise<void>((resolve) => (release = resolve)) : undefined
      const modelCalls = new Array<number>(runs).fill(0)
      const toolCalls = new Array<number>(runs).fill(0)
      const model = scripted((prompt) => {
        const id = Number(inputOf(prompt))
        modelCalls[id]!++
        return reply("wait", concurrentDecision(id, lastResults(prompt)?.at(-1)))
      })
      const waitTool = {
        wait: tool({
          description: "Waits, then returns its id",
          inputSchema: z.object({ id: z.number() }),
          execute: async ({ id }) => {
            toolCalls[id]!++
            suspended++
            if (latch !== undefined) await latch
            else await new Promise((resolve) => setTimeout(resolve, (wait as { readonly timerMs: number }).timerMs))
            suspended--
            return id
          }
        })
      }
      // Each run is its own promise, as each floor run is; the counts are read once all have ended.
      const done = Promise.all(Array.from({ length: runs }, (_, id) => generateText({ model, tools: waitTool, prompt: String(id), stopWhen })))
        .then((results) => results.map((result, id) => countsOf(result, modelCalls[id]!, toolCalls[id]!)))
      return { suspended: () => suspended, release, done }
    }
  }
}

export const aiSdk: Peer = makeAiSdk()
