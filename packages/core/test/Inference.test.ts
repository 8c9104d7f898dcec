import { describe, expectTypeOf, it } from "@effect/vitest"
import { Context, Effect, Schema } from "effect"
import {
  Agent,
  type AgentError,
  type AgentExit,
  type ChatModel,
  Gate,
  ScriptedChatModel,
  Tool,
  type ToolError,
  ToolCallingManager,
  Toolkit,
  type WorkerPool
} from "../src/index.js"

class Clock extends Context.Service<Clock, { readonly now: string }>()("test/Clock") {}
class Ledger extends Context.Service<Ledger, { readonly balance: number }>()("test/Ledger") {}

const Text = Schema.Struct({ a: Schema.String })

const constPure = Tool.make("const_pure", {
  description: "d",
  parameters: Text,
  success: Schema.String,
  handler: ({ a }) => Effect.succeed(a)
})
const constClock = Tool.make("const_clock", {
  description: "d",
  parameters: Text,
  success: Schema.String,
  handler: ({ a }) => Effect.map(Clock, (clock) => `${a} ${clock.now}`)
})

/** What `Agent.run` of `agent` needs. */
const runNeeds = <R, A>(agent: Agent.Agent<{}, R, A>) => Agent.run(agent, { input: "hi" })

describe("Agent.make inference", () => {
  it("a tool written inline: requirements never, and the issue's program compiles with only a model provided", () => {
    const agent = Agent.make({
      tools: [Tool.make("echo", {
        description: "d",
        parameters: Text,
        success: Schema.String,
        handler: ({ a }) => Effect.succeed(a)
      })]
    })
    expectTypeOf(agent).toEqualTypeOf<Agent.Agent<{}, never, undefined>>()
    const program = Agent.run(agent, { input: "hi" }).pipe(
      Effect.provide(ScriptedChatModel.layer([ScriptedChatModel.text("ok")]))
    )
    expectTypeOf(program).toEqualTypeOf<Effect.Effect<AgentExit.AgentExit<{}, undefined>, AgentError.RunError, never>>()
  })

  it("an inline tool's service surfaces in Agent.run's requirements, from its handler and from its approval rule", () => {
    const byHandler = Agent.make({
      tools: [Tool.make("now", {
        description: "d",
        parameters: Text,
        success: Schema.String,
        handler: ({ a }) => Effect.map(Clock, (clock) => `${a} ${clock.now}`)
      })]
    })
    expectTypeOf(byHandler).toEqualTypeOf<Agent.Agent<{}, Clock, undefined>>()
    expectTypeOf(runNeeds(byHandler)).toEqualTypeOf<
      Effect.Effect<AgentExit.AgentExit<{}, undefined>, AgentError.RunError, Clock | ChatModel.ChatModel>
    >()
    const byApproval = Agent.make({
      tools: [Tool.make("pay", {
        description: "d",
        parameters: Schema.Struct({ amount: Schema.Number }),
        success: Schema.String,
        needsApproval: ({ amount }) => Effect.map(Ledger, (ledger) => amount > ledger.balance),
        handler: ({ amount }) => Effect.succeed(`paid ${amount}`)
      })]
    })
    expectTypeOf(byApproval).toEqualTypeOf<Agent.Agent<{}, Ledger, undefined>>()
  })

  it("a tool in a const: the same requirements as inline", () => {
    expectTypeOf(Agent.make({ tools: [constPure] })).toEqualTypeOf<Agent.Agent<{}, never, undefined>>()
    expectTypeOf(Agent.make({ tools: [constClock] })).toEqualTypeOf<Agent.Agent<{}, Clock, undefined>>()
  })

  it("a mixed list: the union of every tool's requirements, none widened to any", () => {
    const mixed = Agent.make({
      tools: [
        constPure,
        constClock,
        Tool.make("inline_pure", { description: "d", parameters: Text, success: Schema.String, handler: ({ a }) => Effect.succeed(a) }),
        Tool.make("inline_ledger", {
          description: "d",
          parameters: Schema.Struct({ n: Schema.Number }),
          success: Schema.Number,
          handler: ({ n }) => Effect.map(Ledger, (ledger) => ledger.balance + n)
        })
      ],
      output: Schema.Struct({ total: Schema.Number })
    })
    expectTypeOf(mixed).toEqualTypeOf<Agent.Agent<{}, Clock | Ledger, { readonly total: number }>>()
    expectTypeOf(runNeeds(mixed)).toEqualTypeOf<
      Effect.Effect<AgentExit.AgentExit<{}, { readonly total: number }>, AgentError.RunError, Clock | Ledger | ChatModel.ChatModel>
    >()
    const pure = Agent.make({
      tools: [
        constPure,
        Tool.make("inline_pure", { description: "d", parameters: Text, success: Schema.String, handler: () => Effect.succeed("") })
      ]
    })
    expectTypeOf(pure).toEqualTypeOf<Agent.Agent<{}, never, undefined>>()
  })

  it("a gate sees each inline tool's name and decoded arguments", () => {
    Agent.make({
      tools: [
        constPure,
        Tool.make("pay", {
          description: "d",
          parameters: Schema.Struct({ amount: Schema.Number }),
          success: Schema.String,
          handler: ({ amount }) => Effect.succeed(`paid ${amount}`)
        })
      ],
      gate: (input) => {
        expectTypeOf(input).toEqualTypeOf<Gate.Input<"const_pure", { readonly a: string }> | Gate.Input<"pay", { readonly amount: number }>>()
        return Gate.proceed()
      }
    })
  })

  it("inline tools keep their types in Toolkit.make, ToolCallingManager.call and as worker tools", () => {
    const toolkit = Toolkit.make(
      Tool.make("now", { description: "d", parameters: Text, success: Schema.String, handler: () => Effect.as(Clock, "") }),
      constPure
    )
    expectTypeOf(toolkit).toEqualTypeOf<Toolkit.Toolkit<Clock>>()
    const called = ToolCallingManager.call(
      Tool.make("count", {
        description: "d",
        parameters: Text,
        success: Schema.Number,
        handler: ({ a }) => Effect.map(Ledger, (ledger) => ledger.balance + a.length)
      }),
      { a: "x" }
    )
    expectTypeOf(called).toEqualTypeOf<Effect.Effect<number, ToolError.ToolFailure | Toolkit.InvalidToolkit, Ledger>>()
    const worker = Agent.make({
      tools: [Tool.make("crunch", {
        description: "d",
        parameters: Schema.Struct({ n: Schema.Number }),
        success: Schema.Number,
        isolation: "worker",
        module: new URL("./workers/crunch.worker.ts", import.meta.url)
      })]
    })
    expectTypeOf(worker).toEqualTypeOf<Agent.Agent<{}, WorkerPool.WorkerPool, undefined>>()
  })
})
