/**
 * Budgets: what a run may spend — tokens (as the provider reports them), model calls, tool
 * calls. Crossing a limit stops the run before its next model call or batch with a typed
 * `BudgetExceeded` naming the limit: the model call that crosses a token limit gets no batch —
 * its tool calls wait in the checkpoint, and run first once a person raises the limit
 * (`Decision.continue({ raise })`). A run's own budget wins over the agent's.
 * Run: `pnpm tsx examples/budget.ts`.
 */
import type { Checkpoint, Message } from "@agentfx/core"
import { Agent, Decision, ScriptedChatModel, Tool } from "@agentfx/core"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Schema } from "effect"
import { modelFromEnv } from "./model.js"
import { showExit, traced } from "./trace.js"

const searchPapers = Tool.make("search_papers", {
  description: "Searches research papers; returns their titles",
  parameters: Schema.Struct({ query: Schema.String }),
  success: Schema.Array(Schema.String),
  handler: ({ query }) => Effect.succeed([`A survey of ${query}`, `${query}: lessons from production`])
})

const queries = ["agent budgets", "token limits", "cost control", "retry storms"]

/**
 * Offline: a diligent researcher — one search per model call until it has all four, then an
 * answer. Each call reports its usage; the prompt grows as results come back.
 */
const script: ScriptedChatModel.Script = (request) => {
  const done = request.messages.filter((m): m is Message.ToolResultMessage => m._tag === "ToolResult").length
  const usage = (input: number, output: number) => ({ inputTokens: input, outputTokens: output, totalTokens: input + output })
  return done < queries.length
    ? { toolCalls: [{ name: "search_papers", args: { query: queries[done]! } }], usage: usage(300 + 120 * done, 40) }
    : { text: `Read ${done} searches: budgets need token, call and tool limits.`, usage: usage(300 + 120 * done, 90) }
}

const agent = Agent.make({
  tools: [searchPapers],
  system: "You research a topic by searching papers, then summarise in one sentence.",
  budget: { tokens: 1_500 }
})

const program = Effect.gen(function*() {
  const input = "What do agent budgets need?"
  yield* Console.log(`user: ${input} (agent budget: 1500 tokens)\n`)
  const exit = yield* Agent.run(agent, { input }).pipe(
    Effect.catchTag("BudgetExceeded", (stopped) =>
      Effect.gen(function*() {
        yield* Console.log(`\nstopped: ${stopped.message}`)
        for (const { call } of (stopped.checkpoint as Checkpoint.Encoded).batch) {
          yield* Console.log(`waiting in the checkpoint: ${call.name}(${JSON.stringify(call.args)}) [${call.id}]`)
        }
        yield* Console.log(`a person raises the token budget to 4000 and continues the run\n`)
        return yield* Agent.resume(agent, stopped.checkpoint, Decision.continue({ raise: { tokens: 4_000 } }))
      }))
  )
  yield* showExit(exit)

  yield* Console.log(`\nuser: ${input} (this run's budget: 2 tool calls)\n`)
  const limited = yield* Effect.flip(Agent.run(agent, { input, budget: { toolCalls: 2 } }))
  yield* Console.log(`\n${limited._tag === "BudgetExceeded" ? `stopped: ${limited.message}` : `failed: ${limited.message}`}`)
}).pipe(Effect.provide(traced(modelFromEnv(script))))

NodeRuntime.runMain(program)
