import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Context, Effect, Schema } from "effect"
import { Tool, type ToolCall, ToolCallingManager, Toolkit, type WorkerPool } from "../src/index.js"

class WeatherApi extends Context.Service<WeatherApi, { readonly current: (city: string) => string }>()("test/WeatherApi") {}

const getWeather = Tool.make("get_weather", {
  description: "Current weather for a city",
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.String,
  handler: ({ city }, { callId, toolName, attempt }) =>
    Effect.map(WeatherApi, (api) => `${api.current(city)} [${toolName} ${callId} #${attempt}]`)
})

describe("Tool", () => {
  it.effect("the handler's requirements flow into whatever runs it, and ctx carries the call id and tool name", () =>
    Effect.gen(function*() {
      const toolkit = Toolkit.make(getWeather)
      const batch = ToolCallingManager.executeBatch(toolkit, [{ id: "call_7", name: "get_weather", args: { city: "Oslo" } }])
      expectTypeOf(batch).toEqualTypeOf<Effect.Effect<Array<ToolCall.Result>, never, WeatherApi>>()
      const results = yield* batch.pipe(Effect.provideService(WeatherApi, { current: (city) => `Sunny in ${city}` }))
      expect(results).toEqual([
        { _tag: "Succeeded", callId: "call_7", toolName: "get_weather", value: "Sunny in Oslo [get_weather call_7 #1]" }
      ])
    }))

  it("the parameters' JSON Schema is what a provider is sent; an empty struct is an empty object", () => {
    expect(Tool.parametersJsonSchema(getWeather)).toEqual({
      type: "object",
      required: ["city"],
      properties: { city: { type: "string" } },
      additionalProperties: false
    })
    const ping = Tool.make("ping", {
      description: "ping",
      parameters: Schema.Struct({}),
      success: Schema.String,
      handler: () => Effect.succeed("pong")
    })
    expect(Tool.parametersJsonSchema(ping)).toEqual({
      type: "object",
      required: [],
      properties: {},
      additionalProperties: false
    })
  })

  it("make fills defaults that decide nothing: no timeout, no retry, not serial/needing approval/returnDirect", () => {
    expect([getWeather.timeout, getWeather.retry, getWeather.serial, getWeather.needsApproval, getWeather.returnDirect, getWeather.tags])
      .toEqual([undefined, undefined, false, false, false, []])
  })

  it("a worker tool requires the WorkerPool; its module and export are normalised", () => {
    const crunch = Tool.make("crunch", {
      description: "sums 0..n-1",
      parameters: Schema.Struct({ n: Schema.Number }),
      success: Schema.Number,
      isolation: "worker",
      module: "/srv/app/crunch.worker.js"
    })
    expectTypeOf(crunch).toEqualTypeOf<Tool.Tool<"crunch", { readonly n: number }, number, WorkerPool.WorkerPool>>()
    expect(crunch.isolation).toEqual({ _tag: "Worker", module: "file:///srv/app/crunch.worker.js", export: "default" })
    expect(getWeather.isolation).toEqual({ _tag: "InProcess" })
  })

  it("workerModule gives the worker module the caller's extension: .ts from source, .js once compiled", () => {
    expect(Tool.workerModule("file:///app/src/tools.ts", "./crunch.worker").href).toBe("file:///app/src/crunch.worker.ts")
    expect(Tool.workerModule("file:///app/dist/tools.js", "./crunch.worker").href).toBe("file:///app/dist/crunch.worker.js")
    expect(Tool.workerModule(new URL("file:///app/x.mts"), "../w/crunch").href).toBe("file:///w/crunch.mts")
  })
})
