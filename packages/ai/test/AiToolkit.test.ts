import type { ToolCall } from "@agentfx/core"
import { Agent, Decision, ScriptedChatModel, ToolCallingManager, ToolError, Toolkit } from "@agentfx/core"
import { AiError, Tool as AiTool, Toolkit as AiToolkitModule } from "effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { AiToolkit } from "../src/index.js"

class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { message: Schema.String }) {}
class Quota extends Schema.TaggedError<Quota>()("Quota", { remaining: Schema.Number }) {}

class Clock extends Context.Service<Clock, { readonly today: Date }>()("test/Clock") {}

const GetWeather = AiTool.make("GetWeather", {
  description: "Current weather for a city",
  parameters: Schema.Struct({ city: Schema.String.annotate({ description: "City name" }) }),
  success: Schema.Struct({ city: Schema.String, tempC: Schema.Finite }),
  failure: NotFound,
  failureMode: "return"
}).annotate(AiTool.Readonly, true).annotate(AiTool.OpenWorld, false)

const DaysUntil = AiTool.make("DaysUntil", {
  description: "Days from today until a date",
  parameters: Schema.Struct({ date: Schema.Date }),
  success: Schema.Struct({ until: Schema.DateFromString, days: Schema.Finite }),
  dependencies: [Clock]
}).annotate(AiTool.Destructive, false)

const Charge = AiTool.make("Charge", {
  description: "Charges a card",
  parameters: Schema.Struct({ amount: Schema.Finite }),
  success: Schema.String,
  failure: Schema.Union([Quota, ToolError.ToolError])
})

const Forecast = AiTool.make("Forecast", {
  description: "Asks a remote service",
  parameters: Schema.Struct({ outcome: Schema.Literals(["network", "429", "503", "400", "malformed"]) }),
  success: Schema.String,
  failure: AiError.AiError
}).annotate(AiTool.Readonly, true)

const Tools = AiToolkitModule.make(GetWeather, DaysUntil, Charge, Forecast)

const aiFailure = (outcome: string): AiError.AiError =>
  AiError.make({
    module: "Weather",
    method: "forecast",
    reason: outcome === "network"
      ? new AiError.NetworkError({ reason: "TransportError", method: "POST", url: "https://weather.example/v1", description: "connection refused" })
      : outcome === "malformed"
      ? new AiError.InvalidOutputError({ description: "not JSON" })
      : AiError.reasonFromHttpStatus({ status: Number(outcome), http: { response: { status: Number(outcome), headers: {} } } })
  })

let charges = 0

const ToolsLive = Tools.toLayer({
  GetWeather: ({ city }) => city === "Atlantis" ? Effect.fail(new NotFound({ message: `no city named ${city}` })) : Effect.succeed({ city, tempC: 21 }),
  DaysUntil: ({ date }) =>
    Effect.map(Clock, ({ today }) => ({ until: date, days: Math.round((date.getTime() - today.getTime()) / 86_400_000) })),
  Charge: ({ amount }) =>
    Effect.suspend((): Effect.Effect<string, Quota | ToolError.ToolError> => {
      charges += 1
      if (amount > 1000) return Effect.fail(new Quota({ remaining: 1000 }))
      if (amount < 0) return Effect.fail(ToolError.environment("the payment service has no credentials"))
      return amount === 0 ? Effect.never : Effect.succeed(`charged ${amount}`)
    }),
  Forecast: ({ outcome }) => Effect.fail(aiFailure(outcome))
})

const Live = Layer.merge(ToolsLive, Layer.succeed(Clock, { today: new Date("2026-01-01T00:00:00.000Z") }))

const summary = (results: ReadonlyArray<ToolCall.Result>) =>
  results.map((result) =>
    result._tag === "Succeeded"
      ? JSON.stringify(result.value)
      : result._tag === "Failed"
      ? `${result.error._tag}(${result.error.reason}): ${result.error.message}`
      : result._tag
  )

const run = (
  tools: ReturnType<typeof AiToolkit.fromAiToolkit<typeof Tools.tools>>,
  calls: ReadonlyArray<readonly [string, ToolCall.ToolCall["args"]]>
) =>
  Effect.gen(function*() {
    const toolkit = Toolkit.make(...tools)
    return summary(yield* ToolCallingManager.executeBatch(toolkit, calls.map(([name, args], i) => ({ id: `c${i + 1}`, name, args }))))
  }).pipe(Effect.provide(Live))

describe("AiToolkit.fromAiToolkit", () => {
  it.effect("keeps names, descriptions and parameter schemas; annotations decide approval and tags", () =>
    Effect.gen(function*() {
      const toolkit = Toolkit.make(...AiToolkit.fromAiToolkit(Tools))
      const rows = [...toolkit.entries.values()].map((entry) => [entry.name, entry.description, entry.needsApproval, entry.tags])
      expect(rows).toEqual([
        ["GetWeather", "Current weather for a city", false, ["effect-ai", "readOnly", "idempotent"]],
        ["DaysUntil", "Days from today until a date", false, ["effect-ai", "openWorld"]],
        ["Charge", "Charges a card", true, ["effect-ai", "destructive", "openWorld"]],
        ["Forecast", "Asks a remote service", false, ["effect-ai", "readOnly", "idempotent", "openWorld"]]
      ])
      expect(toolkit.entries.get("GetWeather")!.parametersJsonSchema).toEqual(
        Schema.toJsonSchemaDocument(GetWeather.parametersSchema, { onExcessProperty: "error" }).schema
      )
      expect(toolkit.entries.get("GetWeather")!.parametersJsonSchema).toMatchObject({
        type: "object",
        required: ["city"],
        properties: { city: { type: "string", description: "City name" } }
      })
    }))

  it.effect("runs the layer's handlers: arguments decoded, results encoded with the tool's schemas, dependencies provided", () =>
    Effect.gen(function*() {
      expect(yield* run(AiToolkit.fromAiToolkit(Tools), [
        ["GetWeather", { city: "Oslo" }],
        ["DaysUntil", { date: "2026-01-31T00:00:00.000Z" }],
        ["Charge", { amount: 20 }]
      ])).toEqual([
        `{"city":"Oslo","tempC":21}`,
        `{"until":"2026-01-31T00:00:00.000Z","days":30}`,
        `"charged 20"`
      ])
    }))

  it.effect("arguments the schema rejects are a semantic error, and the handler does not run", () =>
    Effect.gen(function*() {
      const before = charges
      expect(yield* run(AiToolkit.fromAiToolkit(Tools), [["Charge", { amount: "20" }], ["DaysUntil", { date: "someday" }]])).toEqual([
        `ToolError(semantic): Invalid arguments for tool "Charge": amount: Expected number, got "20"`,
        `ToolError(semantic): Invalid arguments for tool "DaysUntil": date: Expected a valid Date, got "someday"`
      ])
      expect(charges).toBe(before)
    }))

  it.effect("failures: the failure schema's values are semantic (either failure mode), an agentfx ToolError is kept", () =>
    Effect.gen(function*() {
      expect(yield* run(AiToolkit.fromAiToolkit(Tools), [
        ["GetWeather", { city: "Atlantis" }],
        ["Charge", { amount: 5000 }],
        ["Charge", { amount: -1 }]
      ])).toEqual([
        "ToolError(semantic): NotFound: no city named Atlantis",
        `ToolError(semantic): {"_tag":"Quota","remaining":1000}`,
        "ToolError(environment): the payment service has no credentials"
      ])
    }))

  it.effect("an AiError is transient for a network failure or HTTP 408, 429, 5xx, else semantic", () =>
    Effect.gen(function*() {
      const results = yield* run(AiToolkit.fromAiToolkit(Tools), ["network", "429", "503", "400", "malformed"].map((outcome) => ["Forecast", { outcome }] as const))
      expect(results.map((result) => result.slice(0, result.indexOf(":")))).toEqual([
        "ToolError(transient)",
        "ToolError(transient)",
        "ToolError(transient)",
        "ToolError(semantic)",
        "ToolError(semantic)"
      ])
      expect(results[0]).toBe(`ToolError(transient): ${aiFailure("network").message}`)
      expect(results[4]).toBe("ToolError(semantic): Weather.forecast: Invalid output: not JSON")
    }))

  it.effect("classify decides a failure's class, and a transient one is retried as the override says", () =>
    Effect.gen(function*() {
      const before = charges
      const tools = AiToolkit.fromAiToolkit(Tools, {
        classify: (failure, toolName) => toolName === "Charge" && failure instanceof Quota ? "transient" : "semantic",
        overrides: { Charge: { retry: { times: 2 } } }
      })
      expect(yield* run(tools, [["Charge", { amount: 5000 }]])).toEqual([`ToolError(transient): {"_tag":"Quota","remaining":1000}`])
      expect(charges - before).toBe(3)
    }))

  it.effect("overrides: the timeout interrupts the handler, needsApproval beats the annotations, serial and returnDirect are set", () =>
    Effect.gen(function*() {
      const tools = AiToolkit.fromAiToolkit(Tools, {
        overrides: { Charge: { timeout: "1 second", needsApproval: false, serial: true, returnDirect: true } }
      })
      const toolkit = Toolkit.make(...tools)
      const charge = toolkit.entries.get("Charge")!
      expect([charge.needsApproval, charge.serial, charge.returnDirect]).toEqual([false, true, true])
      const fiber = yield* Effect.forkChild(run(tools, [["Charge", { amount: 0 }]]))
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(fiber)).toEqual([`ToolTimeout(transient): Tool "Charge" timed out after 1s`])
    }))

  it.effect("an agent pauses for the destructive tool, and runs it once approved", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [...AiToolkit.fromAiToolkit(Tools)] })
      const exit = yield* Agent.run(agent, { input: "Charge 20" })
      expect(exit._tag === "Paused" && exit.pending.map((p) => p.call.name)).toEqual(["Charge"])
      if (exit._tag !== "Paused") return
      const done = yield* Agent.resume(agent, exit.checkpoint, Decision.approveAll())
      expect(done._tag === "Completed" && done.text).toBe("done")
    }).pipe(
      Effect.provide(Live),
      Effect.provide(ScriptedChatModel.layer([
        ScriptedChatModel.toolCalls({ id: "call_1", name: "Charge", args: { amount: 20 } }),
        ScriptedChatModel.text("done")
      ]))
    ))

  it.effect("the tool's own needsApproval decides: a boolean, or a function of the decoded parameters; it beats the annotations, an override beats it", () =>
    Effect.gen(function*() {
      const Refund = AiTool.make("Refund", {
        description: "Refunds a charge",
        parameters: Schema.Struct({ amount: Schema.Finite }),
        success: Schema.String,
        needsApproval: ({ amount }) => amount > 100
      }).annotate(AiTool.Readonly, true)
      const Archive = AiTool.make("Archive", { description: "Archives the order", success: Schema.String, needsApproval: false })
      const Kit = AiToolkitModule.make(Refund, Archive)
      const KitLive = Kit.toLayer({ Refund: ({ amount }) => Effect.succeed(`refunded ${amount}`), Archive: () => Effect.succeed("archived") })
      const tools = AiToolkit.fromAiToolkit(Kit)
      expect([...Toolkit.make(...tools).entries.values()].map((entry) => [entry.name, typeof entry.needsApproval])).toEqual([
        ["Refund", "function"],
        ["Archive", "boolean"]
      ])
      const exit = yield* Agent.run(Agent.make({ tools }), { input: "Refund both" }).pipe(
        Effect.provide(KitLive),
        Effect.provide(ScriptedChatModel.layer([
          ScriptedChatModel.toolCalls(
            { id: "small", name: "Refund", args: { amount: 20 } },
            { id: "large", name: "Refund", args: { amount: 500 } },
            { id: "archive", name: "Archive", args: {} }
          ),
          ScriptedChatModel.text("done")
        ]))
      )
      expect(exit._tag === "Paused" && exit.pending.map((pending) => pending.call.id)).toEqual(["large"])
      const overridden = Toolkit.make(...AiToolkit.fromAiToolkit(Kit, { overrides: { Refund: { needsApproval: false } } }))
      expect(overridden.entries.get("Refund")!.needsApproval).toBe(false)
    }))

  it("refuses overrides of tools it does not have, and provider-defined tools", () => {
    const WebSearch = AiTool.providerDefined({
      id: "openai.web_search",
      customName: "WebSearch",
      providerName: "web_search"
    })()
    const attempt = () =>
      AiToolkit.fromAiToolkit(AiToolkitModule.make(GetWeather, WebSearch), { overrides: { GetWether: {} } as never })
    expect(attempt).toThrow(AiToolkit.InvalidAiToolkit)
    expect(attempt).toThrow(
      `Cannot import the effect/ai toolkit: overrides name "GetWether", which the toolkit does not have (it has: GetWeather, WebSearch); tool "WebSearch" is provider-defined: it runs at the model provider, not in the agent`
    )
  })
})
