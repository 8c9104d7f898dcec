import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema, Tracer } from "effect"
import { Agent, ChatModel, ContextWindow, ScriptedChatModel, Tool } from "../src/index.js"
import { Executions, weatherTool } from "./agentFixtures.js"

/** A span event as the tracer received it. */
interface SpanEvent {
  readonly span: string
  readonly name: string
  readonly attributes: Record<string, unknown> | undefined
}

/** A tracer that records the spans Effect's own tracer would make, and their events. */
const recordingTracer = () => {
  const spans: Array<Tracer.Span> = []
  const events: Array<SpanEvent> = []
  const native = Tracer.make({
    span: ({ annotations, kind, links, name, parent, startTime }) => {
      const attributes = new Map<string, unknown>()
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: `span-${spans.length + 1}`,
        traceId: "trace-1",
        parent,
        annotations,
        status: { _tag: "Started", startTime },
        attributes,
        links,
        sampled: true,
        kind,
        end: () => undefined,
        attribute: (key, value) => void attributes.set(key, value),
        event: (eventName, _startTime, eventAttributes) => void events.push({ span: name, name: eventName, attributes: eventAttributes }),
        addLinks: () => undefined
      }
      spans.push(span)
      return span
    }
  })
  return { spans, events, tracer: native }
}

const tree = (spans: ReadonlyArray<Tracer.Span>) => {
  const children = (parentId: string | undefined): Array<unknown> =>
    spans
      .filter((s) => Option.match(s.parent, { onNone: () => undefined, onSome: (p) => p.spanId }) === parentId)
      .map((s) => ({ [s.name]: children(s.spanId) }))
  return children(undefined)
}

describe("Tracing", () => {
  it.effect("each run, iteration, model call and tool call runs in a span, parented as the loop nests them, with GenAI attributes", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recordingTracer()
      const agent = Agent.make({ name: "weather", tools: [weatherTool(new Executions())], settings: { temperature: 0.2, maxOutputTokens: 300 } })
      yield* Agent.run(agent, { input: "Oslo?", conversationId: "c-trace" }).pipe(Effect.withTracer(tracer))
      expect(tree(spans)).toEqual([{
        "agentfx.run": [
          { "agentfx.iteration": [{ "agentfx.model": [] }, { "agentfx.tool": [] }] },
          { "agentfx.iteration": [{ "agentfx.model": [] }] }
        ]
      }])
      const attributes = (name: string) => Object.fromEntries(spans.find((s) => s.name === name)!.attributes)
      expect(attributes("agentfx.run")).toMatchObject({
        "agentfx.agent": "weather",
        "agentfx.conversation.id": "c-trace",
        "agentfx.run.kind": "run",
        "agentfx.run.outcome": "Completed",
        "agentfx.run.iterations": 2,
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather",
        "gen_ai.conversation.id": "c-trace"
      })
      expect(attributes("agentfx.tool")).toEqual({
        "agentfx.tool.name": "get_weather",
        "agentfx.tool.call_id": "w1",
        "agentfx.tool.outcome": "success",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "w1"
      })
      expect(attributes("agentfx.model")).toEqual({
        "agentfx.iteration": 1,
        "agentfx.model.purpose": "answer",
        "agentfx.model.finish_reason": "tool-calls",
        "agentfx.model.tool_calls": 1,
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "scripted",
        "gen_ai.request.temperature": 0.2,
        "gen_ai.request.max_tokens": 300,
        "gen_ai.response.finish_reasons": ["tool-calls"],
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 5
      })
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      {
        toolCalls: [{ id: "w1", name: "get_weather", args: { city: "Oslo" } }],
        usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17 }
      },
      ScriptedChatModel.text("Sunny")
    ]))))

  it.effect("a compaction runs in an agentfx.context span of its iteration, its summary call in an agentfx.model span of purpose compaction", () => {
    let calls = 0
    return Effect.gen(function*() {
      const { spans, tracer } = recordingTracer()
      const big = Tool.make("big", {
        description: "Answers at length",
        parameters: Schema.Struct({}),
        success: Schema.String,
        handler: () => Effect.succeed("x".repeat(1_600))
      })
      const agent = Agent.make({ tools: [big], context: ContextWindow.summarize({ maxTokens: 700, keepLast: 0 }) })
      yield* Agent.run(agent, { input: "go" }).pipe(Effect.withTracer(tracer))
      expect(tree(spans)).toEqual([{
        "agentfx.run": [
          { "agentfx.iteration": [{ "agentfx.model": [] }, { "agentfx.tool": [] }] },
          { "agentfx.iteration": [{ "agentfx.model": [] }, { "agentfx.tool": [] }] },
          { "agentfx.iteration": [{ "agentfx.context": [{ "agentfx.model": [] }] }, { "agentfx.model": [] }, { "agentfx.tool": [] }] },
          { "agentfx.iteration": [{ "agentfx.context": [{ "agentfx.model": [] }] }, { "agentfx.model": [] }] }
        ]
      }])
      const context = Object.fromEntries(spans.find((s) => s.name === "agentfx.context")!.attributes)
      expect(context).toMatchObject({ "agentfx.context.policy": "summarize", "agentfx.context.max_tokens": 700, "agentfx.context.replaces": 3 })
      expect(context["agentfx.context.tokens_before"]).toBeGreaterThan(700)
      expect(context["agentfx.context.tokens_after"]).toBeLessThanOrEqual(700)
      const summary = spans.find((s) => s.name === "agentfx.model" && s.attributes.get("agentfx.model.purpose") === "compaction")!
      expect(Object.fromEntries(summary.attributes)).toMatchObject({ "gen_ai.request.model": "scripted", "gen_ai.operation.name": "chat" })
    }).pipe(Effect.provide(ScriptedChatModel.layer((request) =>
      request.system === ContextWindow.defaultInstructions
        ? ScriptedChatModel.text("Big answers came back.")
        : ++calls <= 3
        ? ScriptedChatModel.toolCalls({ name: "big", args: {} })
        : ScriptedChatModel.text("done")
    )))
  })

  it.effect("a tool that dies: the model reads the fixed message, the tool call's span gets the full cause (message and stack)", () =>
    Effect.gen(function*() {
      const { events, spans, tracer } = recordingTracer()
      const dies = Tool.make("dies", {
        description: "dies with a secret in its message",
        parameters: Schema.Struct({}),
        success: Schema.String,
        handler: () => Effect.die(new RangeError("cannot open /home/ops/.secrets (password=hunter2)"))
      })
      const agent = Agent.make({ tools: [dies] })
      const exit = yield* Agent.run(agent, { input: "go" }).pipe(Effect.withTracer(tracer))
      expect(exit._tag).toBe("Completed")
      const toolSpan = spans.find((span) => span.name === "agentfx.tool")!
      expect(toolSpan.attributes.get("agentfx.tool.outcome")).toBe("ToolError")
      const logged = events.filter((event) => event.span === "agentfx.tool")
      expect(logged.map((event) => [event.name, event.attributes?.["effect.logLevel"]])).toEqual([[`Tool "dies" died`, "ERROR"]])
      expect(String(logged[0]!.attributes?.["effect.cause"])).toMatch(
        /^RangeError: cannot open \/home\/ops\/\.secrets \(password=hunter2\)\n\s+at .*Tracing\.test\.ts:\d+/
      )
    }).pipe(Effect.provide(ScriptedChatModel.layer((request) => {
      const last = request.messages.at(-1)!
      if (last._tag === "User") return ScriptedChatModel.toolCalls({ name: "dies", args: {} })
      // the model reads the fixed message only
      expect(last._tag === "ToolResult" && last.content).toBe(`semantic error: Tool "dies" failed unexpectedly`)
      return ScriptedChatModel.text("done")
    }))))

  it.effect("a model call's span names the provider and its own finish reasons when the model's response has them", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recordingTracer()
      yield* Agent.run(Agent.make({}), { input: "Hi" }).pipe(Effect.withTracer(tracer))
      expect(Object.fromEntries(spans.find((s) => s.name === "agentfx.model")!.attributes)).toMatchObject({
        "agentfx.model.finish_reason": "stop",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.response.finish_reasons": ["end_turn"]
      })
    }).pipe(Effect.provide(Layer.succeed(
      ChatModel.ChatModel,
      ChatModel.fromGenerate(() =>
        Effect.succeed({
          text: "Hello",
          toolCalls: [],
          finishReason: "stop",
          usage: ChatModel.emptyUsage,
          provider: "anthropic",
          providerFinishReasons: ["end_turn"]
        })
      )
    ))))

  it.effect("without a tracer installed no span is made: a tool sees no agentfx span (with one, it does)", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const probe = Tool.make("probe", {
        description: "reports the span it runs in",
        parameters: Schema.Struct({}),
        success: Schema.String,
        handler: () =>
          Effect.currentSpan.pipe(
            Effect.map((span) => span.name),
            Effect.orElseSucceed(() => "no span"),
            Effect.tap((name) => Effect.sync(() => seen.push(name)))
          )
      })
      const agent = Agent.make({ tools: [probe] })
      yield* Agent.run(agent, { input: "untraced" })
      yield* Agent.run(agent, { input: "traced" }).pipe(Effect.withTracer(recordingTracer().tracer))
      expect(seen).toEqual(["no span", "agentfx.tool"])
    }).pipe(Effect.provide(ScriptedChatModel.layer((request) =>
      request.messages.at(-1)!._tag === "User"
        ? ScriptedChatModel.toolCalls({ name: "probe", args: {} })
        : ScriptedChatModel.text("done")
    ))))
})
