import { Deferred, Effect, Layer, Schema } from "effect"
import { ChatMemory, Tool, ToolError } from "../src/index.js"

/** Counts executions per tool name. */
export class Executions {
  readonly counts: Record<string, number> = {}
  readonly args: Array<{ readonly tool: string; readonly args: unknown }> = []
  record(tool: string, args: unknown) {
    this.counts[tool] = (this.counts[tool] ?? 0) + 1
    this.args.push({ tool, args })
  }
}

/** The arguments of a `transferTool` call. */
export interface Transfer {
  readonly to: string
  readonly amount: number
}

/** `transfer` `{ to, amount }`, which needs a person's approval unless told not to; each run of its handler is pushed to `ran` with its arguments. */
export const transferTool = (ran: Array<Transfer>, options: { readonly needsApproval?: boolean } = {}) =>
  Tool.make("transfer", {
    description: "Sends money",
    parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
    success: Schema.String,
    needsApproval: options.needsApproval ?? true,
    handler: (args) => Effect.sync(() => ran.push(args)).pipe(Effect.as(`sent ${args.amount} to ${args.to}`))
  })

export const weatherTool = (executions: Executions) =>
  Tool.make("get_weather", {
    description: "Current weather for a city",
    parameters: Schema.Struct({ city: Schema.String }),
    success: Schema.String,
    handler: (args) => Effect.sync(() => executions.record("get_weather", args)).pipe(Effect.as(`Sunny in ${args.city}`))
  })

export const emailTool = (executions: Executions) =>
  Tool.make("send_email", {
    description: "Sends an email",
    parameters: Schema.Struct({ to: Schema.String, body: Schema.String }),
    success: Schema.String,
    needsApproval: true,
    handler: (args) => Effect.sync(() => executions.record("send_email", args)).pipe(Effect.as(`sent to ${args.to}`))
  })

export const deleteTool = (executions: Executions) =>
  Tool.make("delete_file", {
    description: "Deletes a file",
    parameters: Schema.Struct({ path: Schema.String }),
    success: Schema.String,
    needsApproval: true,
    handler: (args) => Effect.sync(() => executions.record("delete_file", args)).pipe(Effect.as(`deleted ${args.path}`))
  })

/** Fails with an environment error until `fixed` is set. */
export const diskTool = (executions: Executions, environment: { fixed: boolean }) =>
  Tool.make("write_disk", {
    description: "Writes to disk",
    parameters: Schema.Struct({ data: Schema.String }),
    success: Schema.String,
    handler: (args) =>
      Effect.sync(() => executions.record("write_disk", args)).pipe(
        Effect.andThen(environment.fixed ? Effect.succeed(`wrote ${args.data}`) : Effect.fail(ToolError.environment("disk full")))
      )
  })

/** An isolated in-memory ChatMemory that records which conversations were created and removed. */
export const trackedMemory = () => {
  const inner = ChatMemory.makeInMemory()
  const created = new Set<string>()
  const removed = new Set<string>()
  const read = new Set<string>()
  const service: ChatMemory.ChatMemory.Service = {
    ...inner,
    get: (id) => Effect.sync(() => read.add(id)).pipe(Effect.andThen(inner.get(id))),
    append: (id, messages) => Effect.sync(() => created.add(id)).pipe(Effect.andThen(inner.append(id, messages))),
    replace: (id, messages) => Effect.sync(() => created.add(id)).pipe(Effect.andThen(inner.replace(id, messages))),
    remove: (id) => Effect.sync(() => removed.add(id)).pipe(Effect.andThen(inner.remove(id)))
  }
  return { service, created, removed, read, layer: Layer.succeed(ChatMemory.ChatMemory, service) }
}

/** The messages a model request ended with, summarised for assertions. */
export const lastToolResults = (messages: ReadonlyArray<{ readonly _tag: string }>) =>
  messages.filter((m): m is { _tag: "ToolResult"; callId: string; isError: boolean; content: unknown } & typeof m =>
    m._tag === "ToolResult"
  ).map((m) => `${m.callId}: ${m.isError ? "error " : ""}${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`)

/**
 * A tool that holds a resource until interrupted. `allStarted` completes once `expected`
 * calls hold theirs; `released` lists the call ids whose finalizer ran.
 */
export const holdingTool = (expected: number) =>
  Effect.map(Deferred.make<void>(), (allStarted) => {
    const released: Array<string> = []
    let started = 0
    const tool = Tool.make("hang", {
      description: "holds a connection until interrupted",
      parameters: Schema.Struct({}),
      success: Schema.String,
      handler: (_, { callId }) =>
        Effect.acquireRelease(
          Effect.suspend(() => ++started === expected ? Deferred.succeed(allStarted, undefined) : Effect.void),
          () => Effect.sync(() => released.push(callId))
        ).pipe(Effect.andThen(Effect.never), Effect.scoped)
    })
    return { tool, allStarted, released }
  })
