/**
 * An `effect/ai` `Toolkit`, with the handlers its layer provides, as agentfx tools: the
 * tools you already wrote for `effect/ai` run in the agent loop unchanged.
 *
 * @since 0.1.0
 */
import { Tool, ToolError } from "@agentfx/core"
import type { Toolkit as AiToolkitModule } from "effect/ai"
import { AiError, Tool as AiTool } from "effect/ai"
import { Context, Data, Effect, Option, Result, Schema, Stream } from "effect"

/**
 * What an imported tool can be told beyond what the `effect/ai` tool says: the agentfx tool
 * options that are the caller's choice (`timeout`, `retry`, `needsApproval`, `serial`,
 * `returnDirect`, as `Tool.make` takes them). `needsApproval` given here beats the tool's own
 * `needsApproval` and the default derived from its annotations. Retry only tools that are safe to repeat.
 *
 * @example
 * ```ts
 * import type { AiToolkit } from "@agentfx/ai"
 *
 * const overrides: { readonly [tool: string]: AiToolkit.ToolOverride } = {
 *   GetWeather: { timeout: "2 seconds", retry: { times: 2 } },
 *   SendEmail: { needsApproval: true, serial: true }
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type ToolOverride = Tool.Overrides

/**
 * Everything {@link fromAiToolkit} accepts besides the toolkit.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Tools extends Record<string, AiTool.Any>> {
  /** Per tool, by name. */
  readonly overrides?: { readonly [Name in keyof Tools]?: ToolOverride }
  /**
   * The class of a handler's failure (a value of the tool's `failure` schema): `"semantic"`
   * unless this says otherwise. Not asked for agentfx `ToolError`s (kept as they are) nor
   * `AiError`s (network and HTTP 408/429/5xx are `transient`, the rest `semantic`).
   */
  readonly classify?: (failure: unknown, toolName: string) => ToolError.Reason
}

/**
 * The toolkit cannot be imported; `problems` names every offender.
 *
 * @example
 * ```ts
 * import { AiToolkit } from "@agentfx/ai"
 *
 * const explain = (error: unknown) => error instanceof AiToolkit.InvalidAiToolkit ? error.problems : []
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidAiToolkit extends Data.TaggedError("InvalidAiToolkit")<{
  readonly problems: ReadonlyArray<string>
}> {
  override get message(): string {
    return `Cannot import the effect/ai toolkit: ${this.problems.join("; ")}`
  }
}

/**
 * What the imported tools need: the handlers of the toolkit's layer (`toolkit.toLayer(…)`)
 * and the tools' own dependencies.
 *
 * @since 0.1.0
 * @category type-level
 */
export type Requirements<Tools extends Record<string, AiTool.Any>> =
  | AiTool.HandlersFor<Tools>
  | AiTool.HandlerServices<Tools[keyof Tools]>

const isTransientStatus = (status: number) => status === 408 || status === 429 || status >= 500

/** An `AiError`'s class: a transport failure, a rate limit, a server's failure or an HTTP 408, 429 or 5xx is `transient`, the rest `semantic`. */
const aiErrorClass = (error: AiError.AiError): ToolError.Reason => {
  const reason = error.reason
  const status = "http" in reason ? reason.http?.response?.status : undefined
  const transient = (reason._tag === "NetworkError" && reason.reason === "TransportError") ||
    reason._tag === "RateLimitError" ||
    reason._tag === "InternalProviderError" ||
    (status !== undefined && isTransientStatus(status))
  return transient ? "transient" : "semantic"
}

/** A failure's text: an error's own message, else its encoded form as JSON. */
const describeFailure = (tool: AiTool.Any, failure: unknown): string => {
  if (failure instanceof Error && failure.message.length > 0 && !failure.message.startsWith("{")) {
    return "_tag" in failure && typeof failure._tag === "string" ? `${failure._tag}: ${failure.message}` : failure.message
  }
  return Result.match(Schema.encodeUnknownResult(Schema.toCodecJson(tool.failureSchema as Schema.Codec<unknown, unknown>))(failure), {
    onFailure: () => String(failure),
    onSuccess: (encoded) => JSON.stringify(encoded)
  })
}

const toToolError = (
  tool: AiTool.Any,
  failure: unknown,
  classify: NonNullable<Options<any>["classify"]>
): ToolError.ToolError => {
  if (failure instanceof ToolError.ToolError) return failure
  if (AiError.isAiError(failure)) return new ToolError.ToolError({ reason: aiErrorClass(failure), message: failure.message })
  return new ToolError.ToolError({ reason: classify(failure, tool.name), message: describeFailure(tool, failure) })
}

const hintsOf = (tool: AiTool.Any) => {
  const readOnly = Context.get(tool.annotations, AiTool.Readonly)
  return {
    readOnly,
    destructive: !readOnly && Context.get(tool.annotations, AiTool.Destructive),
    idempotent: readOnly || Context.get(tool.annotations, AiTool.Idempotent),
    openWorld: Context.get(tool.annotations, AiTool.OpenWorld)
  }
}

/**
 * The approval rule of an imported tool: the tool's own `needsApproval` — a boolean, or a
 * function of the decoded parameters (given the call's id, and no messages: the gate sees no
 * transcript) — else the annotations' default (decision 042): approval unless it is read-only
 * or not destructive.
 */
const approvalOf = (tool: AiTool.Any, destructive: boolean): Tool.NeedsApproval<unknown> => {
  const own = tool.needsApproval
  if (own === undefined) return destructive
  if (typeof own === "boolean") return own
  return (args, context) =>
    Effect.suspend(() => {
      const verdict = own(args, { toolCallId: context.callId, messages: [] })
      return typeof verdict === "boolean" ? Effect.succeed(verdict) : verdict
    })
}

/**
 * The tools of an `effect/ai` `Toolkit` as agentfx tools, run by the handlers that the
 * toolkit's layer (`toolkit.toLayer(…)`) provides — provide that layer where the agent runs.
 *
 * Each tool keeps its name, description, `parameters` schema (the model gets its JSON
 * Schema; arguments it rejects are a `semantic` error, and the handler is not run) and
 * `success` schema (the result is encoded with it). A handler's failure becomes a
 * `ToolError`: an agentfx `ToolError` as it is; an `AiError` `transient` when it is a network
 * failure, a rate limit, a provider's failure or an HTTP 408, 429 or 5xx, else `semantic`; a
 * value of the tool's `failure` schema (with either `failureMode`) `semantic` — or what
 * `classify` says — with its message. A handler's preliminary results are not kept: its final
 * result is the call's.
 *
 * Approval is the tool's own `needsApproval` (`true`, `false`, or a function of the decoded
 * parameters, asked by the default gate), else follows the annotations, with `effect/ai`'s
 * defaults: a tool needs approval unless it is annotated `Readonly` or not `Destructive`; an
 * override's `needsApproval` beats both. Tags: `"effect-ai"`, and `"readOnly"`,
 * `"destructive"`, `"idempotent"`, `"openWorld"` as the annotations say. Timeouts, retries,
 * `serial` and `returnDirect` come only from `overrides`. The timeout interrupts the handler's
 * fiber (see `docs/timeouts.md` for what that stops).
 *
 * @throws InvalidAiToolkit when an override names a tool the toolkit does not have, or the
 * toolkit holds provider-defined tools (they run at the model provider, not here).
 *
 * @example
 * ```ts
 * import { Tool as AiTool, Toolkit as AiToolkitModule } from "effect/ai"
 * import { Effect, Schema } from "effect"
 * import { Agent } from "@agentfx/core"
 * import { AiToolkit } from "@agentfx/ai"
 *
 * const GetWeather = AiTool.make("GetWeather", {
 *   description: "Current weather for a city",
 *   parameters: Schema.Struct({ city: Schema.String }),
 *   success: Schema.Struct({ city: Schema.String, tempC: Schema.Finite })
 * }).annotate(AiTool.Readonly, true)
 * const SendEmail = AiTool.make("SendEmail", {
 *   description: "Sends an email",
 *   parameters: Schema.Struct({ to: Schema.String, body: Schema.String }),
 *   needsApproval: ({ to }) => !to.endsWith("@example.com") // mail outside the company waits for a person
 * })
 * const Tools = AiToolkitModule.make(GetWeather, SendEmail)
 * const ToolsLive = Tools.toLayer({
 *   GetWeather: ({ city }) => Effect.succeed({ city, tempC: 21 }),
 *   SendEmail: () => Effect.void
 * })
 *
 * const agent = Agent.make({ tools: AiToolkit.fromAiToolkit(Tools, { overrides: { GetWeather: { timeout: "2 seconds" } } }) })
 * const program = Agent.run(agent, { input: "Weather in Oslo?" }).pipe(Effect.provide(ToolsLive))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromAiToolkit = <Tools extends Record<string, AiTool.Any>>(
  toolkit: AiToolkitModule.Toolkit<Tools>,
  options?: Options<Tools>
): ReadonlyArray<Tool.Tool<string, any, any, Requirements<Tools>>> => {
  const overrides: { readonly [name: string]: ToolOverride | undefined } = options?.overrides ?? {}
  const classify = options?.classify ?? (() => "semantic" as const)
  const problems = [
    ...Object.keys(overrides).filter((name) => !(name in toolkit.tools)).map((name) =>
      `overrides name "${name}", which the toolkit does not have (it has: ${Object.keys(toolkit.tools).join(", ")})`
    ),
    ...Object.values(toolkit.tools).filter(AiTool.isProviderDefined).map((tool) =>
      `tool "${tool.name}" is provider-defined: it runs at the model provider, not in the agent`
    )
  ]
  if (problems.length > 0) throw new InvalidAiToolkit({ problems })
  return Object.values(toolkit.tools).map((tool) => {
    const hints = hintsOf(tool)
    const override = overrides[tool.name] ?? {}
    const parameters = tool.parametersSchema as Schema.Codec<unknown, unknown>
    // `handle` decodes the parameters itself, from JSON: it is given them encoded so
    const encodeParameters = Schema.encodeEffect(Schema.toCodecJson(parameters))
    const description = AiTool.getDescription(tool) ?? Option.getOrElse(Context.getOption(tool.annotations, AiTool.Title), () => "")
    return Tool.make(tool.name, {
      description,
      parameters,
      success: tool.successSchema as Schema.Codec<unknown, unknown>,
      tags: ["effect-ai", ...(["readOnly", "destructive", "idempotent", "openWorld"] as const).filter((hint) => hints[hint])],
      needsApproval: approvalOf(tool, hints.destructive),
      ...Tool.overridesOf(override),
      handler: (args) =>
        Effect.gen(function*() {
          const withHandler = yield* toolkit
          const encoded = yield* Effect.orDie(encodeParameters(args))
          const results = yield* withHandler.handle(tool.name, encoded as never)
          const final = yield* Stream.runLast(Stream.filter(results, (result) => !result.preliminary))
          if (Option.isNone(final)) return yield* Effect.die(new Error(`the handler of "${tool.name}" ended without a result`))
          return final.value.isFailure ? yield* Effect.fail(final.value.result) : final.value.result
        }).pipe(Effect.mapError((failure) => toToolError(tool, failure, classify)))
    }) as Tool.Tool<string, any, any, Requirements<Tools>>
  })
}
