/**
 * A start's run options on the wire: what `Agent.run` takes besides the input and the ids,
 * carried from the client to the runner. Slot values travel encoded with their slots' schemas;
 * the rest as a checkpoint stores them. `Agent.run` checks them on the runner (a refusal there
 * changes nothing); what cannot travel is refused on the client.
 */
import type { Agent } from "@agentfx/core"
import { Budget, Checkpoint, Json } from "@agentfx/core"
import { Effect, Schema } from "effect"
import { Refused } from "../RunOutcome.js"

/** The run options a start carries, each optional. */
export const fields = {
  state: Schema.optional(Schema.Record(Schema.String, Json.JsonValue)),
  budget: Schema.optional(Budget.Budget),
  settings: Schema.optional(Checkpoint.ModelSettings),
  toolChoice: Schema.optional(Schema.Union([Schema.Literal("auto"), Checkpoint.ToolChoice])),
  context: Schema.optional(Checkpoint.ContextPolicy)
}

/** The run options of a start, as `Agent.run` takes them. */
export type Options = Pick<Agent.RunOptions<Agent.Slots>, "state" | "budget" | "settings" | "toolChoice" | "context">

type Carried = Schema.Struct.Type<typeof fields>

const invalid = (runId: string, problem: string) =>
  new Refused({ runId, reason: "InvalidRunInput", message: `Invalid run input: ${problem}` })

/**
 * `state`'s slot values through their slots' schemas (`encode` or `decode`). Undeclared slots are
 * refused as `Agent.run` refuses them (naming every one); a value its slot's schema refuses, by slot.
 */
const slots = (agent: Agent.Any, runId: string, state: { readonly [slot: string]: unknown }, direction: "encode" | "decode") =>
  Effect.suspend(() => {
    const declared = agent.slots as Agent.Slots
    const given = Object.entries(state).filter(([, value]) => value !== undefined)
    const undeclared = given.filter(([name]) => !Object.hasOwn(declared, name)).map(([name]) => `"${name}"`)
    if (undeclared.length > 0) {
      return Effect.fail(invalid(runId, `state for undeclared slot(s) ${undeclared.join(", ")}; declared: ${Object.keys(declared).join(", ") || "none"}`))
    }
    return Effect.map(
      Effect.forEach(given, ([name, value]) => {
        const schema = declared[name]!.schema as Schema.Codec<unknown, unknown>
        return (direction === "encode" ? Schema.encodeUnknownEffect(schema)(value) : Schema.decodeUnknownEffect(schema)(value)).pipe(
          Effect.map((converted) => [name, converted] as const),
          Effect.mapError((error) => invalid(runId, `state slot "${name}": ${error.message}`))
        )
      }),
      Object.fromEntries
    )
  })

/** What a start carries of `options`, its slot values encoded. A context policy naming a summary model cannot travel: refused. */
export const encode = Effect.fnUntraced(function*(agent: Agent.Any, runId: string, options: Options): Effect.fn.Return<Carried, Refused> {
  const { budget, context, settings, state, toolChoice } = options
  if (context?._tag === "Summarize" && context.model !== undefined) {
    return yield* invalid(runId, "a cluster run's context policy cannot name a summary model (a service of the client); the runner's ChatModel writes the summary")
  }
  const carried: Carried = {
    ...(state === undefined ? {} : { state: (yield* slots(agent, runId, state, "encode")) as Carried["state"] }),
    ...(budget === undefined ? {} : { budget }),
    ...(settings === undefined ? {} : { settings }),
    ...(toolChoice === undefined ? {} : { toolChoice }),
    ...(context === undefined ? {} : { context })
  }
  return carried
})

/** The `Agent.run` options a start carried, its slot values decoded. */
export const decode = Effect.fnUntraced(function*(agent: Agent.Any, runId: string, carried: Carried): Effect.fn.Return<Options, Refused> {
  const { budget, context, settings, state, toolChoice } = carried
  return {
    ...(state === undefined ? {} : { state: yield* slots(agent, runId, state, "decode") }),
    ...(budget === undefined ? {} : { budget }),
    ...(settings === undefined ? {} : { settings }),
    ...(toolChoice === undefined ? {} : { toolChoice }),
    ...(context === undefined ? {} : { context })
  }
})
